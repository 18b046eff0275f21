import { podSecurityGroups, type SecurityGroupPolicy } from '@vpc-cni-kit/sgp-branch';
import { readPolicy } from '../controller/view.js';
import { describeKubeError, httpStatus, type KubeApis } from '../kube/apis.js';
import { type CustomObject, VPC_RESOURCES_GROUP } from '../kube/caches.js';
import type { PolicyLookup } from './pod-mutation.js';

/**
 * The webhook's policy lookup, read from the API server at admission time (every replica serves the webhook,
 * leader or not, so it cannot lean on the acting controller's caches): the SecurityGroupPolicies of the pod's
 * namespace and its ServiceAccount's labels, matched by `podSecurityGroups`, the selection the controller uses.
 * A policy the controller refuses selects nothing here either; a missing ServiceAccount has no labels.
 */
export function apiPolicyLookup(kube: KubeApis): PolicyLookup {
  return async (pod) => {
    let items: CustomObject[];
    try {
      const list = (await kube.custom.listNamespacedCustomObject({
        group: VPC_RESOURCES_GROUP,
        version: 'v1beta1',
        namespace: pod.namespace,
        plural: 'securitygrouppolicies',
      })) as { items?: CustomObject[] };
      items = list.items ?? [];
    } catch (e) {
      throw new Error(`listing SecurityGroupPolicies in ${pod.namespace}: ${describeKubeError(e)}`);
    }
    const policies: SecurityGroupPolicy[] = [];
    for (const obj of items) {
      const p = readPolicy(obj);
      if (!('problem' in p)) policies.push(p);
    }
    if (policies.length === 0) return [];
    let serviceAccountLabels: Record<string, string> = {};
    if (policies.some((p) => p.serviceAccountSelector !== undefined)) {
      try {
        const sa = await kube.core.readNamespacedServiceAccount({
          name: pod.serviceAccountName,
          namespace: pod.namespace,
        });
        serviceAccountLabels = sa.metadata?.labels ?? {};
      } catch (e) {
        if (httpStatus(e) !== 404)
          throw new Error(
            `reading ServiceAccount ${pod.namespace}/${pod.serviceAccountName}: ${describeKubeError(e)}`,
          );
      }
    }
    return podSecurityGroups(
      { namespace: pod.namespace, labels: pod.labels, serviceAccountLabels },
      policies,
    );
  };
}
