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
import type { KubeApis } from './apis.js';
import { describeKubeError } from './apis.js';
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
  /** Called when an informer's list or watch fails (it restarts after `restartDelayMs`). */
  readonly onError: (kind: string, problem: string) => void;
  /** Pause before an informer restarts after an error (an optional one doubles it per failure in a row, up to 60 s). @defaultValue 1000 */
  readonly restartDelayMs?: number | undefined;
}

/** The longest an optional informer (one object watched by name) waits before it tries again after errors. */
const OPTIONAL_RESTART_MAX_MS = 60_000;

/**
 * Starts one informer per watched kind and resolves once each has listed (an informer whose first list fails keeps
 * retrying in the background; the caller waits on {@link ClusterCaches} being filled by what it needs). Each
 * informer restarts after an error, re-listing when its watch history expired (410).
 */
export async function startCaches(api: KubeApis, options: StartCachesOptions): Promise<ClusterCaches> {
  const restartDelay = options.restartDelayMs ?? 1000;
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
  ): Informer<T> & ObjectCache<T> {
    // An optional informer backs off while it keeps failing (a 403 from an RBAC without it lasts for good):
    // restartDelay doubled per failure in a row, up to a minute; a list that succeeds starts over.
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
      options.onError(kind, describeKubeError(err));
      const delay =
        fieldSelector === undefined
          ? restartDelay
          : Math.min(restartDelay * 2 ** failuresInARow, Math.max(restartDelay, OPTIONAL_RESTART_MAX_MS));
      failuresInARow++;
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
