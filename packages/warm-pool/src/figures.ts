import { PREFIX_SIZE } from './constants.js';
import type { PoolCidr, PoolEni, PoolInput } from './types.js';

/**
 * The numbers the reference's pool maths work with, derived from a {@link PoolInput}. Exposed for logging,
 * metrics and introspection; {@link decide} is built on them.
 */
export interface PoolFigures {
  /** `maxIPsPerENI`: IPv4-per-ENI − 1, times 16 with prefix delegation. */
  readonly maxIpsPerEni: number;
  /** `maxPrefixesPerENI` = IPv4-per-ENI − 1 (also the /32 limit: EC2 counts both against it). */
  readonly maxSlotsPerEni: number;
  /** `maxENI` = min(MAX_ENI if ≥ 1, the instance's ENI limit). */
  readonly maxEni: number;
  /** WARM_IP_TARGET or MINIMUM_IP_TARGET is set. */
  readonly ipTargetsDefined: boolean;
  /** Addresses in current-mode CIDRs of non-excluded ENIs. */
  readonly total: number;
  /** Assigned addresses in those CIDRs. */
  readonly assigned: number;
  /** `total − assigned` (cooling addresses count as available, as in the reference). */
  readonly available: number;
  /** IPv4 prefixes on all ENIs. */
  readonly totalPrefixes: number;
  /** Prefixes with no assigned address on non-excluded ENIs. */
  readonly freePrefixes: number;
  /** Addresses short of the IP targets (0 when not defined). */
  readonly short: number;
  /** Addresses over the IP targets (0 when not defined). */
  readonly over: number;
  /** `ceil(short / 16)` (PD). */
  readonly shortPrefixes: number;
  /** Prefixes over the IP targets (PD). */
  readonly overPrefixes: number;
}

/**
 * True for the CIDRs pool maths count: IPv4, of the current mode. With prefix delegation that is prefixes
 * and also /32s (fallback addresses taken while the subnet had no free /28: they serve pods too).
 */
export function inMode(c: PoolCidr, prefixDelegation: boolean): boolean {
  return (c.family ?? 4) === 4 && (prefixDelegation || !c.isPrefix);
}

/** True for an IPv4 /28 prefix. */
function isIpv4Prefix(c: PoolCidr): boolean {
  return (c.family ?? 4) === 4 && c.isPrefix;
}

/** IPv4 slots (secondary addresses plus prefixes) an ENI uses; EC2 limits their sum per ENI. */
export function slotsUsed(eni: PoolEni): number {
  let n = 0;
  for (const c of eni.cidrs) if ((c.family ?? 4) === 4) n += 1;
  return n;
}

/** Total and assigned addresses over current-mode CIDRs of the given ENIs. */
export function countAddresses(enis: readonly PoolEni[], pd: boolean): { total: number; assigned: number } {
  let total = 0;
  let assigned = 0;
  for (const e of enis) {
    if (e.excluded) continue;
    for (const c of e.cidrs) {
      if (!inMode(c, pd)) continue;
      total += c.size;
      assigned += c.assigned;
    }
  }
  return { total, assigned };
}

/** Prefixes with no assigned address on the given non-excluded ENIs. */
export function countFreePrefixes(enis: readonly PoolEni[]): number {
  let n = 0;
  for (const e of enis) {
    if (e.excluded) continue;
    for (const c of e.cidrs) if (isIpv4Prefix(c) && c.assigned === 0) n += 1;
  }
  return n;
}

/** Computes {@link PoolFigures} (the reference's `datastoreTargetState` and friends). */
export function poolFigures(input: PoolInput): PoolFigures {
  const { stats, targets, limits } = input;
  const pd = targets.prefixDelegation;
  const maxSlotsPerEni = Math.max(limits.ipv4PerEni - 1, 0);
  const maxIpsPerEni = pd ? maxSlotsPerEni * PREFIX_SIZE : maxSlotsPerEni;
  const setting = limits.maxEniSetting ?? 0;
  const maxEni = setting >= 1 ? Math.min(setting, limits.maxEnis) : limits.maxEnis;
  const warmIp = targets.warmIpTarget;
  const minIp = targets.minimumIpTarget;
  const ipTargetsDefined = warmIp !== 0 || minIp !== 0;
  const { total, assigned } = countAddresses(stats.enis, pd);
  const available = total - assigned;
  let totalPrefixes = 0;
  for (const e of stats.enis) for (const c of e.cidrs) if (isIpv4Prefix(c)) totalPrefixes += 1;
  const freePrefixes = countFreePrefixes(stats.enis);

  let short = 0;
  let over = 0;
  let shortPrefixes = 0;
  let overPrefixes = 0;
  if (ipTargetsDefined) {
    short = Math.max(warmIp - available, 0);
    short = Math.max(short, minIp - total);
    over = Math.max(available - warmIp, 0);
    over = Math.max(Math.min(over, total - minIp), 0);
    if (pd) {
      shortPrefixes = Math.ceil(short / PREFIX_SIZE);
      const needWarm = Math.ceil((assigned + warmIp) / PREFIX_SIZE);
      const needMin = Math.ceil(minIp / PREFIX_SIZE);
      overPrefixes = Math.max(Math.min(freePrefixes, totalPrefixes - needWarm), 0);
      overPrefixes = Math.max(Math.min(overPrefixes, totalPrefixes - needMin), 0);
    }
  }
  return {
    maxIpsPerEni,
    maxSlotsPerEni,
    maxEni,
    ipTargetsDefined,
    total,
    assigned,
    available,
    totalPrefixes,
    freePrefixes,
    short,
    over,
    shortPrefixes,
    overPrefixes,
  };
}
