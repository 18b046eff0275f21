/**
 * The `amazon-vpc-cni` ConfigMap in kube-system, the cluster-wide settings the reference controller reads: here,
 * `branch-eni-cooldown` (whole seconds, the reference's unit; default 60 s, raised to 30 s when lower, as the
 * reference does).
 */

/** The ConfigMap's namespace. */
export const VPC_CNI_CONFIG_NAMESPACE = 'kube-system';
/** The ConfigMap's name. */
export const VPC_CNI_CONFIG_NAME = 'amazon-vpc-cni';
/** Its key for the branch ENI cooldown, in whole seconds. */
export const BRANCH_ENI_COOLDOWN_KEY = 'branch-eni-cooldown';
/** The lowest cooldown the ConfigMap can set: a lower value is raised to it (the reference's minimum). */
export const MIN_BRANCH_ENI_COOLDOWN_MS = 30_000;
/**
 * The highest cooldown the ConfigMap can set; a higher value is refused. The reference has no ceiling; a day is
 * far beyond any iptables propagation the cooldown waits for, and a value past it is taken for a typo that would
 * otherwise hold every released branch (and its VLAN id) for that long.
 */
export const MAX_BRANCH_ENI_COOLDOWN_MS = 86_400_000;

/** What the ConfigMap says about the cooldown. */
export type BranchEniCooldownSetting =
  /** The ConfigMap or its key is absent: the flag's value (default 60 s) applies. */
  | { readonly kind: 'unset' }
  /** A value to apply; `raisedFrom` (ms) when it was below the minimum. */
  | { readonly kind: 'set'; readonly ms: number; readonly raisedFrom?: number | undefined }
  /** A value that cannot be applied: the one in force stays. */
  | { readonly kind: 'refused'; readonly text: string; readonly problem: string };

/**
 * Reads `branch-eni-cooldown` from a ConfigMap's `data` (undefined: no ConfigMap). A whole number of seconds
 * (`"90"`); below 30 it is raised to 30 s; anything else (units, signs, fractions, blanks, above a day) is
 * refused.
 */
export function readBranchEniCooldown(
  data: Readonly<Record<string, string>> | undefined,
): BranchEniCooldownSetting {
  const text = data?.[BRANCH_ENI_COOLDOWN_KEY];
  if (text === undefined) return { kind: 'unset' };
  if (!/^\d+$/.test(text))
    return {
      kind: 'refused',
      text,
      problem: 'not a whole number of seconds (write "60", not "60s" or "1m")',
    };
  // Digits beyond any safe integer read as Infinity or a huge number: above the maximum either way.
  const ms = Number(text) * 1000;
  if (ms > MAX_BRANCH_ENI_COOLDOWN_MS)
    return {
      kind: 'refused',
      text,
      problem: `above the maximum of ${MAX_BRANCH_ENI_COOLDOWN_MS / 1000} seconds`,
    };
  if (ms < MIN_BRANCH_ENI_COOLDOWN_MS) return { kind: 'set', ms: MIN_BRANCH_ENI_COOLDOWN_MS, raisedFrom: ms };
  return { kind: 'set', ms };
}
