import { randomBytes } from 'node:crypto';
import type { KubeApis } from './apis.js';

/** The reference's Event reasons (on pods, and the cooldown's on nodes). */
export const EVENT_REASONS = {
  /** A branch ENI could not be given to the pod (the message starts with the `SgpError` code). */
  allocationFailed: 'BranchAllocationFailed',
  /** The pod got its branch ENI and annotation. */
  allocated: 'ResourceAllocated',
  /**
   * A SecurityGroupPolicy selects the pod but it does not request `vpc.amazonaws.com/pod-eni` (admitted while the
   * pod webhook was unavailable): it gets no branch ENI (Warning).
   */
  notRequested: 'BranchENINotRequested',
  /**
   * No SecurityGroupPolicy selects a pod that requests `vpc.amazonaws.com/pod-eni` (one deleted or changed after
   * the pod was admitted): its branch ENI gets the instance's security groups (Warning, as the reference).
   */
  instanceGroups: 'SecurityGroupRequested',
  /** On every node: the amazon-vpc-cni ConfigMap changed the branch ENI cooldown. */
  cooldownUpdated: 'BranchENICoolDownPeriodUpdated',
} as const;

/** The component name Events carry in `source` / `reportingComponent`. */
export const EVENT_COMPONENT = 'vpc-resource-controller';

/** An Event about a pod. */
export interface PodEvent {
  /** The pod. */
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  /** `Normal` or `Warning`. */
  readonly type: 'Normal' | 'Warning';
  /** A reason from {@link EVENT_REASONS}. */
  readonly reason: string;
  /** One line. */
  readonly message: string;
}

/** Creates a core/v1 Event on a pod (what `kubectl describe pod` shows), at `now` (ms). */
export async function createPodEvent(api: KubeApis, event: PodEvent, now: number): Promise<void> {
  await createEvent(
    api,
    event.pod.namespace,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      name: event.pod.name,
      namespace: event.pod.namespace,
      uid: event.pod.uid,
    },
    event,
    now,
  );
}

/**
 * Creates a core/v1 Event on a node (in `default`, where Events about cluster-scoped objects go; what `kubectl
 * describe node` shows), at `now` (ms).
 */
export async function createNodeEvent(
  api: KubeApis,
  node: { readonly name: string; readonly uid?: string | undefined },
  event: Omit<PodEvent, 'pod'>,
  now: number,
): Promise<void> {
  await createEvent(
    api,
    'default',
    { apiVersion: 'v1', kind: 'Node', name: node.name, ...(node.uid ? { uid: node.uid } : {}) },
    event,
    now,
  );
}

async function createEvent(
  api: KubeApis,
  namespace: string,
  involvedObject: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string },
  event: Omit<PodEvent, 'pod'>,
  now: number,
): Promise<void> {
  const at = new Date(now);
  await api.core.createNamespacedEvent({
    namespace,
    body: {
      metadata: { name: `${involvedObject.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject,
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: EVENT_COMPONENT },
      reportingComponent: EVENT_COMPONENT,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    },
  });
}
