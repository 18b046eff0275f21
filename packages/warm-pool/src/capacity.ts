import type { PoolFigures } from './figures.js';
import { slotsUsed } from './figures.js';
import type { PoolEni, PoolInput } from './types.js';

/**
 * ENIs the pool may add addresses to, lowest device number first: not trunk, not excluded, not the primary
 * under custom networking, with a free IPv4 slot.
 */
export function fillableEnis(input: PoolInput, f: PoolFigures): PoolEni[] {
  return input.stats.enis
    .filter(
      (e) =>
        !e.isTrunk &&
        !e.excluded &&
        !(e.isPrimary && input.limits.customNetworking === true) &&
        slotsUsed(e) < f.maxSlotsPerEni,
    )
    .sort((a, b) => a.deviceNumber - b.deviceNumber || (a.id < b.id ? -1 : 1));
}

/**
 * Whether another ENI may be attached: `ENIs − excluded < maxENI − unmanaged − trunk reserve − excluded`
 * (the reference's room check).
 */
export function canAddEni(input: PoolInput, f: PoolFigures): boolean {
  const { stats, limits } = input;
  const excluded = stats.enis.filter((e) => e.excluded).length;
  return (
    stats.enis.length - excluded <
    f.maxEni - (limits.unmanagedEnis ?? 0) - (limits.trunkReserve ?? 0) - excluded
  );
}

/** Addresses each fillable ENI could still take (its free slots × unit size), lowest device number first. */
function freeAddressesPerEni(input: PoolInput, f: PoolFigures): number[] {
  const unit = input.targets.prefixDelegation ? 16 : 1;
  return fillableEnis(input, f).map((e) => (f.maxSlotsPerEni - slotsUsed(e)) * unit);
}

/** Addresses the fillable ENIs could still take without attaching another ENI (free slots × unit size). */
export function slotHeadroom(input: PoolInput, f: PoolFigures): number {
  return freeAddressesPerEni(input, f).reduce((a, b) => a + b, 0);
}

/**
 * Addresses the one fillable ENI with the most free slots could still take (free slots × unit size): the
 * largest grow a single `AssignPrivateIpAddresses` (or prefix assign) can make without attaching an ENI.
 */
export function largestEniHeadroom(input: PoolInput, f: PoolFigures): number {
  return Math.max(0, ...freeAddressesPerEni(input, f));
}
