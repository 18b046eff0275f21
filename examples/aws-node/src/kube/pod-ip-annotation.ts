import { jsonPointerToken } from '@vpc-cni-kit/sgp-branch';
import { isKubeCallError, type KubeApi } from './kube-api.js';

/** The annotation the reference writes with `ANNOTATE_POD_IP=true`. */
export const POD_IPS_ANNOTATION = 'vpc.amazonaws.com/pod-ips';

const POINTER = `/metadata/annotations/${jsonPointerToken(POD_IPS_ANNOTATION)}`;

/**
 * Writes `vpc.amazonaws.com/pod-ips = ip` on a pod after its ADD: one merge patch touching only that key, so no
 * read and no conflict is possible. A pod that no longer exists is not an error. Returns whether it wrote.
 */
export async function setPodIpAnnotation(
  api: KubeApi,
  pod: { namespace: string; name: string },
  ip: string,
): Promise<boolean> {
  try {
    await api.mergePatchPod(pod.namespace, pod.name, {
      metadata: { annotations: { [POD_IPS_ANNOTATION]: ip } },
    });
    return true;
  } catch (e) {
    if (isKubeCallError(e, 'NotFound')) return false;
    throw e;
  }
}

/**
 * Clears the annotation after a DEL, only while it still names `releasedIp` (as the reference does): one JSON
 * patch whose `test` makes the server refuse it (422) when the value changed meanwhile. Returns whether it wrote.
 */
export async function clearPodIpAnnotation(
  api: KubeApi,
  pod: { namespace: string; name: string },
  releasedIp: string,
): Promise<boolean> {
  try {
    await api.jsonPatchPod(pod.namespace, pod.name, [
      { op: 'test', path: POINTER, value: releasedIp },
      { op: 'replace', path: POINTER, value: '' },
    ]);
    return true;
  } catch (e) {
    if (isKubeCallError(e, 'NotFound', 'Invalid')) return false;
    throw e;
  }
}
