import { familyBits } from '@vpc-cni-kit/ip-address';
import type { AddressFamily } from './address.js';
import { containingCidr, formatAddress, parseAddress, parseCidr } from './address.js';
import type {
  CheckpointContents,
  CheckpointDocument,
  CheckpointEntry,
  Checkpointer,
  GroupCommitCheckpointer,
} from './checkpoint.js';
import {
  isGroupCommitCheckpointer,
  parseRestorableCheckpoint,
  serializeCheckpointEntry,
  serializeCheckpointFromEntries,
} from './checkpoint.js';
import type { Clock } from './clock.js';
import { DatastoreError, isDatastoreError } from './errors.js';
import type { Entry } from './internal/state.js';
import { CidrState, EniState } from './internal/state.js';
import type {
  Assignment,
  AssignResult,
  CidrStats,
  DatastoreStats,
  DroppedAssignment,
  EniSpec,
  EniStats,
  PodKey,
  PodMetadata,
  Releasable,
  ReleasedAddress,
  UnassignResult,
} from './types.js';

/** The reference's default `IP_COOLDOWN_PERIOD`: 30 seconds. */
export const DEFAULT_COOLDOWN_MS = 30_000;

/** Network name of the legacy key the reference falls back to on DEL (`_migrated-from-cri`). */
export const LEGACY_NETWORK_NAME = '_migrated-from-cri';
/** Interface name of the legacy fallback key (`unknown`). */
export const LEGACY_IF_NAME = 'unknown';

/** Options for a {@link Datastore}. */
export interface DatastoreOptions {
  /** Time source for assign/unassign times and cooldown. */
  readonly clock: Clock;
  /**
   * Where every assign/unassign is persisted: a synchronous {@link Checkpointer} (each change is durable
   * when the call returns) or a {@link GroupCommitCheckpointer} (changes are applied at once and made
   * durable in the background, many per write; use {@link Datastore.assignPending} and
   * {@link Datastore.unassignPending} and wait for `durable`).
   */
  readonly checkpointer: Checkpointer | GroupCommitCheckpointer;
  /**
   * Assign from /28 (IPv4) or /80 (IPv6) prefixes instead of /32 secondary addresses. Default false. With
   * IPv4, /32s the ENIs hold are still counted and handed out once no prefix has a ready address (the
   * fallback taken while the subnet has no free /28).
   */
  readonly prefixDelegation?: boolean;
  /** Address family pods get: 4 (default) or 6. IPv6 requires prefix delegation. */
  readonly family?: AddressFamily;
  /** How long an unassigned address stays unusable (`IP_COOLDOWN_PERIOD`), ms. Default 30 000. */
  readonly cooldownMs?: number;
}

/** Result of a forced ENI or CIDR removal. */
export interface RemovalResult {
  /** Assignments that were dropped because their addresses went away. */
  readonly dropped: readonly DroppedAssignment[];
  /**
   * Set when the checkpoint could not be rewritten after dropping assignments. The removal itself stands
   * (the addresses are gone); the next successful write brings the checkpoint up to date. Never set with a
   * {@link GroupCommitCheckpointer}: the rewrite is requested, not awaited (await {@link Datastore.flush}).
   */
  readonly checkpointError?: DatastoreError;
}

/**
 * A change the datastore has applied in memory and asked its checkpointer to persist. Lookups and later
 * assigns already see it; nothing outside the process (a CNI runtime, a peer) may be told about it before
 * `durable` resolves.
 */
export interface PendingChange<T> {
  /** The outcome of the change. */
  readonly result: T;
  /**
   * Resolves with `result` once a checkpoint holding the change is durable. Rejects with a
   * `CheckpointWriteFailed` {@link DatastoreError} after the change has been undone in memory (see
   * {@link Datastore.assignPending}; a change is undone only if the state it made is still there, e.g. not
   * when a forced CIDR removal dropped the assignment meanwhile). Always await or handle it: an unhandled rejection ends a Node process.
   */
  readonly durable: Promise<T>;
}

/** One change waiting for its checkpoint write: how to settle it either way (each runs at most once). */
interface ChangeRecord {
  settled: boolean;
  /** Not durable: undone after a failed write, or (a confirmation) no longer true when snapshotted. */
  failed: boolean;
  batch: ChangeRecord[] | undefined;
  /**
   * For an idempotent assign that changed nothing: whether what it returned still holds when the write
   * snapshots the state (the assignment it confirmed may have been undone by an earlier failed write).
   */
  holds: (() => boolean) | undefined;
  undo(): void;
  durable(): void;
}

/** Why a checkpoint entry was not restored. */
export type RestoreDropReason =
  /** Its address lies in no CIDR the datastore knows (the reference logs it as stale and drops it). */
  | 'outside-known-cidrs'
  /** The caller's `keep` predicate refused it (e.g. the pod's host veth no longer exists). */
  | 'rejected';

/** The outcome of {@link Datastore.restore}. Every entry is either restored or listed in `dropped`. */
export interface RestoreReport {
  /** False when there was no checkpoint (a fresh node). */
  readonly found: boolean;
  /** Entries restored as assignments. */
  readonly restored: number;
  /** Entries not restored, each with the reason. */
  readonly dropped: readonly { readonly entry: CheckpointEntry; readonly reason: RestoreDropReason }[];
  /**
   * Set when the checkpoint could not be rewritten after the restore; the in-memory state stands. Never set
   * with a {@link GroupCommitCheckpointer}: await {@link Datastore.flush} after the restore instead.
   */
  readonly checkpointError?: DatastoreError;
}

/** Options for {@link Datastore.restore}. */
export interface RestoreOptions {
  /** Decide per entry whether to restore it (e.g. check for the pod's host veth). Default: keep all. */
  readonly keep?: (entry: CheckpointEntry) => boolean;
  /**
   * The checkpoint already read and checked by {@link parseRestorableCheckpoint} (`null`: there was none, a fresh
   * node), so a caller that validates it before changing anything need not read it twice. Absent: `restore`
   * reads it through the checkpointer.
   */
  readonly document?: CheckpointDocument | null;
}

function keyString(key: PodKey): string {
  return `${key.networkName}/${key.containerID}/${key.ifName}`;
}

function validKeyPart(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function checkKey(key: PodKey): void {
  if (
    typeof key !== 'object' ||
    key === null ||
    !validKeyPart(key.networkName) ||
    !validKeyPart(key.containerID) ||
    !validKeyPart(key.ifName)
  ) {
    throw new DatastoreError(
      'InvalidArgument',
      'pod key needs non-empty networkName, containerID and ifName',
    );
  }
}

function checkMetadata(meta: PodMetadata): void {
  if (typeof meta !== 'object' || meta === null) {
    throw new DatastoreError('InvalidArgument', 'pod metadata must be an object');
  }
  const c = meta.interfacesCount;
  if (c !== undefined && (!Number.isInteger(c) || c < 0)) {
    throw new DatastoreError('InvalidArgument', 'interfacesCount must be a non-negative integer');
  }
  for (const f of ['namespace', 'name'] as const) {
    if (meta[f] !== undefined && typeof meta[f] !== 'string') {
      throw new DatastoreError('InvalidArgument', `metadata.${f} must be a string`);
    }
  }
}

function newEntry(cidr: CidrState, offset: number, now: number): Entry {
  return {
    offset,
    address: cidr.addressAt(offset),
    cidr,
    key: undefined,
    keyString: undefined,
    metadata: {},
    assignedAt: now,
    assignedAtNs: undefined,
    unassignedAt: undefined,
    fragment: undefined,
    generation: 0,
    releasePending: false,
    inCooling: false,
  };
}

function changeRecord(undo: () => void, durable: () => void): ChangeRecord {
  return { settled: false, failed: false, batch: undefined, holds: undefined, undo, durable };
}

function noop(): void {}

/** Seals changes into the batch one write carries, checking confirmations against the snapshot. */
function seal(batch: ChangeRecord[]): void {
  for (const c of batch) {
    c.batch = batch;
    if (c.holds !== undefined && !c.holds()) c.failed = true;
  }
}

/**
 * Settles every change of one write: all durable, or all undone newest first (so a release of an address
 * assigned in the same write is undone before that assignment). Idempotent per change.
 */
function settleBatch(batch: readonly ChangeRecord[], ok: boolean): void {
  for (let i = 0; i < batch.length; i++) {
    const c = batch[ok ? i : batch.length - 1 - i]!;
    if (c.settled) continue;
    c.settled = true;
    if (ok && !c.failed) c.durable();
    else {
      c.failed = true;
      c.undo();
    }
  }
}

function isUint(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * IPAM state for one network card of a node: ENIs, their CIDRs, pod assignments, cooldown, and a
 * checkpoint written after every assign and unassign.
 *
 * **Allocation order** (deterministic; the reference iterates a Go map, so its order is unspecified). It
 * packs, so that empty prefixes stay releasable and idle ENIs stay freeable. Each non-excluded ENI offers
 * one candidate CIDR of the current mode with a ready address: with prefix delegation, its prefix with the
 * most assigned addresses (ties: the one that reached that count first), and only when none of its prefixes
 * has a ready address, its /32 that has been ready longest (the fallback: /32 secondary addresses taken while
 * the subnet had no free /28, see ADR 0012); without, the /32 that has been ready longest (in the order
 * added, then in the order they leave cooldown).
 * Candidates are ranked:
 * 1. a partly used CIDR before an empty one (never open a prefix while another has room);
 * 2. then pinned ENIs first (primary, trunk, EFA: they are never freed anyway);
 * 3. then the ENI with the most assigned addresses (fill before spilling);
 * 4. then the lowest device number, then the ENI id.
 * Within the CIDR, the lowest address that is neither assigned nor cooling (as the reference's
 * `getUnusedIP` ends up choosing).
 *
 * **Cost.** Assign, unassign and the lookups are O(1) amortized, with no scan over addresses or CIDRs:
 * prefixes are kept in buckets by assigned count, ready /32s and cooling addresses in queues,
 * and the choice looks at one candidate per ENI (ENIs are bounded by the instance's limit). Writing the
 * checkpoint is O(assignments), as the file is rewritten whole (as the reference does).
 *
 * @example
 * ```ts
 * import { Datastore, systemClock, createFileCheckpointer } from '@vpc-cni-kit/datastore';
 *
 * const ds = new Datastore({ clock: systemClock, checkpointer: createFileCheckpointer('/var/run/aws-node/ipam.json') });
 * ds.addEni({ id: 'eni-0a', deviceNumber: 0, routeTableId: 254, subnetId: 'subnet-1', isPrimary: true });
 * ds.addCidr('eni-0a', '10.0.1.23/32');
 * const r = ds.assign({ networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' }, { namespace: 'default', name: 'web-1' });
 * // r.address === '10.0.1.23', r.deviceNumber === 0, r.routeTableId === 254
 * ```
 */
export class Datastore {
  private readonly clock: Clock;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly group: GroupCommitCheckpointer | undefined;
  /** Changes made since the group-commit checkpointer last took a snapshot (serialized). */
  private unsnapshotted: ChangeRecord[] = [];
  private readonly cooldownMs: number;
  /** Whether pods get addresses from prefixes. */
  readonly prefixDelegation: boolean;
  /** Address family of pod addresses. */
  readonly family: AddressFamily;
  private readonly enis = new Map<string, EniState>();
  /** `enis` in `sortedEnis` order, until an ENI is added or removed. */
  private eniOrder: EniState[] | undefined;
  private readonly cidrs = new Map<string, CidrState>();
  private readonly byKey = new Map<string, Entry>();
  private readonly byAddress = new Map<string, Entry>();
  private staleSecondaries = 0;
  private used = false;

  constructor(options: DatastoreOptions) {
    const cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS;
    if (!Number.isFinite(cooldownMs) || cooldownMs < 0) {
      throw new DatastoreError('InvalidArgument', 'cooldownMs must be a non-negative number');
    }
    const family = options.family ?? 4;
    if (family !== 4 && family !== 6) throw new DatastoreError('InvalidArgument', 'family must be 4 or 6');
    const pd = options.prefixDelegation ?? false;
    if (family === 6 && !pd) {
      throw new DatastoreError('InvalidArgument', 'IPv6 pod addresses require prefix delegation');
    }
    this.clock = options.clock;
    const cp = options.checkpointer;
    if (typeof cp !== 'object' || cp === null) {
      throw new DatastoreError('InvalidArgument', 'checkpointer is required');
    }
    if (isGroupCommitCheckpointer(cp)) this.group = cp;
    else this.checkpointer = cp;
    this.cooldownMs = cooldownMs;
    this.prefixDelegation = pd;
    this.family = family;
  }

  // ---------------------------------------------------------------- ENIs and CIDRs

  /** Adds an ENI. Throws `InvalidArgument` for a malformed spec and `DuplicateEni` if the id is known. */
  addEni(spec: EniSpec): void {
    if (typeof spec !== 'object' || spec === null || !validKeyPart(spec.id)) {
      throw new DatastoreError('InvalidArgument', 'ENI id must be a non-empty string');
    }
    if (!isUint(spec.deviceNumber) || !isUint(spec.routeTableId)) {
      throw new DatastoreError(
        'InvalidArgument',
        'deviceNumber and routeTableId must be non-negative integers',
        {
          eniId: spec.id,
        },
      );
    }
    if (typeof spec.subnetId !== 'string') {
      throw new DatastoreError('InvalidArgument', 'subnetId must be a string', { eniId: spec.id });
    }
    const nc = spec.networkCard ?? 0;
    if (!isUint(nc))
      throw new DatastoreError('InvalidArgument', 'networkCard must be a non-negative integer');
    const createdAt = spec.createdAt ?? this.clock.now();
    if (!Number.isFinite(createdAt))
      throw new DatastoreError('InvalidArgument', 'createdAt must be a number');
    if (this.enis.has(spec.id)) {
      throw new DatastoreError('DuplicateEni', `ENI ${spec.id} is already in the datastore`, {
        eniId: spec.id,
      });
    }
    this.eniOrder = undefined;
    this.enis.set(
      spec.id,
      new EniState(
        spec.id,
        spec.deviceNumber,
        spec.routeTableId,
        spec.subnetId,
        nc,
        spec.isPrimary ?? false,
        spec.isTrunk ?? false,
        spec.isEfa ?? false,
        spec.excluded ?? false,
        createdAt,
      ),
    );
  }

  /**
   * Removes an ENI and its CIDRs. An ENI with assigned addresses is refused (`EniInUse`) unless
   * `force` is set; a forced removal drops those assignments, returns them, and rewrites the checkpoint.
   */
  removeEni(eniId: string, options: { readonly force?: boolean } = {}): RemovalResult {
    const eni = this.requireEni(eniId);
    if (eni.assigned > 0 && !options.force) {
      throw new DatastoreError('EniInUse', `ENI ${eniId} has ${eni.assigned} assigned addresses`, { eniId });
    }
    const dropped: DroppedAssignment[] = [];
    for (const c of [...eni.secondaries.values(), ...eni.prefixes.values()]) this.detachCidr(c, dropped);
    this.enis.delete(eniId);
    this.eniOrder = undefined;
    return this.afterDrop(dropped);
  }

  /**
   * Adds a CIDR to an ENI: an IPv4 `/32` secondary address or `/28` prefix, or an IPv6 `/80` prefix.
   * Throws `InvalidCidr`, `UnknownEni`, or `DuplicateCidr` (also when it overlaps a known CIDR).
   */
  addCidr(eniId: string, cidr: string): void {
    const eni = this.requireEni(eniId);
    const p = typeof cidr === 'string' ? parseCidr(cidr) : undefined;
    const ok = p !== undefined && (p.family === 4 ? p.bits === 32 || p.bits === 28 : p.bits === 80);
    if (!ok) {
      throw new DatastoreError('InvalidCidr', `${String(cidr)} is not an IPv4 /32 or /28 or an IPv6 /80`, {
        eniId,
        cidr: String(cidr),
      });
    }
    const overlap = this.overlapping(p.family, p.base, p.bits);
    if (overlap !== undefined) {
      throw new DatastoreError('DuplicateCidr', `${p.text} overlaps ${overlap.text} on ${overlap.eni.id}`, {
        eniId: overlap.eni.id,
        cidr: p.text,
      });
    }
    const isPrefix = p.bits !== 32;
    const size = 2 ** (familyBits(p.family) - p.bits);
    const state = new CidrState(p.text, p.family, p.base, size, isPrefix, eni);
    this.cidrs.set(p.text, state);
    eni.addCidr(state);
    if (isPrefix) eni.rebucket(state, undefined);
    else eni.secondaryReady.push(state);
  }

  /**
   * Removes a CIDR from an ENI. One with assigned addresses is refused (`CidrInUse`) unless `force` is set;
   * a forced removal drops and returns those assignments and rewrites the checkpoint.
   */
  removeCidr(eniId: string, cidr: string, options: { readonly force?: boolean } = {}): RemovalResult {
    const eni = this.requireEni(eniId);
    const p = typeof cidr === 'string' ? parseCidr(cidr) : undefined;
    const state = p === undefined ? undefined : this.cidrs.get(p.text);
    if (state === undefined || state.eni !== eni) {
      throw new DatastoreError('UnknownCidr', `${String(cidr)} is not on ENI ${eniId}`, {
        eniId,
        cidr: String(cidr),
      });
    }
    if (state.assigned > 0 && !options.force) {
      throw new DatastoreError('CidrInUse', `${state.text} has ${state.assigned} assigned addresses`, {
        eniId,
        cidr: state.text,
      });
    }
    const dropped: DroppedAssignment[] = [];
    this.detachCidr(state, dropped);
    return this.afterDrop(dropped);
  }

  // ---------------------------------------------------------------- assign / unassign

  /**
   * Assigns an address to a pod. Idempotent: a key that already holds an address gets the same one back.
   * Draws from prefixes with prefix delegation and from /32s otherwise, skipping cooling addresses, in the
   * order documented on the class. Throws `InvalidArgument`, `NoAvailableAddress`, or
   * `CheckpointWriteFailed` (the assignment is undone). Needs a synchronous {@link Checkpointer}
   * (`InvalidArgument` otherwise); with a {@link GroupCommitCheckpointer}, use {@link assignPending}.
   */
  assign(key: PodKey, metadata: PodMetadata = {}): AssignResult {
    this.requireSync('assign', 'assignPending');
    const applied = this.applyAssign(key, metadata);
    if (applied.change.holds === undefined) this.persistOrUndo(applied.change);
    return applied.result;
  }

  /**
   * Assigns an address to a pod (as {@link assign}) and returns it at once, with a promise that resolves
   * when the checkpoint holding it is durable. With a {@link GroupCommitCheckpointer} the write runs in the
   * background and is shared with other changes made meanwhile (group commit); the address is already
   * taken, so no concurrent assign can get it. If that write fails, every change that is not durable yet
   * (the ones it carried and the ones queued behind it) is undone, newest first, so the datastore returns
   * exactly to the last durable checkpoint, and each `durable` rejects with `CheckpointWriteFailed`: the
   * address is free again and was never durable, so the caller must report a failure (and undo whatever it
   * did with the address meanwhile). A key that already holds an address gets it back, and `durable` waits
   * for a checkpoint written after this call that still holds it.
   *
   * Throws at once for `InvalidArgument` and `NoAvailableAddress`; with a synchronous {@link Checkpointer}
   * the write happens inside the call, so `CheckpointWriteFailed` is thrown here and `durable` is resolved.
   */
  assignPending(key: PodKey, metadata: PodMetadata = {}): PendingChange<AssignResult> {
    const applied = this.applyAssign(key, metadata);
    return this.pending(applied.result, applied.change);
  }

  /**
   * Releases a pod's address; it then cools down for the configured period before reuse. When the key is
   * unknown, falls back to the reference's legacy key (`_migrated-from-cri`, same container id, ifName
   * `unknown`). Throws `UnknownPod`, or `CheckpointWriteFailed` (the address stays assigned). Needs a
   * synchronous {@link Checkpointer} (`InvalidArgument` otherwise); with a {@link GroupCommitCheckpointer},
   * use {@link unassignPending}.
   */
  unassign(key: PodKey): UnassignResult {
    this.requireSync('unassign', 'unassignPending');
    const applied = this.applyUnassign(key);
    this.persistOrUndo(applied.change);
    return applied.result;
  }

  /**
   * Releases a pod's address (as {@link unassign}) and returns at once, with a promise that resolves when
   * the checkpoint recording the release is durable. Until then the address is not handed out again, even
   * with a zero cooldown. If the write fails, the release is undone with every other change not durable
   * yet (as for {@link assignPending}): the pod holds the address again, and `durable` rejects with
   * `CheckpointWriteFailed`.
   *
   * Throws at once for `InvalidArgument` and `UnknownPod`; with a synchronous {@link Checkpointer} the write
   * happens inside the call, so `CheckpointWriteFailed` is thrown here and `durable` is resolved.
   */
  unassignPending(key: PodKey): PendingChange<UnassignResult> {
    const applied = this.applyUnassign(key);
    return this.pending(applied.result, applied.change);
  }

  /**
   * Writes the current state and resolves once it is durable (rejects with `CheckpointWriteFailed`). With a
   * {@link GroupCommitCheckpointer} it waits for a write that starts after this call, so it also covers
   * forced removals and restores, whose writes are otherwise not awaited; with a synchronous
   * {@link Checkpointer} it rewrites the checkpoint inside the call.
   */
  flush(): Promise<void> {
    if (this.group !== undefined) return this.group.commit(this.contents());
    try {
      this.persist();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private requireSync(method: string, alternative: string): void {
    if (this.group !== undefined) {
      throw new DatastoreError(
        'InvalidArgument',
        `${method}() needs a synchronous Checkpointer; with a GroupCommitCheckpointer use ${alternative}()`,
      );
    }
  }

  private applyAssign(key: PodKey, metadata: PodMetadata): { result: AssignResult; change: ChangeRecord } {
    checkKey(key);
    checkMetadata(metadata);
    const ks = keyString(key);
    const existing = this.byKey.get(ks);
    if (existing !== undefined) {
      // Nothing changes, but the assignment may not be durable yet: a group commit waits for a fresh write,
      // and that write must still hold the assignment (an earlier failed write may undo it meanwhile).
      const generation = existing.generation;
      const confirm = changeRecord(noop, noop);
      confirm.holds = () => existing.keyString === ks && existing.generation === generation;
      return { result: this.resultOf(existing), change: confirm };
    }

    const now = this.clock.now();
    this.used = true;
    const cidr = this.choose(now);
    const offset = cidr?.take();
    if (cidr === undefined || offset === undefined) {
      throw new DatastoreError('NoAvailableAddress', 'no available IP/prefix addresses', { podKey: ks });
    }
    let entry = cidr.entries.get(offset);
    const known = entry !== undefined;
    const previousUnassignedAt = entry?.unassignedAt;
    if (entry === undefined) {
      entry = newEntry(cidr, offset, now);
      cidr.entries.set(offset, entry);
    }
    this.markAssigned(entry, key, ks, metadata, now, undefined);
    const e = entry;
    const generation = e.generation;
    const change = changeRecord(
      () => {
        if (e.keyString !== ks || e.generation !== generation) return; // released or reassigned since
        this.markUnassigned(e);
        e.unassignedAt = previousUnassignedAt;
        if (cidr.removed) return;
        if (!known && !e.inCooling) cidr.entries.delete(offset);
        cidr.untake(offset);
        if (!cidr.isPrefix) cidr.eni.secondaryReady.push(cidr);
      },
      () => {},
    );
    return { result: this.resultOf(e), change };
  }

  private applyUnassign(key: PodKey): { result: UnassignResult; change: ChangeRecord } {
    checkKey(key);
    let entry = this.byKey.get(keyString(key));
    if (entry === undefined) {
      const legacy = {
        networkName: LEGACY_NETWORK_NAME,
        containerID: key.containerID,
        ifName: LEGACY_IF_NAME,
      };
      entry = this.byKey.get(keyString(legacy));
    }
    if (entry === undefined) {
      throw new DatastoreError('UnknownPod', `no address is assigned to ${keyString(key)}`, {
        podKey: keyString(key),
      });
    }
    const e = entry;
    const heldKey = e.key!;
    const heldKs = e.keyString!;
    const heldMeta = e.metadata;
    const heldAt = e.assignedAt;
    const heldAtNs = e.assignedAtNs;
    const heldGeneration = e.generation;
    const held = this.resultOf(e);
    const now = this.clock.now();
    this.markUnassigned(e);
    e.unassignedAt = now;
    e.releasePending = this.group !== undefined;
    const cidr = e.cidr;
    cidr.cool(e);
    if (!cidr.isPrefix) cidr.eni.secondaryCooling.push(cidr);
    const change = changeRecord(
      () => {
        e.releasePending = false;
        // Taken again (only possible once the release was durable), gone with its CIDR, or the key moved on.
        if (e.key !== undefined || cidr.removed || this.byKey.has(heldKs)) return;
        e.unassignedAt = undefined;
        this.markAssigned(e, heldKey, heldKs, heldMeta, heldAt, heldAtNs);
        e.generation = heldGeneration; // the same assignment again, so its own undo still applies
        // The entry stays in the cooling queues as a stale item; `promote` skips assigned entries.
      },
      () => {
        e.releasePending = false;
      },
    );
    const count = heldMeta.interfacesCount ?? 0;
    const result: UnassignResult = {
      address: held.address,
      eniId: held.eniId,
      deviceNumber: held.deviceNumber,
      routeTableId: held.routeTableId,
      cidr: held.cidr,
      interfacesCount: count === 0 ? 1 : count,
      key: heldKey,
    };
    return { result, change };
  }

  /** Synchronous checkpointer: write now; on failure undo the change and rethrow. */
  private persistOrUndo(change: ChangeRecord): void {
    try {
      this.persist();
    } catch (e) {
      change.settled = true;
      change.undo();
      throw e;
    }
  }

  private pending<T>(result: T, change: ChangeRecord): PendingChange<T> {
    if (this.group === undefined) {
      // Synchronous: written (or undone and thrown) here; a confirmation changes nothing to write.
      if (change.holds === undefined) this.persistOrUndo(change);
      return { result, durable: Promise.resolve(result) };
    }
    // Queue the record before committing: an idle checkpointer snapshots inside `commit`.
    this.unsnapshotted.push(change);
    const committed = this.group.commit(this.contents());
    const durable = committed.then(
      () => {
        // Normally settled already by `written`; this covers checkpointers that do not call it.
        settleBatch(change.batch ?? [change], true);
        if (change.failed) {
          throw new DatastoreError(
            'CheckpointWriteFailed',
            'the assignment was undone by an earlier failed checkpoint write',
          );
        }
        return result;
      },
      (cause: unknown) => {
        // Never snapshotted (the checkpointer failed before serializing): it must not settle later.
        const i = this.unsnapshotted.indexOf(change);
        if (i >= 0) this.unsnapshotted.splice(i, 1);
        settleBatch(change.batch ?? [change], false);
        throw isDatastoreError(cause, 'CheckpointWriteFailed')
          ? cause
          : new DatastoreError('CheckpointWriteFailed', 'the checkpoint could not be written', { cause });
      },
    );
    return { result, durable };
  }

  // ---------------------------------------------------------------- lookups

  /** The assignment held by exactly this pod key, if any. */
  findByPod(key: PodKey): Assignment | undefined {
    checkKey(key);
    const e = this.byKey.get(keyString(key));
    return e === undefined ? undefined : this.assignmentOf(e);
  }

  /** The assignment of an address (any textual form of it), if it is assigned. */
  findByAddress(address: string): Assignment | undefined {
    const a = typeof address === 'string' ? parseAddress(address) : undefined;
    if (a === undefined) return undefined;
    const e = this.byAddress.get(formatAddress(a.family, a.value));
    return e === undefined ? undefined : this.assignmentOf(e);
  }

  /** Every current assignment, oldest first. */
  assignments(): Assignment[] {
    return [...this.byKey.values()].map((e) => this.assignmentOf(e));
  }

  /**
   * Addresses pods held and gave back, on the ENIs and CIDRs still in the datastore, with when they were last
   * assigned and released (in or past their cooldown), in ENI then address order.
   */
  releasedAddresses(): ReleasedAddress[] {
    const out: ReleasedAddress[] = [];
    for (const eni of this.sortedEnis()) {
      for (const c of [...eni.secondaries.values(), ...eni.prefixes.values()]) {
        for (const e of [...c.entries.values()].sort((a, b) => a.offset - b.offset)) {
          if (e.key !== undefined || e.unassignedAt === undefined) continue;
          out.push({
            address: e.address,
            eniId: eni.id,
            cidr: c.text,
            assignedAt: e.assignedAt,
            unassignedAt: e.unassignedAt,
          });
        }
      }
    }
    return out;
  }

  /** The ids of the ENIs in the datastore, in device-number order. */
  eniIds(): string[] {
    return this.sortedEnis().map((e) => e.id);
  }

  // ---------------------------------------------------------------- stats

  /**
   * Counters for pool maths (see {@link DatastoreStats}), computed now; O(CIDRs), with no sorting (each ENI
   * keeps its CIDRs' address order between changes) and fresh objects on every call. The result is the input
   * shape of `@vpc-cni-kit/warm-pool`.
   */
  stats(): DatastoreStats {
    const now = this.clock.now();
    let totalIPs = 0;
    let assignedIPs = 0;
    let cooldownIPs = 0;
    let totalPrefixes = 0;
    const enis: EniStats[] = [];
    for (const eni of this.sortedEnis()) {
      let eTotal = 0;
      let eCooling = 0;
      const cidrs: CidrStats[] = [];
      for (const c of eni.cidrsInOrder()) {
        c.promote(now, this.cooldownMs);
        const cooling = c.coolingCount();
        eCooling += cooling;
        if (c.isPrefix && c.family === this.family) totalPrefixes += 1;
        if (this.inMode(c)) {
          eTotal += c.size;
          if (!eni.excluded) {
            totalIPs += c.size;
            assignedIPs += c.assigned;
            cooldownIPs += cooling;
          }
        }
        cidrs.push({
          cidr: c.text,
          isPrefix: c.isPrefix,
          family: c.family,
          size: c.size,
          assigned: c.assigned,
          cooldown: cooling,
        });
      }
      enis.push({
        id: eni.id,
        deviceNumber: eni.deviceNumber,
        networkCard: eni.networkCard,
        routeTableId: eni.routeTableId,
        subnetId: eni.subnetId,
        isPrimary: eni.isPrimary,
        isTrunk: eni.isTrunk,
        isEfa: eni.isEfa,
        excluded: eni.excluded,
        createdAt: eni.createdAt,
        totalIPs: eTotal,
        assignedIPs: eni.assigned,
        cooldownIPs: eCooling,
        cidrs,
      });
    }
    return { totalIPs, assignedIPs, cooldownIPs, availableIPs: totalIPs - assignedIPs, totalPrefixes, enis };
  }

  /**
   * What a shrink may release right now: CIDRs of the current mode with no assigned and no cooling address
   * (on non-excluded ENIs; the least-used ENI's first, with IPv4 prefix delegation its fallback /32s before
   * its prefixes, highest address first, mirroring the allocation order),
   * and ENIs with no assigned and no cooling address that are not primary, trunk, EFA or excluded (youngest first).
   * Whether to release them is the warm-pool policy's decision.
   */
  releasable(): Releasable {
    const now = this.clock.now();
    const enis = this.sortedEnis();
    const order = [...enis].sort(
      (a, b) => a.assigned - b.assigned || b.deviceNumber - a.deviceNumber || (a.id < b.id ? 1 : -1),
    );
    const cidrs: { eniId: string; cidr: string }[] = [];
    for (const eni of order) {
      if (eni.excluded) continue;
      // Fallback /32s before prefixes, then the highest address first.
      const pool = [...this.modeCidrs(eni)].sort(
        (a, b) => Number(a.isPrefix) - Number(b.isPrefix) || (a.base > b.base ? -1 : a.base < b.base ? 1 : 0),
      );
      for (const c of pool) {
        c.promote(now, this.cooldownMs);
        if (c.assigned === 0 && c.coolingCount() === 0) cidrs.push({ eniId: eni.id, cidr: c.text });
      }
    }
    const free: EniState[] = [];
    for (const eni of enis) {
      if (eni.pinned || eni.excluded || eni.assigned > 0) continue;
      let cooling = 0;
      for (const c of [...eni.secondaries.values(), ...eni.prefixes.values()]) {
        c.promote(now, this.cooldownMs);
        cooling += c.coolingCount();
      }
      if (cooling === 0) free.push(eni);
    }
    free.sort((a, b) => b.createdAt - a.createdAt || b.deviceNumber - a.deviceNumber);
    return { cidrs, enis: free.map((e) => e.id) };
  }

  // ---------------------------------------------------------------- checkpoint restore

  /**
   * Restores assignments from the checkpoint into a datastore whose ENIs and CIDRs are already known (add
   * them from IMDS/EC2 first, as the reference's node init does) and which has not assigned anything yet
   * (otherwise `RestoreNotEmpty`).
   * Everything is validated before anything changes: unreadable, malformed or wrong-version checkpoints, and
   * two entries with the same address or pod key, throw a {@link DatastoreError} and restore nothing.
   * Entries whose address is in no known CIDR, or that `keep` refuses, are not restored and are listed in
   * the report (never lost silently). The checkpoint is then rewritten, as the reference does.
   */
  restore(options: RestoreOptions = {}): RestoreReport {
    if (this.used) {
      throw new DatastoreError('RestoreNotEmpty', 'restore must come before the first assign');
    }
    let doc: CheckpointDocument | null;
    if (options.document !== undefined) doc = options.document;
    else {
      let text: string | undefined;
      try {
        text = (this.group ?? this.checkpointer!).read();
      } catch (cause) {
        if (isDatastoreError(cause)) throw cause;
        throw new DatastoreError('CheckpointReadFailed', 'cannot read the checkpoint', { cause });
      }
      doc = text === undefined ? null : parseRestorableCheckpoint(text);
    }
    if (doc === null) return { found: false, restored: 0, dropped: [] };

    const dropped: { entry: CheckpointEntry; reason: RestoreDropReason }[] = [];
    const place: { entry: CheckpointEntry; cidr: CidrState; offset: number }[] = [];
    for (const entry of doc.allocations) {
      const parsed = parseAddress((entry.ipv4 ?? entry.ipv6)!)!;
      const cidr = this.cidrOf(parsed.family, parsed.value);
      if (cidr === undefined) {
        dropped.push({ entry, reason: 'outside-known-cidrs' });
        continue;
      }
      if (options.keep !== undefined && !options.keep(entry)) {
        dropped.push({ entry, reason: 'rejected' });
        continue;
      }
      place.push({ entry, cidr, offset: Number(parsed.value - cidr.base) });
    }
    for (const { entry, cidr, offset } of place) {
      let e = cidr.entries.get(offset);
      if (e === undefined) {
        e = newEntry(cidr, offset, 0);
        cidr.entries.set(offset, e);
      }
      cidr.reserve(offset);
      const key = { networkName: entry.networkName, containerID: entry.containerID, ifName: entry.ifName };
      const m = entry.metadata;
      const meta: PodMetadata = {
        ...(m.k8sPodNamespace === undefined ? {} : { namespace: m.k8sPodNamespace }),
        ...(m.k8sPodName === undefined ? {} : { name: m.k8sPodName }),
        ...(m.interfacesCount === undefined ? {} : { interfacesCount: m.interfacesCount }),
      };
      e.unassignedAt = undefined;
      this.markAssigned(
        e,
        key,
        keyString(key),
        meta,
        Number(entry.allocationTimestamp / 1_000_000n),
        entry.allocationTimestamp,
      );
    }
    let checkpointError: DatastoreError | undefined;
    try {
      this.persist();
    } catch (e) {
      checkpointError = e as DatastoreError;
    }
    return {
      found: true,
      restored: place.length,
      dropped,
      ...(checkpointError === undefined ? {} : { checkpointError }),
    };
  }

  // ---------------------------------------------------------------- internals

  private requireEni(eniId: string): EniState {
    const eni = typeof eniId === 'string' ? this.enis.get(eniId) : undefined;
    if (eni === undefined) {
      throw new DatastoreError('UnknownEni', `ENI ${String(eniId)} is not in the datastore`, {
        eniId: String(eniId),
      });
    }
    return eni;
  }

  /** The ENIs by device number, then id; sorted once per ENI added or removed. Do not modify the array. */
  private sortedEnis(): readonly EniState[] {
    this.eniOrder ??= [...this.enis.values()].sort(
      (a, b) => a.deviceNumber - b.deviceNumber || (a.id < b.id ? -1 : 1),
    );
    return this.eniOrder;
  }

  /**
   * Whether a CIDR serves pods: of the pod family and the current mode, and, with IPv4 prefix delegation,
   * also a /32 (a fallback address taken while the subnet had no free /28).
   */
  private inMode(c: CidrState): boolean {
    if (c.family !== this.family) return false;
    return c.isPrefix === this.prefixDelegation || (this.fallsBack() && !c.isPrefix);
  }

  /** IPv4 prefix delegation also serves /32 secondary addresses (the fallback), after its prefixes. */
  private fallsBack(): boolean {
    return this.prefixDelegation && this.family === 4;
  }

  /** The CIDRs that serve pods on an ENI; with the fallback, its /32s come first (they are released first). */
  private modeCidrs(eni: EniState): Iterable<CidrState> {
    if (!this.prefixDelegation) return this.family === 4 ? eni.secondaries.values() : [];
    const prefixes = [...eni.prefixes.values()].filter((c) => c.family === this.family);
    return this.fallsBack() ? [...eni.secondaries.values(), ...prefixes] : prefixes;
  }

  /** Picks the CIDR to allocate from (see the class comment), or `undefined` when none has a ready address. */
  private choose(now: number): CidrState | undefined {
    let best: CidrState | undefined;
    for (const eni of this.enis.values()) {
      if (eni.excluded) continue;
      const c = this.bestCidrOn(eni, now);
      if (c !== undefined && (best === undefined || this.cidrBefore(c, best))) best = c;
    }
    return best;
  }

  private cidrBefore(a: CidrState, b: CidrState): boolean {
    if (a.assigned > 0 !== b.assigned > 0) return a.assigned > 0;
    const ea = a.eni;
    const eb = b.eni;
    if (ea.pinned !== eb.pinned) return ea.pinned;
    if (ea.assigned !== eb.assigned) return ea.assigned > eb.assigned;
    if (ea.deviceNumber !== eb.deviceNumber) return ea.deviceNumber < eb.deviceNumber;
    return ea.id < eb.id;
  }

  private bestCidrOn(eni: EniState, now: number): CidrState | undefined {
    if (!this.prefixDelegation) {
      return this.family === 4 ? eni.readySecondary(now, this.cooldownMs) : undefined;
    }
    for (let k = 16; k >= 0; k--) {
      for (const c of eni.prefixBuckets[k]!) {
        if (c.family !== this.family) continue;
        c.promote(now, this.cooldownMs);
        if (c.hasReady()) return c;
      }
    }
    return this.fallsBack() ? eni.readySecondary(now, this.cooldownMs) : undefined;
  }

  private markAssigned(
    e: Entry,
    key: PodKey,
    ks: string,
    meta: PodMetadata,
    atMs: number,
    atNs: bigint | undefined,
  ): void {
    e.key = { networkName: key.networkName, containerID: key.containerID, ifName: key.ifName };
    e.keyString = ks;
    e.metadata = { ...meta };
    e.assignedAt = atMs;
    e.assignedAtNs = atNs;
    e.fragment = undefined;
    e.generation += 1;
    e.cidr.assigned += 1;
    e.cidr.eni.assigned += 1;
    if (e.cidr.isPrefix) e.cidr.eni.rebucket(e.cidr, e.cidr.assigned - 1);
    this.byKey.set(ks, e);
    this.byAddress.set(e.address, e);
  }

  private markUnassigned(e: Entry): void {
    this.byKey.delete(e.keyString!);
    this.byAddress.delete(e.address);
    e.key = undefined;
    e.keyString = undefined;
    e.fragment = undefined;
    e.cidr.assigned -= 1;
    e.cidr.eni.assigned -= 1;
    if (e.cidr.isPrefix) e.cidr.eni.rebucket(e.cidr, e.cidr.assigned + 1);
  }

  /** The entry's checkpoint JSON, computed once per assignment. */
  private fragmentOf(e: Entry): string {
    if (e.fragment !== undefined) return e.fragment;
    const key = e.key!;
    const meta = e.metadata;
    e.fragment = serializeCheckpointEntry({
      networkName: key.networkName,
      containerID: key.containerID,
      ifName: key.ifName,
      ...(e.cidr.family === 4 ? { ipv4: e.address } : { ipv6: e.address }),
      allocationTimestamp: e.assignedAtNs ?? BigInt(Math.trunc(e.assignedAt)) * 1_000_000n,
      metadata: {
        ...(meta.namespace === undefined ? {} : { k8sPodNamespace: meta.namespace }),
        ...(meta.name === undefined ? {} : { k8sPodName: meta.name }),
        ...(meta.interfacesCount === undefined ? {} : { interfacesCount: meta.interfacesCount }),
      },
    });
    return e.fragment;
  }

  /**
   * The live state as checkpoint contents. `serialize` snapshots the state when called; for a group commit
   * that moment also seals the changes made so far into the batch that write settles.
   */
  private contents(): CheckpointContents {
    const entries = this.byKey;
    let sealed: ChangeRecord[] = [];
    return {
      get allocations() {
        return entries.size;
      },
      serialize: () => {
        if (this.unsnapshotted.length > 0) {
          sealed = this.unsnapshotted;
          this.unsnapshotted = [];
          seal(sealed);
        }
        return serializeCheckpointFromEntries([...entries.values()].map((e) => this.fragmentOf(e)));
      },
      written: (ok: boolean) => {
        const batch = sealed;
        sealed = [];
        if (ok) {
          settleBatch(batch, true);
          return;
        }
        // Fail everything not durable yet — this write's changes and those queued behind it — and undo it
        // all newest first, so memory returns exactly to the last durable checkpoint.
        const later = this.unsnapshotted;
        this.unsnapshotted = [];
        settleBatch([...batch, ...later], false);
        // Have the file catch up (a failed directory fsync may have left the newer snapshot in place).
        if (batch.length + later.length > 0) this.persist();
      },
    };
  }

  /**
   * Persists the current state. Synchronous checkpointer: durable on return, or throws. Group commit: the
   * write is requested and not awaited (forced removals and restore, which cannot be undone anyway; a
   * failure leaves the previous checkpoint, which the next successful write replaces — see {@link flush}).
   */
  private persist(): void {
    if (this.group !== undefined) {
      this.group.commit(this.contents()).catch(() => undefined);
      return;
    }
    try {
      this.checkpointer!.write(this.contents());
    } catch (cause) {
      if (isDatastoreError(cause, 'CheckpointWriteFailed')) throw cause;
      throw new DatastoreError('CheckpointWriteFailed', 'the checkpoint could not be written', { cause });
    }
  }

  private detachCidr(c: CidrState, dropped: DroppedAssignment[]): void {
    for (const e of c.entries.values()) {
      if (e.key === undefined) continue;
      dropped.push({ key: e.key, metadata: e.metadata, address: e.address, cidr: c.text });
      this.markUnassigned(e);
    }
    c.removed = true;
    if (c.isPrefix) c.eni.rebucket(c, c.assigned);
    this.cidrs.delete(c.text);
    c.eni.deleteCidr(c);
    if (!c.isPrefix) {
      this.staleSecondaries += 1;
      const heap = c.eni.secondaryReady;
      if (this.staleSecondaries > 64 && this.staleSecondaries * 2 > heap.length) {
        for (const eni of this.enis.values()) eni.secondaryReady.filter((x) => !x.removed);
        this.staleSecondaries = 0;
      }
    }
  }

  private afterDrop(dropped: DroppedAssignment[]): RemovalResult {
    if (dropped.length === 0) return { dropped };
    try {
      this.persist();
      return { dropped };
    } catch (e) {
      return { dropped, checkpointError: e as DatastoreError };
    }
  }

  private overlapping(family: AddressFamily, base: bigint, bits: number): CidrState | undefined {
    const same = this.cidrs.get(`${containingCidr(family, base, bits)}`);
    if (same !== undefined) return same;
    if (family === 4 && bits === 32) return this.cidrs.get(containingCidr(4, base, 28));
    if (family === 4 && bits === 28) {
      for (let i = 0n; i < 16n; i++) {
        const s = this.cidrs.get(containingCidr(4, base + i, 32));
        if (s !== undefined) return s;
      }
    }
    return undefined;
  }

  private cidrOf(family: AddressFamily, value: bigint): CidrState | undefined {
    if (family === 4)
      return this.cidrs.get(containingCidr(4, value, 32)) ?? this.cidrs.get(containingCidr(4, value, 28));
    return this.cidrs.get(containingCidr(6, value, 80));
  }

  private resultOf(e: Entry): AssignResult {
    const eni = e.cidr.eni;
    return {
      address: e.address,
      eniId: eni.id,
      deviceNumber: eni.deviceNumber,
      routeTableId: eni.routeTableId,
      cidr: e.cidr.text,
    };
  }

  private assignmentOf(e: Entry): Assignment {
    return {
      key: e.key!,
      metadata: e.metadata,
      address: e.address,
      family: e.cidr.family,
      eniId: e.cidr.eni.id,
      cidr: e.cidr.text,
      assignedAt: e.assignedAt,
    };
  }
}
