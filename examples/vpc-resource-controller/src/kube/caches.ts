import {
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  type ObjectCache,
  type V1ConfigMap,
  type V1Node,
  type V1Pod,
  type V1ServiceAccount,
  Watch,
} from '@kubernetes/client-node';
import { type BackoffPolicy, backoffDelay, type RandomSource } from '@vpc-cni-kit/eni-manager';
import type { KubeApis } from './apis.js';
import { describeKubeError, httpStatus } from './apis.js';
import { VPC_CNI_CONFIG_NAME, VPC_CNI_CONFIG_NAMESPACE } from './vpc-cni-config.js';

/** `vpcresources.k8s.aws`: the group of SecurityGroupPolicy and CNINode. */
export const VPC_RESOURCES_GROUP = 'vpcresources.k8s.aws';

/** A custom object as listed (SecurityGroupPolicy, CNINode). */
export interface CustomObject extends KubernetesObject {
  /** Its spec, unvalidated. */
  readonly spec?: Record<string, unknown>;
}

/** The cluster objects the controller watches, each kept current by an informer. */
export interface ClusterCaches {
  /** Pods of every namespace. */
  readonly pods: ObjectCache<V1Pod>;
  /** Nodes. */
  readonly nodes: ObjectCache<V1Node>;
  /** ServiceAccounts of every namespace (their labels feed `serviceAccountSelector`). */
  readonly serviceAccounts: ObjectCache<V1ServiceAccount>;
  /** CNINodes (`vpcresources.k8s.aws/v1alpha1`). */
  readonly cniNodes: ObjectCache<CustomObject>;
  /** SecurityGroupPolicies (`vpcresources.k8s.aws/v1beta1`) of every namespace. */
  readonly policies: ObjectCache<CustomObject>;
  /**
   * The `kube-system/amazon-vpc-cni` ConfigMap, alone (watched by name, so RBAC can grant just that one). Not
   * part of {@link synced}: without it (absent, or not yet readable) the flag's settings apply.
   */
  readonly vpcCniConfig: ObjectCache<V1ConfigMap>;
  /**
   * Whether every informer has listed at least once. Until then a cache may be empty only because its list
   * failed, and acting on it would be acting on a cluster without pods: the controller waits.
   */
  synced(): boolean;
  /** Stops every informer. */
  stop(): Promise<void>;
}

/** Options of {@link startCaches}. */
export interface StartCachesOptions {
  /** Called after any add, update or delete (the controller coalesces these into one reconcile). */
  readonly onChange: (kind: string, obj: KubernetesObject, verb: 'add' | 'update' | 'delete') => void;
  /** Called when an informer's list or watch fails; it restarts after `failure.retryInMs`. */
  readonly onError: (kind: string, problem: string, failure: InformerFailure) => void;
  /**
   * How an informer waits before restarting after failures in a row; a list that succeeds starts over. An optional
   * informer (one object watched by name) waits up to a minute. @defaultValue {@link INFORMER_RESTART_BACKOFF}
   */
  readonly restartBackoff?: BackoffPolicy | undefined;
  /** Jitter source for the backoff. @defaultValue `Math.random` */
  readonly random?: RandomSource | undefined;
}

/** What {@link StartCachesOptions.onError} is told besides the problem. */
export interface InformerFailure {
  /** The HTTP status of the failed list or watch (0: no answer). */
  readonly status: number;
  /** For a custom resource, its CRD's name (`cninodes.vpcresources.k8s.aws`): a 404 means it is not installed. */
  readonly crd: string | undefined;
  /** When the informer tries again. */
  readonly retryInMs: number;
}

/**
 * Restart policy of an informer after failures in a row: 1 s doubling to 30 s, jitter 0.2 (aws-node's API
 * reconnect shape, with a longer ceiling: a missing CRD or RBAC rule lasts until someone applies it).
 */
export const INFORMER_RESTART_BACKOFF: BackoffPolicy = {
  baseMs: 1000,
  maxMs: 30_000,
  factor: 2,
  jitter: 0.2,
};

/** The longest an optional informer (one object watched by name) waits before it tries again after errors. */
const OPTIONAL_RESTART_MAX_MS = 60_000;

/**
 * Starts one informer per watched kind and resolves once each has listed (an informer whose first list fails keeps
 * retrying in the background; the caller waits on {@link ClusterCaches} being filled by what it needs). Each
 * informer restarts after an error, re-listing when its watch history expired (410).
 */
export async function startCaches(api: KubeApis, options: StartCachesOptions): Promise<ClusterCaches> {
  const backoff = options.restartBackoff ?? INFORMER_RESTART_BACKOFF;
  const random = options.random ?? Math.random;
  const kinds: string[] = [];
  const informers: Informer<KubernetesObject>[] = [];
  const listed = new Set<string>();
  let stopped = false;
  // `informer.start()` resolves whether or not its list succeeded (a failure goes to 'error'): a kind counts as
  // listed when its list function's answer arrived.
  const start = (informer: Informer<KubernetesObject>) => informer.start().catch(() => undefined);
  const timers = new Set<NodeJS.Timeout>();

  /**
   * One informer. With `fieldSelector` (one object watched by name) it is optional: {@link ClusterCaches.synced}
   * does not wait for it.
   */
  function watch<T extends KubernetesObject>(
    kind: string,
    path: string,
    list: () => Promise<KubernetesListObject<T>>,
    fieldSelector?: string,
    crd?: string,
  ): Informer<T> & ObjectCache<T> {
    // Back off while it keeps failing (a missing CRD, or a 403 from an RBAC without the rule, lasts until someone
    // applies it); a list that succeeds starts over.
    const policy =
      fieldSelector === undefined
        ? backoff
        : { ...backoff, maxMs: Math.max(backoff.maxMs, OPTIONAL_RESTART_MAX_MS) };
    let failuresInARow = 0;
    const informer = new ListWatch<T>(
      path,
      new Watch(api.config),
      () =>
        list().then((answer) => {
          failuresInARow = 0;
          listed.add(kind);
          return answer;
        }),
      false,
      undefined,
      fieldSelector,
    );
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (obj) => options.onChange(kind, obj, verb));
    informer.on('error', (err: unknown) => {
      if (stopped) return;
      const delay = Math.round(backoffDelay(policy, failuresInARow, random));
      failuresInARow++;
      options.onError(kind, describeKubeError(err), { status: httpStatus(err), crd, retryInMs: delay });
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopped) void start(informer as unknown as Informer<KubernetesObject>);
      }, delay);
      timers.add(t);
    });
    informers.push(informer as unknown as Informer<KubernetesObject>);
    if (fieldSelector === undefined) kinds.push(kind);
    return informer;
  }

  const custom = <T extends KubernetesObject>(version: string, plural: string) =>
    watch<T>(
      plural,
      `/apis/${VPC_RESOURCES_GROUP}/${version}/${plural}`,
      () =>
        api.custom.listClusterCustomObject({
          group: VPC_RESOURCES_GROUP,
          version,
          plural,
        }) as Promise<KubernetesListObject<T>>,
      undefined,
      `${plural}.${VPC_RESOURCES_GROUP}`,
    );

  const caches: ClusterCaches = {
    pods: watch<V1Pod>('pods', '/api/v1/pods', () => api.core.listPodForAllNamespaces()),
    nodes: watch<V1Node>('nodes', '/api/v1/nodes', () => api.core.listNode()),
    serviceAccounts: watch<V1ServiceAccount>('serviceaccounts', '/api/v1/serviceaccounts', () =>
      api.core.listServiceAccountForAllNamespaces(),
    ),
    cniNodes: custom<CustomObject>('v1alpha1', 'cninodes'),
    policies: custom<CustomObject>('v1beta1', 'securitygrouppolicies'),
    vpcCniConfig: watch<V1ConfigMap>(
      'configmaps',
      `/api/v1/namespaces/${VPC_CNI_CONFIG_NAMESPACE}/configmaps`,
      () =>
        api.core.listNamespacedConfigMap({
          namespace: VPC_CNI_CONFIG_NAMESPACE,
          fieldSelector: `metadata.name=${VPC_CNI_CONFIG_NAME}`,
        }),
      `metadata.name=${VPC_CNI_CONFIG_NAME}`,
    ),
    synced: () => kinds.every((k) => listed.has(k)),
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all(informers.map((i) => i.stop().catch(() => undefined)));
    },
  };
  // A first list that fails reports through 'error' and restarts; do not hold the start on it (see `synced`).
  await Promise.all(informers.map(start));
  return caches;
}
