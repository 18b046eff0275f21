import { SgpError } from '@vpc-cni-kit/sgp-branch';
import type { KubeSettings } from '../config/kube-settings.js';
import type { PodView } from '../daemon/branch-pods.js';
import type { Logger } from '../log/logger.js';
import type { CniBackend } from '../rpc/grpc-server.js';
import type { CniNodeFeature } from './cni-node.js';
import { httpsKubeApi, httpsPodWatchApi } from './https-kube-api.js';
import { resolveInCluster } from './in-cluster.js';
import { isKubeCallError, type KubeObject } from './kube-api.js';
import { KubeSide } from './kube-side.js';
import { PodWatch, type PodWatchSink } from './pod-watch.js';

/** Per-request timeout of Kubernetes API calls (the reference's client uses 5 s for its start-up checks). */
export const KUBE_REQUEST_TIMEOUT_MS = 5000;

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Creates the daemon's {@link KubeSide} from its settings; it connects (over `node:https`, no client library)
 * after the daemon serves.
 */
export async function createKubeSide(
  settings: KubeSettings,
  log: Logger,
  features: readonly CniNodeFeature[] = [],
): Promise<KubeSide> {
  const target = await resolveInCluster(settings);
  return new KubeSide({
    settings,
    log,
    features,
    target,
    connect: async (t) => httpsKubeApi(t, KUBE_REQUEST_TIMEOUT_MS),
    now: () => Date.now(),
    random: Math.random,
    sleep: abortableSleep,
  });
}

/**
 * Creates the watch of the pods bound to this node (over `node:https`, connections of its own), feeding `sink`,
 * against the target `kube` resolved; it starts with {@link PodWatch.start}. Without a cluster it stays off and
 * says why when started.
 */
export function createPodWatch(
  settings: KubeSettings,
  kube: KubeSide,
  sink: PodWatchSink,
  log: Logger,
): PodWatch {
  return new PodWatch({
    nodeName: settings.nodeName,
    target: kube.target,
    connect: (t) => httpsPodWatchApi(t, KUBE_REQUEST_TIMEOUT_MS),
    sink,
    log,
    random: Math.random,
    sleep: abortableSleep,
    now: () => performance.now(),
  });
}

/**
 * Wraps the CNI backend so every successful ADD and every DEL is reported to the Kubernetes side after its
 * reply is decided (never delaying or failing it).
 */
export function reportPodsTo(kube: KubeSide, backend: CniBackend): CniBackend {
  return {
    ...backend,
    async addNetwork(req) {
      const reply = await backend.addNetwork(req);
      const first = reply.IPAllocationMetadata?.[0];
      const ip = first?.IPv4Addr || first?.IPv6Addr;
      if (reply.Success && ip)
        kube.podAdded({ namespace: req.K8S_POD_NAMESPACE, name: req.K8S_POD_NAME }, ip);
      return reply;
    },
    async delNetwork(req) {
      const reply = await backend.delNetwork(req);
      const first = reply.IPAllocationMetadata?.[0];
      const ip = first?.IPv4Addr || first?.IPv6Addr;
      if (reply.Success && ip)
        kube.podDeleted({ namespace: req.K8S_POD_NAMESPACE, name: req.K8S_POD_NAME }, ip);
      return reply;
    },
  };
}

/**
 * Reads a pod for security groups for pods (one GET per ADD, ADR 0016): its annotations and its containers'
 * limits. Throws `SgpError` `POD_NOT_FOUND` when the API does not know the pod or cannot be asked (the daemon
 * cannot tell whether the pod needs a branch ENI, so it gives it no address at all, as the reference).
 */
export async function readPodView(kube: KubeSide, namespace: string, name: string): Promise<PodView> {
  let pod: KubeObject;
  try {
    pod = await kube.call((api) => api.getPod(namespace, name));
  } catch (e) {
    const detail = isKubeCallError(e, 'NotFound')
      ? `pod ${namespace}/${name} not found`
      : `cannot read pod ${namespace}/${name}: ${e instanceof Error ? e.message : String(e)}`;
    throw new SgpError({ code: 'POD_NOT_FOUND', op: 'readPod', detail, cause: e });
  }
  const containers = (pod.spec as { containers?: unknown } | undefined)?.containers;
  return {
    annotations: { ...(pod.metadata?.annotations ?? {}) },
    containerLimits: Array.isArray(containers)
      ? containers.map((c) => (c as { resources?: { limits?: Record<string, string> } })?.resources?.limits)
      : [],
  };
}
