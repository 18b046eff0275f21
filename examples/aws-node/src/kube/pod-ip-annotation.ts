import { isKubeCallError, type KubeApi } from './kube-api.js';

/** The annotation the reference writes with `ANNOTATE_POD_IP=true`. */
export const POD_IPS_ANNOTATION = 'vpc.amazonaws.com/pod-ips';

/**
 * Sets `vpc.amazonaws.com/pod-ips` on a pod after ADD (`ip`), or clears it after DEL (`''`, only while it still
 * names `releasedIp`), as the reference does: skipped when already equal, a merge patch conditional on the
 * resourceVersion read, retried on 409. A pod that no longer exists is not an error. Returns whether it wrote.
 */
export async function setPodIpAnnotation(
  api: KubeApi,
  pod: { namespace: string; name: string },
  ip: string,
  releasedIp?: string,
  attempts = 5,
): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      const current = await api.getPod(pod.namespace, pod.name);
      const now = current.metadata?.annotations?.[POD_IPS_ANNOTATION];
      if (now === ip) return false;
      if (releasedIp !== undefined && now !== releasedIp) return false;
      await api.mergePatchPod(pod.namespace, pod.name, {
        metadata: {
          resourceVersion: current.metadata?.resourceVersion,
          annotations: { [POD_IPS_ANNOTATION]: ip },
        },
      });
      return true;
    } catch (e) {
      if (isKubeCallError(e, 'NotFound')) return false;
      if (isKubeCallError(e, 'Conflict') && i + 1 < attempts) continue;
      throw e;
    }
  }
}
