import { WarmPoolError } from './errors.js';
import type { PoolCidr, PoolEni, PoolInput } from './types.js';

function fail(field: string, why: string): never {
  throw new WarmPoolError('InvalidInput', field, `${field} ${why}`);
}

function count(v: unknown, field: string, min = 0): void {
  if (!isCount(v, min)) fail(field, `must be an integer ≥ ${min}`);
}

function time(v: unknown, field: string): void {
  if (!isTime(v)) fail(field, 'must be a finite number (ms since epoch)');
}

function isCount(v: unknown, min = 0): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min;
}

function isTime(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v);
}

/**
 * The checks of one ENI and its CIDRs that `validateInput` makes, without naming a field: stats are checked on
 * every decision, and naming each field would build strings for every CIDR of a valid input.
 */
function validEni(e: PoolEni): boolean {
  if (typeof e !== 'object' || e === null || typeof e.id !== 'string') return false;
  if (!isTime(e.createdAt) || !isCount(e.assignedIPs) || !isCount(e.cooldownIPs) || !Array.isArray(e.cidrs))
    return false;
  return e.cidrs.every(
    (c: PoolCidr) =>
      typeof c === 'object' &&
      c !== null &&
      isCount(c.size, 1) &&
      isCount(c.assigned) &&
      isCount(c.cooldown) &&
      c.assigned + c.cooldown <= c.size,
  );
}

/** Checks a {@link PoolInput}; throws {@link WarmPoolError} naming the first bad field. */
export function validateInput(input: PoolInput): void {
  if (typeof input !== 'object' || input === null) fail('input', 'must be an object');
  const { stats, targets: t, limits: l, timing } = input;
  if (typeof t !== 'object' || t === null) fail('targets', 'must be an object');
  count(t.warmEniTarget, 'targets.warmEniTarget');
  count(t.warmIpTarget, 'targets.warmIpTarget');
  count(t.minimumIpTarget, 'targets.minimumIpTarget');
  count(t.warmPrefixTarget, 'targets.warmPrefixTarget');
  if (typeof t.prefixDelegation !== 'boolean') fail('targets.prefixDelegation', 'must be a boolean');
  if (typeof l !== 'object' || l === null) fail('limits', 'must be an object');
  count(l.maxEnis, 'limits.maxEnis', 1);
  count(l.ipv4PerEni, 'limits.ipv4PerEni', 2);
  count(l.maxPods, 'limits.maxPods', 1);
  if (
    l.maxEniSetting !== undefined &&
    (typeof l.maxEniSetting !== 'number' || !Number.isInteger(l.maxEniSetting))
  )
    fail('limits.maxEniSetting', 'must be an integer');
  if (l.trunkReserve !== undefined) count(l.trunkReserve, 'limits.trunkReserve');
  if (l.unmanagedEnis !== undefined) count(l.unmanagedEnis, 'limits.unmanagedEnis');
  if (typeof timing !== 'object' || timing === null) fail('timing', 'must be an object');
  time(timing.now, 'timing.now');
  if (timing.lastShrinkAt !== undefined) time(timing.lastShrinkAt, 'timing.lastShrinkAt');
  if (timing.lastInsufficientAddressesAt !== undefined)
    time(timing.lastInsufficientAddressesAt, 'timing.lastInsufficientAddressesAt');
  if (typeof stats !== 'object' || stats === null || !Array.isArray(stats.enis))
    fail('stats.enis', 'must be an array');
  stats.enis.forEach((e: PoolEni, i: number) => {
    if (validEni(e)) return;
    // Something is wrong: find the first bad field, in the order the checks below name them.
    const at = `stats.enis[${i}]`;
    if (typeof e !== 'object' || e === null || typeof e.id !== 'string') fail(`${at}.id`, 'must be a string');
    time(e.createdAt, `${at}.createdAt`);
    count(e.assignedIPs, `${at}.assignedIPs`);
    count(e.cooldownIPs, `${at}.cooldownIPs`);
    if (!Array.isArray(e.cidrs)) fail(`${at}.cidrs`, 'must be an array');
    e.cidrs.forEach((c: PoolCidr, j: number) => {
      const ct = `${at}.cidrs[${j}]`;
      if (typeof c !== 'object' || c === null) fail(ct, 'must be an object');
      count(c.size, `${ct}.size`, 1);
      count(c.assigned, `${ct}.assigned`);
      count(c.cooldown, `${ct}.cooldown`);
      if (c.assigned + c.cooldown > c.size) fail(ct, 'has more assigned + cooling addresses than its size');
    });
  });
}
