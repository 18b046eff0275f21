import type { V1Node, V1Pod, V1ServiceAccount } from '@kubernetes/client-node';
import {
  type BranchClusterView,
  type BranchNodeView,
  type BranchPodView,
  isSgpError,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
  type SecurityGroupPolicy,
  validateSecurityGroupPolicy,
} from '@vpc-cni-kit/sgp-branch';
import type { InstanceFacts } from '../ec2/instances.js';
import type { CustomObject } from '../kube/caches.js';

/** The CNINode feature that asks for a trunk ENI. */
export const SGP_FEATURE = 'SecurityGroupsForPods';

/** Whether a CNINode lists the `SecurityGroupsForPods` feature. */
export function wantsTrunk(cniNode: CustomObject | undefined): boolean {
  const features = cniNode?.spec?.['features'];
  return (
    Array.isArray(features) && features.some((f) => (f as { name?: unknown } | null)?.name === SGP_FEATURE)
  );
}

/**
 * A SecurityGroupPolicy object as the controller uses it, or the reason it is refused (the controller logs it
 * and treats the policy as absent: a malformed policy selects nothing rather than something wrong).
 */
export function readPolicy(obj: CustomObject): SecurityGroupPolicy | { problem: string } {
  const spec = (obj.spec ?? {}) as {
    podSelector?: unknown;
    serviceAccountSelector?: unknown;
    securityGroups?: { groupIds?: unknown };
  };
  const candidate = {
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
    ...(spec.podSelector !== undefined ? { podSelector: spec.podSelector } : {}),
    ...(spec.serviceAccountSelector !== undefined
      ? { serviceAccountSelector: spec.serviceAccountSelector }
      : {}),
    groupIds: spec.securityGroups?.groupIds,
  } as SecurityGroupPolicy;
  try {
    return validateSecurityGroupPolicy(candidate);
  } catch (e) {
    if (isSgpError(e)) return { problem: e.detail ?? e.message };
    throw e;
  }
}

/**
 * Whether a pod requests the `vpc.amazonaws.com/pod-eni` resource, as the reference's controller decides: some
 * container's requests name it (the API server defaults a request left out to its limit, so a limit counts too).
 * The controller gives a branch to such pods only; the node's daemon plumbs one only when the first container's
 * limits ask for it, which is where the pod webhook puts the resource.
 */
export function requestsPodEni(pod: V1Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => {
    const r = c.resources;
    return (
      (r?.requests !== undefined && POD_ENI_RESOURCE in r.requests) ||
      (r?.limits !== undefined && POD_ENI_RESOURCE in r.limits)
    );
  });
}

/** The inputs of one view. */
export interface ViewInputs {
  /** Pods. */
  readonly pods: readonly V1Pod[];
  /** Nodes. */
  readonly nodes: readonly V1Node[];
  /** ServiceAccounts. */
  readonly serviceAccounts: readonly V1ServiceAccount[];
  /** Valid policies. */
  readonly policies: readonly SecurityGroupPolicy[];
  /** EC2 facts per node name (nodes without facts are left out of the view until they have them). */
  readonly facts: ReadonlyMap<string, InstanceFacts>;
}

/**
 * The cluster as `BranchController` sees it: the nodes whose instance is known (subnet, trunk, branch limit, the
 * instance's groups: its primary ENI's or its ENIConfig's), every pod with its labels, service-account labels (and
 * whether its ServiceAccount is in the cache), whether it requests the resource ({@link requestsPodEni}) and current
 * annotation (terminating when it carries a deletion
 * timestamp or has finished), and the policies.
 */
export function clusterView(inputs: ViewInputs): BranchClusterView {
  const saLabels = new Map<string, Record<string, string>>();
  for (const sa of inputs.serviceAccounts)
    saLabels.set(`${sa.metadata?.namespace}/${sa.metadata?.name}`, sa.metadata?.labels ?? {});
  const nodes: BranchNodeView[] = [];
  for (const n of inputs.nodes) {
    const name = n.metadata?.name;
    const f = name === undefined ? undefined : inputs.facts.get(name);
    if (name === undefined || f === undefined) continue;
    nodes.push({
      name,
      subnetId: f.subnetId,
      trunkEniId: f.trunkEniId,
      branchLimit: f.branchLimit,
      instanceGroupIds: f.groupIds,
    });
  }
  const pods: BranchPodView[] = [];
  for (const p of inputs.pods) {
    const m = p.metadata;
    if (m?.uid === undefined || m.name === undefined || m.namespace === undefined) continue;
    const phase = p.status?.phase;
    const sa = saLabels.get(`${m.namespace}/${p.spec?.serviceAccountName ?? 'default'}`);
    pods.push({
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      nodeName: p.spec?.nodeName,
      labels: m.labels ?? {},
      serviceAccountLabels: sa ?? {},
      serviceAccountMissing: sa === undefined,
      requestsBranch: requestsPodEni(p),
      annotation: m.annotations?.[POD_ENI_ANNOTATION],
      terminating: m.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed',
    });
  }
  return { nodes, pods, policies: inputs.policies };
}
