import { invalidArgument } from './errors.js';

/** One `matchExpressions` requirement of a Kubernetes label selector. */
export interface LabelSelectorRequirement {
  /** Label key. */
  readonly key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  /** Values: non-empty for `In`/`NotIn`, empty for `Exists`/`DoesNotExist`. */
  readonly values?: readonly string[] | undefined;
}

/** A Kubernetes `metav1.LabelSelector`: all of `matchLabels` and all `matchExpressions` must hold (empty matches all). */
export interface LabelSelector {
  /** Exact key/value pairs. */
  readonly matchLabels?: Readonly<Record<string, string>> | undefined;
  /** Set-based requirements. */
  readonly matchExpressions?: readonly LabelSelectorRequirement[] | undefined;
}

/** A `SecurityGroupPolicy` (`vpcresources.k8s.aws/v1beta1`), reduced to what decides a pod's groups. */
export interface SecurityGroupPolicy {
  /** Namespace of the policy: it selects pods of that namespace only. */
  readonly namespace: string;
  /** Name of the policy. */
  readonly name: string;
  /** `spec.podSelector`: pod labels. */
  readonly podSelector?: LabelSelector | undefined;
  /** `spec.serviceAccountSelector`: labels of the pod's service account. */
  readonly serviceAccountSelector?: LabelSelector | undefined;
  /** `spec.securityGroups.groupIds` (`sg-…`, 1..5). */
  readonly groupIds: readonly string[];
}

/** What a pod contributes to policy matching. */
export interface PodIdentity {
  /** Namespace. */
  readonly namespace: string;
  /** Pod labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** Labels of the pod's service account (`{}` when it has none or is unknown). */
  readonly serviceAccountLabels: Readonly<Record<string, string>>;
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Validates a selector (known operators, values present exactly when the operator needs them). Throws `INVALID_ARGUMENT`. */
export function validateLabelSelector(selector: LabelSelector, op = 'validateLabelSelector'): LabelSelector {
  if (typeof selector !== 'object' || selector === null)
    throw invalidArgument(op, 'selector must be an object');
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (k === '' || typeof v !== 'string')
      throw invalidArgument(op, `bad matchLabels entry ${JSON.stringify(k)}`);
  }
  for (const r of selector.matchExpressions ?? []) {
    if (typeof r?.key !== 'string' || r.key === '')
      throw invalidArgument(op, 'matchExpressions entry without key');
    if (!OPERATORS.has(r.operator))
      throw invalidArgument(op, `bad operator ${JSON.stringify(r.operator)} for ${r.key}`);
    const n = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && n === 0)
      throw invalidArgument(op, `${r.operator} on ${r.key} needs values`);
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && n !== 0)
      throw invalidArgument(op, `${r.operator} on ${r.key} takes no values`);
  }
  return selector;
}

/** True when `labels` satisfy `selector` (Kubernetes semantics; an empty selector matches everything). */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const r of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.operator) {
      case 'In':
        if (!has || !r.values!.includes(value!)) return false;
        break;
      case 'NotIn':
        if (has && r.values!.includes(value!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** Validates a policy: a name, at least one selector, 1..5 `sg-` group ids. Throws `INVALID_ARGUMENT`. */
export function validateSecurityGroupPolicy(policy: SecurityGroupPolicy): SecurityGroupPolicy {
  const op = 'validateSecurityGroupPolicy';
  if (
    typeof policy?.namespace !== 'string' ||
    policy.namespace === '' ||
    typeof policy.name !== 'string' ||
    policy.name === ''
  ) {
    throw invalidArgument(op, 'policy needs a namespace and a name');
  }
  const where = `${policy.namespace}/${policy.name}`;
  if (policy.podSelector === undefined && policy.serviceAccountSelector === undefined) {
    throw invalidArgument(op, `${where}: needs podSelector or serviceAccountSelector`);
  }
  if (policy.podSelector) validateLabelSelector(policy.podSelector, `${op} ${where}.podSelector`);
  if (policy.serviceAccountSelector)
    validateLabelSelector(policy.serviceAccountSelector, `${op} ${where}.serviceAccountSelector`);
  if (!Array.isArray(policy.groupIds) || policy.groupIds.length < 1 || policy.groupIds.length > 5) {
    throw invalidArgument(op, `${where}: groupIds must hold 1..5 ids`);
  }
  for (const g of policy.groupIds)
    if (!/^sg-[0-9a-f]{1,32}$/.test(g))
      throw invalidArgument(op, `${where}: bad group id ${JSON.stringify(g)}`);
  return policy;
}

/**
 * The security groups a pod gets: the sorted union of the groups of every policy in its namespace whose selectors
 * all match (pod labels for `podSelector`, service-account labels for `serviceAccountSelector`), or `[]` when no
 * policy selects it (an ordinary pod).
 */
export function podSecurityGroups(pod: PodIdentity, policies: readonly SecurityGroupPolicy[]): string[] {
  const groups = new Set<string>();
  for (const p of policies) {
    if (p.namespace !== pod.namespace) continue;
    if (p.podSelector && !matchesLabelSelector(p.podSelector, pod.labels)) continue;
    if (p.serviceAccountSelector && !matchesLabelSelector(p.serviceAccountSelector, pod.serviceAccountLabels))
      continue;
    if (!p.podSelector && !p.serviceAccountSelector) continue;
    for (const g of p.groupIds) groups.add(g);
  }
  return [...groups].sort();
}
