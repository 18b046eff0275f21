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
  /**
   * `spec.securityGroups.groupIds` (`sg-…`, 1..16: the CRD's bound, EC2's most per interface; EC2 refuses more
   * than the account's quota, 5 unless raised, when the branch is created).
   */
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

/** A DNS-1123 subdomain (the optional prefix of a label key). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a label key, and a non-empty label value. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Whether `key` is a Kubernetes label key: `[prefix/]name`, name ≤ 63 characters, prefix a DNS subdomain ≤ 253. */
function isLabelKey(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length <= 63 && LABEL_NAME.test(name);
}

/** Whether `value` is a Kubernetes label value: empty, or ≤ 63 characters of the label alphabet. */
function isLabelValue(value: unknown): value is string {
  return typeof value === 'string' && (value === '' || (value.length <= 63 && LABEL_NAME.test(value)));
}

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80) ?? String(v);

/**
 * Validates a selector as the API server's `LabelSelectorAsSelector` does: `matchLabels` a map of label keys to
 * label values, `matchExpressions` a list of requirements with a label key, a known operator, and values (label
 * values) present exactly when the operator needs them. A selector that does not pass selects nothing, rather
 * than (say) every pod lacking a key no pod can carry. Throws `INVALID_ARGUMENT`.
 */
export function validateLabelSelector(selector: LabelSelector, op = 'validateLabelSelector'): LabelSelector {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector))
    throw invalidArgument(op, 'selector must be an object');
  const { matchLabels, matchExpressions } = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  if (matchLabels !== undefined && matchLabels !== null) {
    if (typeof matchLabels !== 'object' || Array.isArray(matchLabels))
      throw invalidArgument(op, `matchLabels must be a map of labels: ${show(matchLabels)}`);
    for (const [k, v] of Object.entries(matchLabels)) {
      if (!isLabelKey(k)) throw invalidArgument(op, `matchLabels key ${show(k)} is not a label key`);
      if (!isLabelValue(v))
        throw invalidArgument(op, `matchLabels value ${show(v)} of ${k} is not a label value`);
    }
  }
  if (matchExpressions === undefined || matchExpressions === null) return selector;
  if (!Array.isArray(matchExpressions))
    throw invalidArgument(op, `matchExpressions must be a list: ${show(matchExpressions)}`);
  for (const r of matchExpressions as unknown[]) {
    const { key, operator, values } = (r ?? {}) as { key?: unknown; operator?: unknown; values?: unknown };
    if (typeof r !== 'object' || r === null || key === undefined || key === '')
      throw invalidArgument(op, 'matchExpressions entry without key');
    if (!isLabelKey(key)) throw invalidArgument(op, `matchExpressions key ${show(key)} is not a label key`);
    if (typeof operator !== 'string' || !OPERATORS.has(operator))
      throw invalidArgument(op, `bad operator ${show(operator)} for ${key}`);
    if (values !== undefined && values !== null && !Array.isArray(values))
      throw invalidArgument(op, `values of ${key} must be a list: ${show(values)}`);
    const list = (values ?? []) as unknown[];
    const bad = list.findIndex((v) => !isLabelValue(v));
    if (bad >= 0) throw invalidArgument(op, `values of ${key}: ${show(list[bad])} is not a label value`);
    if ((operator === 'In' || operator === 'NotIn') && list.length === 0)
      throw invalidArgument(op, `${operator} on ${key} needs values`);
    if ((operator === 'Exists' || operator === 'DoesNotExist') && list.length !== 0)
      throw invalidArgument(op, `${operator} on ${key} takes no values`);
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

/**
 * Validates a policy: a name, at least one selector, 1..16 group ids (non-empty strings). Throws
 * `INVALID_ARGUMENT`. A group id's form is not checked here, as in the reference: a policy naming a malformed or
 * unknown group still selects its pods, and EC2 refuses their branches (`InvalidGroupId.Malformed`,
 * `InvalidGroup.NotFound`), so those pods wait with the error in an Event instead of starting with the node's
 * groups. A policy refused here selects nothing.
 */
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
  // `null` is absent, as Go decodes it (a nil selector).
  if (
    (policy.podSelector === undefined || policy.podSelector === null) &&
    (policy.serviceAccountSelector === undefined || policy.serviceAccountSelector === null)
  ) {
    throw invalidArgument(op, `${where}: needs podSelector or serviceAccountSelector`);
  }
  if (policy.podSelector) validateLabelSelector(policy.podSelector, `${op} ${where}.podSelector`);
  if (policy.serviceAccountSelector)
    validateLabelSelector(policy.serviceAccountSelector, `${op} ${where}.serviceAccountSelector`);
  if (!Array.isArray(policy.groupIds) || policy.groupIds.length < 1 || policy.groupIds.length > 16) {
    throw invalidArgument(op, `${where}: groupIds must hold 1..16 ids`);
  }
  for (const g of policy.groupIds)
    if (typeof g !== 'string' || g === '' || g.length > 255)
      throw invalidArgument(op, `${where}: bad group id ${JSON.stringify(g)?.slice(0, 80)}`);
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
