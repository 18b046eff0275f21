import type { AddressFamily } from '../address.js';
import { formatAddress } from '../address.js';
import type { PodKey, PodMetadata } from '../types.js';
import { Deque, MinHeap } from './heap.js';

/** One address the datastore has handed out at least once (assigned now, or unassigned and remembered). */
export interface Entry {
  readonly offset: number;
  readonly address: string;
  readonly cidr: CidrState;
  key: PodKey | undefined;
  keyString: string | undefined;
  metadata: PodMetadata;
  assignedAt: number;
  /** Exact assignment time in Unix nanoseconds when restored from a checkpoint (else derived from ms). */
  assignedAtNs: bigint | undefined;
  unassignedAt: number | undefined;
  /** Serialized checkpoint entry, computed on the first checkpoint write and cached while assigned. */
  fragment: string | undefined;
  /** Bumped on every assignment of this address, so an undo can tell whether it is still its own. */
  generation: number;
  /** Unassigned, but the checkpoint saying so is not durable yet: the address must not be reused. */
  releasePending: boolean;
  /** Whether the entry sits in its CIDR's `cooling` queue (live or stale), so it is queued at most once. */
  inCooling: boolean;
}

/**
 * The addresses of one CIDR. Slots are offsets from the base. Offsets `>= highWater` were never handed out
 * (except those in `reservedAbove`, placed by a restore); `free` holds lower offsets that are unassigned and
 * out of cooldown; `cooling` holds unassigned entries in release order. The next address is always the
 * lowest offset that is neither assigned nor cooling, as in the reference's `getUnusedIP`.
 */
export class CidrState {
  removed = false;
  assigned = 0;
  readonly entries = new Map<number, Entry>();
  /** Created on first use, like `free`: most /32s never need them (and `stats` reads every CIDR's). */
  private cooling: Deque<Entry> | undefined;
  private free: MinHeap<number> | undefined;
  private highWater = 0;
  private reservedAbove: Set<number> | undefined;

  constructor(
    readonly text: string,
    readonly family: AddressFamily,
    readonly base: bigint,
    readonly size: number,
    readonly isPrefix: boolean,
    readonly eni: EniState,
  ) {}

  addressAt(offset: number): string {
    return formatAddress(this.family, this.base + BigInt(offset));
  }

  /**
   * Moves entries whose cooldown has passed (`now − unassignedAt > cooldownMs`) and whose release is durable
   * to the free heap.
   */
  promote(now: number, cooldownMs: number): void {
    const cooling = this.cooling;
    if (cooling === undefined) return;
    for (;;) {
      const head = cooling.peek();
      if (head === undefined) return;
      if (head.key !== undefined) {
        cooling.shift();
        head.inCooling = false;
        continue;
      }
      // A release that is not durable yet blocks the queue: releases become durable in order anyway.
      if (head.releasePending) return;
      if (now - (head.unassignedAt ?? 0) <= cooldownMs) return;
      cooling.shift();
      head.inCooling = false;
      this.pushFree(head.offset);
    }
  }

  /** Queues an unassigned entry for its cooldown (once: `inCooling` tells whether it is queued already). */
  cool(e: Entry): void {
    if (e.inCooling) return;
    (this.cooling ??= new Deque<Entry>()).push(e);
    e.inCooling = true;
  }

  private pushFree(offset: number): void {
    this.free ??= new MinHeap<number>((a, b) => a < b);
    this.free.push(offset);
  }

  private dropStaleFree(): void {
    if (this.free === undefined) return;
    for (;;) {
      const top = this.free.peek();
      if (top === undefined) return;
      const e = this.entries.get(top);
      if (e === undefined || e.key === undefined) return;
      this.free.pop();
    }
  }

  private skipReserved(): void {
    if (this.reservedAbove === undefined) return;
    while (this.reservedAbove.has(this.highWater)) {
      this.reservedAbove.delete(this.highWater);
      this.highWater += 1;
    }
  }

  /** True when an address can be taken now (call `promote` first). */
  hasReady(): boolean {
    this.dropStaleFree();
    if (this.free !== undefined && this.free.size > 0) return true;
    this.skipReserved();
    return this.highWater < this.size;
  }

  /** Takes the lowest ready offset, or `undefined` (call `promote` first). */
  take(): number | undefined {
    this.dropStaleFree();
    const f = this.free?.pop();
    if (f !== undefined) return f;
    this.skipReserved();
    if (this.highWater >= this.size) return undefined;
    const o = this.highWater;
    this.highWater += 1;
    return o;
  }

  /** Gives back an offset taken by `take` whose assignment was undone (not cooled: it was never used). */
  untake(offset: number): void {
    this.pushFree(offset);
  }

  /** Marks a specific offset as taken (restore). */
  reserve(offset: number): void {
    if (offset >= this.highWater) (this.reservedAbove ??= new Set<number>()).add(offset);
    // Below the high-water mark the offset is either in `free` (dropped lazily because its entry is now
    // assigned) or in `cooling` (dropped by `promote` for the same reason).
  }

  /** Cooling addresses (call `promote` first for an exact count). */
  coolingCount(): number {
    return this.cooling === undefined ? 0 : this.cooling.count(isUnassigned);
  }
}

/** An entry no pod holds (a cooling queue also keeps entries taken again, skipped lazily). */
function isUnassigned(e: Entry): boolean {
  return e.key === undefined;
}

/** Address order: IPv4 /32s and prefixes by base address (the order `stats` lists them in). */
function byBase(a: CidrState, b: CidrState): number {
  return a.base < b.base ? -1 : a.base > b.base ? 1 : 0;
}

function bucketOf(c: CidrState, assigned: number): number {
  return assigned >= c.size ? -1 : Math.min(assigned, 16);
}

/** One ENI and its CIDRs, with an index of ready /32 secondary addresses (longest ready first). */
export class EniState {
  assigned = 0;
  /** Its /32 secondary addresses, in the order added (change through `addCidr` and `deleteCidr` only). */
  readonly secondaries = new Map<string, CidrState>();
  /** Its prefixes, in the order added (change through `addCidr` and `deleteCidr` only). */
  readonly prefixes = new Map<string, CidrState>();
  /** Its CIDRs in address order, kept until one is added or removed (`stats` reads it on every call). */
  private inOrder: CidrState[] | undefined;
  /**
   * /32s with their one address ready, in the order they became ready (as added, then as they leave
   * cooldown); may hold removed or taken CIDRs, skipped lazily.
   */
  readonly secondaryReady = new Deque<CidrState>();
  /** /32s whose address is cooling, in release order. */
  readonly secondaryCooling = new Deque<CidrState>();
  /**
   * Prefixes by assigned count (index 0–16; an IPv6 /80 with more than 16 sits in 16); full prefixes are in
   * none. Within a bucket, insertion order: the prefix that reached the count first comes first.
   */
  readonly prefixBuckets: Set<CidrState>[] = Array.from({ length: 17 }, () => new Set<CidrState>());

  constructor(
    readonly id: string,
    readonly deviceNumber: number,
    readonly routeTableId: number,
    readonly subnetId: string,
    readonly networkCard: number,
    readonly isPrimary: boolean,
    readonly isTrunk: boolean,
    readonly isEfa: boolean,
    readonly excluded: boolean,
    readonly createdAt: number,
  ) {}

  /** Adds a CIDR (a /32 to `secondaries`, a prefix to `prefixes`). */
  addCidr(c: CidrState): void {
    (c.isPrefix ? this.prefixes : this.secondaries).set(c.text, c);
    this.inOrder = undefined;
  }

  /** Removes a CIDR from `secondaries` or `prefixes`. */
  deleteCidr(c: CidrState): void {
    this.secondaries.delete(c.text);
    this.prefixes.delete(c.text);
    this.inOrder = undefined;
  }

  /**
   * Its CIDRs, /32s and prefixes together, in address order (ties: /32s, then prefixes, each in the order
   * added). Sorted once per change rather than on every read; do not modify the array.
   */
  cidrsInOrder(): readonly CidrState[] {
    this.inOrder ??= [...this.secondaries.values(), ...this.prefixes.values()].sort(byBase);
    return this.inOrder;
  }

  /** Moves a prefix to the bucket matching its assigned count (after `from` → current count changed). */
  rebucket(c: CidrState, from: number | undefined): void {
    if (from !== undefined) this.prefixBuckets[bucketOf(c, from)]?.delete(c);
    if (!c.removed) this.prefixBuckets[bucketOf(c, c.assigned)]?.add(c);
  }

  /** Primary, trunk and EFA ENIs are never freed, so the allocator fills them first. */
  get pinned(): boolean {
    return this.isPrimary || this.isTrunk || this.isEfa;
  }

  /** The /32 ready longest, after promoting cooled ones; `undefined` if none. */
  readySecondary(now: number, cooldownMs: number): CidrState | undefined {
    for (;;) {
      const c = this.secondaryCooling.peek();
      if (c === undefined) break;
      if (c.removed) {
        this.secondaryCooling.shift();
        continue;
      }
      c.promote(now, cooldownMs);
      if (c.hasReady()) {
        this.secondaryCooling.shift();
        this.secondaryReady.push(c);
        continue;
      }
      if (c.coolingCount() === 0) {
        this.secondaryCooling.shift();
        continue;
      }
      break;
    }
    for (;;) {
      const top = this.secondaryReady.peek();
      if (top === undefined) return undefined;
      if (!top.removed && top.hasReady()) return top;
      this.secondaryReady.shift();
    }
  }
}
