import { randomBytes } from 'node:crypto';
import type { KubeApis } from './apis.js';

/** The reference's Event reasons on pods. */
export const EVENT_REASONS = {
  /** A branch ENI could not be given to the pod (the message starts with the `SgpError` code). */
  allocationFailed: 'BranchAllocationFailed',
  /** The pod got its branch ENI and annotation. */
  allocated: 'ResourceAllocated',
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
  const at = new Date(now);
  await api.core.createNamespacedEvent({
    namespace: event.pod.namespace,
    body: {
      metadata: {
        name: `${event.pod.name}.${randomBytes(8).toString('hex')}`,
        namespace: event.pod.namespace,
      },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: event.pod.name,
        namespace: event.pod.namespace,
        uid: event.pod.uid,
      },
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
