import type { V1Pod } from '@kubernetes/client-node';
import {
  type BranchControllerPort,
  jsonPointerToken,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
  type PodRef,
  SgpError,
} from '@vpc-cni-kit/sgp-branch';
import { httpStatus, JSON_PATCH, type KubeApis, kubeApis, MERGE_PATCH } from './apis.js';

/** The Kubernetes half of {@link BranchControllerPort}. */
export type KubeBranchPort = Pick<BranchControllerPort, 'annotatePod' | 'setPodEniCapacity'>;

/**
 * The Kubernetes side of the branch controller. `annotatePod` writes `vpc.amazonaws.com/pod-eni` with one JSON
 * patch whose first operation tests `metadata.uid`, so the write never lands on a new pod that took the name
 * (the server refuses the whole patch: 422); a pod that is gone, or replaced, is `SgpError` `POD_NOT_FOUND`.
 * `setPodEniCapacity` merge-patches the node's `status.capacity` (a node without a trunk loses the resource).
 * `cachedPod` lets the first attempt know whether the pod has annotations at all (one round trip, no read).
 */
export function kubeBranchPort(
  api: KubeApis,
  cachedPod: (namespace: string, name: string) => V1Pod | undefined = () => undefined,
): KubeBranchPort {
  async function patch(pod: PodRef, value: string, hasAnnotations: boolean): Promise<void> {
    const ops = [
      { op: 'test', path: '/metadata/uid', value: pod.uid },
      hasAnnotations
        ? { op: 'add', path: `/metadata/annotations/${jsonPointerToken(POD_ENI_ANNOTATION)}`, value }
        : { op: 'add', path: '/metadata/annotations', value: { [POD_ENI_ANNOTATION]: value } },
    ];
    await api.core.patchNamespacedPod({ namespace: pod.namespace, name: pod.name, body: ops }, JSON_PATCH);
  }

  const gone = (pod: PodRef, why: string) =>
    new SgpError({
      code: 'POD_NOT_FOUND',
      op: 'annotatePod',
      detail: `${pod.namespace}/${pod.name}: ${why}`,
    });

  return {
    async annotatePod(pod, value) {
      const cached = cachedPod(pod.namespace, pod.name);
      // Unknown: most pods carry some annotation; a wrong guess costs one read (the 422 path below).
      const hasAnnotations = cached === undefined || cached.metadata?.annotations !== undefined;
      try {
        await patch(pod, value, hasAnnotations);
        return;
      } catch (e) {
        const status = httpStatus(e);
        if (status === 404) throw gone(pod, 'not found');
        if (status !== 422) throw e;
      }
      // 422: another pod took the name, or the annotations map was not as cached. Read and try once more.
      let current: V1Pod;
      try {
        current = await api.core.readNamespacedPod({ namespace: pod.namespace, name: pod.name });
      } catch (e) {
        if (httpStatus(e) === 404) throw gone(pod, 'not found');
        throw e;
      }
      if (current.metadata?.uid !== pod.uid) throw gone(pod, `UID is now ${current.metadata?.uid}`);
      try {
        await patch(pod, value, current.metadata?.annotations !== undefined);
      } catch (e) {
        if (httpStatus(e) === 404 || httpStatus(e) === 422) throw gone(pod, 'gone while annotating');
        throw e;
      }
    },

    async setPodEniCapacity(nodeName, capacity) {
      const value = capacity > 0 ? String(capacity) : null;
      await api.core.patchNodeStatus(
        { name: nodeName, body: { status: { capacity: { [POD_ENI_RESOURCE]: value } } } },
        MERGE_PATCH,
      );
    },
  };
}

/**
 * The Kubernetes half of `BranchControllerPort` for a cluster named by a kubeconfig file or a list merged as
 * kubectl does (or in-cluster without one): the UID-guarded annotation patch and the node-status capacity patch,
 * on a client of its own. For a controller of your own, beside `ec2BranchPort`.
 */
export function createKubeBranchPort(
  options: { readonly kubeconfig?: string | readonly string[] | undefined } = {},
): KubeBranchPort {
  return kubeBranchPort(kubeApis(options.kubeconfig));
}
