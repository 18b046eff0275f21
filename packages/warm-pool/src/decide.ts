import { parseCidr } from '@vpc-cni-kit/ip-address';
import { canAddEni, fillableEnis } from './capacity.js';
import {
  INSUFFICIENT_ADDRESSES_BACKOFF_MS,
  MIN_ENI_AGE_MS,
  PREFIX_SIZE,
  SHRINK_INTERVAL_MS,
} from './constants.js';
import type { PoolFigures } from './figures.js';
import { countAddresses, countFreePrefixes, inMode, poolFigures, slotsUsed } from './figures.js';
import type { DecisionReason, PoolCidr, PoolDecision, PoolEni, PoolInput, ReasonCode } from './types.js';
import { validateInput } from './validate.js';

function reason(code: ReasonCode, message: string): DecisionReason {
  return { code, message };
}

/** The reference's `isDatastorePoolTooLow`, with the code saying which target is missed. */
function lowness(input: PoolInput, f: PoolFigures): { low: boolean; code: ReasonCode; message: string } {
  const t = input.targets;
  let low: boolean;
  let code: ReasonCode;
  let message: string;
  if (f.ipTargetsDefined) {
    low = f.short > 0;
    const minShort = t.minimumIpTarget - f.total;
    code =
      minShort > 0 && minShort >= t.warmIpTarget - f.available
        ? 'below-minimum-ip-target'
        : 'below-warm-ip-target';
    message = `short ${f.short} addresses (available ${f.available}, total ${f.total}, WARM_IP_TARGET ${t.warmIpTarget}, MINIMUM_IP_TARGET ${t.minimumIpTarget})`;
  } else {
    const pd = t.prefixDelegation;
    const w = pd ? t.warmPrefixTarget : t.warmEniTarget;
    const n = pd ? PREFIX_SIZE : f.maxIpsPerEni;
    low = f.available < n * w || (w === 0 && f.available === 0);
    code = pd ? 'below-warm-prefix-target' : 'below-warm-eni-target';
    message = pd
      ? `available ${f.available} < ${n} × WARM_PREFIX_TARGET ${w}`
      : `available ${f.available} < ${n} × WARM_ENI_TARGET ${w}`;
  }
  if (low && f.total >= input.limits.maxPods) {
    return {
      low: false,
      code: 'at-max-pods',
      message: `pool holds ${f.total} ≥ max pods ${input.limits.maxPods}`,
    };
  }
  return { low, code, message };
}

/** Whether the pool would be too low (and allowed to grow) with these ENIs instead. */
function lowWith(input: PoolInput, enis: readonly PoolEni[]): boolean {
  const next = { ...input, stats: { enis } };
  return lowness(next, poolFigures(next)).low;
}

function grow(input: PoolInput, f: PoolFigures, why: DecisionReason): PoolDecision {
  const { targets: t, timing } = input;
  const last = timing.lastInsufficientAddressesAt;
  if (last !== undefined && timing.now - last < INSUFFICIENT_ADDRESSES_BACKOFF_MS) {
    return {
      kind: 'none',
      reason: reason('subnet-backoff', `${why.message}, but the subnet was full ${timing.now - last} ms ago`),
    };
  }
  const pd = t.prefixDelegation;
  const unit = pd ? 'prefix' : 'ip';
  const prefixesNeeded = f.ipTargetsDefined
    ? Math.max(1, f.shortPrefixes)
    : Math.max(1, t.warmPrefixTarget - f.freePrefixes);
  const amount = pd ? prefixesNeeded : f.ipTargetsDefined ? f.short : f.maxIpsPerEni;
  const candidates = fillableEnis(input, f);
  const first = candidates[0];
  if (first !== undefined) {
    const count = Math.min(f.maxSlotsPerEni - slotsUsed(first), amount);
    if (count > 0) return { kind: 'assign', eniId: first.id, unit, count, reason: why };
  }
  const room = canAddEni(input, f);
  if (room) {
    const count = pd
      ? Math.min(prefixesNeeded, f.maxSlotsPerEni)
      : f.ipTargetsDefined
        ? Math.min(f.short, f.maxIpsPerEni)
        : f.maxIpsPerEni;
    if (count > 0) return { kind: 'create-eni', unit, count, reason: why };
  }
  return {
    kind: 'none',
    reason: reason(
      'no-room',
      `${why.message}, but every ENI is full and no ENI can be added (max ${f.maxEni})`,
    ),
  };
}

/** An IPv4 CIDR's network address as a number, to release the highest first; NaN (no order) otherwise. */
function ipv4Value(cidr: string): number {
  const c = parseCidr(cidr);
  return c?.family === 4 ? Number(c.value) : Number.NaN;
}

/** Empty, cooled IPv4 /32s of an ENI: with prefix delegation, fallback addresses, highest first. */
function emptyFallbacks(e: PoolEni): PoolCidr[] {
  return e.cidrs
    .filter((c) => (c.family ?? 4) === 4 && !c.isPrefix && c.assigned === 0 && c.cooldown === 0)
    .sort((a, b) => ipv4Value(b.cidr) - ipv4Value(a.cidr));
}

function release(input: PoolInput, f: PoolFigures): PoolDecision | undefined {
  const t = input.targets;
  const pd = t.prefixDelegation;
  const wanted = f.ipTargetsDefined ? (pd ? f.overPrefixes : f.over) : f.freePrefixes - t.warmPrefixTarget;
  const enis = input.stats.enis
    .filter((e) => !e.excluded)
    .sort(
      (a, b) => a.assignedIPs - b.assignedIPs || b.deviceNumber - a.deviceNumber || (a.id < b.id ? 1 : -1),
    );
  const picked: { eniId: string; cidr: string }[] = [];
  // With prefix delegation, every empty fallback /32 goes first (the guard below keeps what the pool needs).
  if (pd) for (const e of enis) for (const c of emptyFallbacks(e)) picked.push({ eniId: e.id, cidr: c.cidr });
  const fallbacks = picked.length;
  for (const e of enis) {
    const empty = e.cidrs
      .filter((c) => inMode(c, pd) && c.isPrefix === pd && c.assigned === 0 && c.cooldown === 0)
      .sort((a, b) => ipv4Value(b.cidr) - ipv4Value(a.cidr));
    for (const c of empty) {
      if (picked.length - fallbacks >= wanted) break;
      picked.push({ eniId: e.id, cidr: c.cidr });
    }
  }
  // Never release so much that the next decision would grow again (no oscillation). With the reference's
  // targets this never trims anything; it guards settings the reference's start-up validation refuses.
  while (picked.length > 0) {
    const gone = new Set(picked.map((p) => `${p.eniId} ${p.cidr}`));
    const after = input.stats.enis.map((e) => ({
      ...e,
      cidrs: e.cidrs.filter((c) => !gone.has(`${e.id} ${c.cidr}`)),
    }));
    if (!lowWith(input, after)) break;
    picked.pop();
  }
  if (picked.length === 0) return undefined;
  const what = pd ? 'prefixes' : 'addresses';
  const code: ReasonCode = f.ipTargetsDefined ? 'above-ip-targets' : 'above-warm-prefix-target';
  const message = f.ipTargetsDefined
    ? `${wanted} ${what} over WARM_IP_TARGET ${t.warmIpTarget} / MINIMUM_IP_TARGET ${t.minimumIpTarget} (available ${f.available}, total ${f.total})`
    : `${f.freePrefixes} free prefixes > WARM_PREFIX_TARGET ${t.warmPrefixTarget}`;
  return { kind: 'release', cidrs: picked, reason: reason(code, message) };
}

function shouldRemoveExtraEnis(input: PoolInput, f: PoolFigures): boolean {
  const t = input.targets;
  if (f.ipTargetsDefined) return true;
  if (t.prefixDelegation) {
    return (
      f.available >= (t.warmPrefixTarget + 1) * f.maxIpsPerEni ||
      input.stats.enis.some((e) => !e.isPrimary && !e.isTrunk && !e.isEfa && e.assignedIPs === 0)
    );
  }
  return f.available >= (t.warmEniTarget + 1) * f.maxIpsPerEni;
}

function roundUp16(n: number): number {
  return Math.ceil(n / PREFIX_SIZE) * PREFIX_SIZE;
}

function freeEni(input: PoolInput, f: PoolFigures): PoolDecision | undefined {
  const { targets: t, timing, stats } = input;
  const pd = t.prefixDelegation;
  const candidates = stats.enis
    .filter(
      (e) =>
        !e.isPrimary &&
        !e.isTrunk &&
        !e.isEfa &&
        !e.excluded &&
        e.assignedIPs === 0 &&
        e.cooldownIPs === 0 &&
        timing.now - e.createdAt >= MIN_ENI_AGE_MS,
    )
    .sort((a, b) => b.deviceNumber - a.deviceNumber || (a.id < b.id ? 1 : -1));
  for (const eni of candidates) {
    const others = stats.enis.filter((e) => e !== eni);
    const o = countAddresses(others, pd);
    if (t.warmIpTarget > 0 && o.total - o.assigned < (pd ? roundUp16(t.warmIpTarget) : t.warmIpTarget))
      continue;
    if (t.minimumIpTarget > 0 && o.total < (pd ? roundUp16(t.minimumIpTarget) : t.minimumIpTarget)) continue;
    if (pd && !f.ipTargetsDefined && countFreePrefixes(others) < t.warmPrefixTarget) continue;
    // As for releases: never free an ENI whose loss would make the pool grow again.
    if (lowWith(input, others)) continue;
    return {
      kind: 'free-eni',
      eniId: eni.id,
      reason: reason(
        'extra-eni',
        `${eni.id} is empty, ${timing.now - eni.createdAt} ms old, and no target needs it`,
      ),
    };
  }
  return undefined;
}

/**
 * The warm-pool policy: one decision from datastore stats, targets, limits and time facts. Pure: no I/O, no
 * clock, no env. Semantics are the reference's (`updateIPPoolIfRequired` in `pkg/ipamd/ipamd.go`):
 *
 * 1. **Too low?** Not when the pool already holds max-pods addresses. With WARM_IP_TARGET or
 *    MINIMUM_IP_TARGET set (they take precedence), low ⇔ short > 0. Otherwise, with prefix delegation,
 *    low ⇔ available < 16 × WARM_PREFIX_TARGET; without, available < (IPv4-per-ENI − 1) × WARM_ENI_TARGET
 *    (and, with a 0 target, available = 0). Growing waits 120 s after a subnet-full error; it first adds
 *    IPs/prefixes to the lowest-numbered ENI with a free slot (not trunk, not excluded, not the primary
 *    under custom networking), else creates an ENI if there is room (`ENIs − excluded < maxENI −
 *    unmanaged − trunk reserve − excluded`). Prefix counts round up to 16 addresses.
 * 2. **Too high?** With IP targets, over > 0 (in prefixes with PD); with PD alone, free prefixes >
 *    WARM_PREFIX_TARGET; otherwise never. Releases happen at most every 30 s and only take CIDRs with no
 *    assigned and no cooling address, least-used ENI first. With PD, /32s (the fallback taken while the
 *    subnet had no free /28) count as addresses; once the node holds a prefix again, the empty ones are
 *    released first, whenever the pool stays within its targets without them (an extension: the reference
 *    never holds /32s with PD).
 * 3. **Extra ENI?** An empty ENI older than 1 min that is not primary, trunk, EFA or excluded, has no
 *    cooling address, and is not needed for WARM_IP_TARGET, MINIMUM_IP_TARGET (rounded to 16 with PD) or
 *    WARM_PREFIX_TARGET, is freed (highest device number first).
 *
 * Throws {@link WarmPoolError} (code `InvalidInput`, naming the field) for malformed input.
 *
 * Apply the decision and call again: each call returns one step. Neither releases nor frees ever take the
 * pool below what the next call would grow back, so with no pod churn the steps converge.
 *
 * @example
 * ```ts
 * import { decide, DEFAULT_TARGETS } from '@vpc-cni-kit/warm-pool';
 *
 * // `datastore`: a Datastore of @vpc-cni-kit/datastore; `enis`: an EniManager of @vpc-cni-kit/eni-manager.
 * const d = decide({
 *   stats: datastore.stats(),
 *   targets: { ...DEFAULT_TARGETS, warmIpTarget: 5 },
 *   limits: { maxEnis: 3, ipv4PerEni: 10, maxPods: 29 },
 *   timing: { now: Date.now() },
 * });
 * if (d.kind === 'assign') {
 *   await enis.assignIpv4(d.eniId, d.unit === 'ip' ? { ipv4Count: d.count } : { prefixCount: d.count });
 * }
 * ```
 */
export function decide(input: PoolInput): PoolDecision {
  validateInput(input);
  const f = poolFigures(input);
  const low = lowness(input, f);
  if (low.low) return grow(input, f, reason(low.code, low.message));
  let note: DecisionReason | undefined =
    low.code === 'at-max-pods' ? reason('at-max-pods', low.message) : undefined;

  const t = input.targets;
  const high = f.ipTargetsDefined
    ? (t.prefixDelegation ? f.overPrefixes : f.over) > 0
    : t.prefixDelegation && f.freePrefixes > t.warmPrefixTarget;
  // Prefix delegation: once prefixes can be had again (the node holds one), empty fallback /32s are
  // released whenever the pool can do without them. Before that they stay: releasing them would only make
  // the pool grow them back.
  const fallbackSpare =
    t.prefixDelegation &&
    f.totalPrefixes > 0 &&
    input.stats.enis.some((e) => !e.excluded && emptyFallbacks(e).length > 0);
  if (high || fallbackSpare) {
    const last = input.timing.lastShrinkAt;
    if (last !== undefined && input.timing.now - last < SHRINK_INTERVAL_MS) {
      if (high)
        note ??= reason(
          'shrink-too-soon',
          `pool too high, but the last shrink was ${input.timing.now - last} ms ago`,
        );
    } else {
      const r = release(input, f);
      if (r !== undefined) return r;
      if (high)
        note ??= reason(
          'nothing-releasable',
          'pool too high, but no excess CIDR is empty and out of cooldown',
        );
    }
  }
  if (shouldRemoveExtraEnis(input, f)) {
    const d = freeEni(input, f);
    if (d !== undefined) return d;
  }
  return {
    kind: 'none',
    reason: note ?? reason('within-targets', `available ${f.available}, total ${f.total}`),
  };
}
