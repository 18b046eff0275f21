import { formatAddress, parseAddress } from './address.js';
import { DatastoreError } from './errors.js';

/**
 * The checkpoint format version the reference daemon writes and accepts (`CheckpointFormatVersion` in
 * `pkg/ipamd/datastore/data_store.go`). Any other version is refused on restore.
 */
export const CHECKPOINT_VERSION = 'vpc-cni-ipam/1';

/**
 * One allocation in a `vpc-cni-ipam/1` checkpoint. Field names and order match the reference's
 * `CheckpointEntry` (the pod key fields inline, then `ipv4`/`ipv6` omitted when empty, the allocation time in
 * Unix nanoseconds, then `metadata` whose fields are omitted when empty).
 */
export interface CheckpointEntry {
  /** CNI network name. */
  readonly networkName: string;
  /** Sandbox id. */
  readonly containerID: string;
  /** Interface name. */
  readonly ifName: string;
  /** IPv4 address, when this is an IPv4 allocation. */
  readonly ipv4?: string;
  /** IPv6 address, when this is an IPv6 allocation. */
  readonly ipv6?: string;
  /** Allocation time, Unix nanoseconds (a bigint: nanosecond times do not fit a double exactly). */
  readonly allocationTimestamp: bigint;
  /** Pod metadata. */
  readonly metadata: {
    readonly k8sPodNamespace?: string;
    readonly k8sPodName?: string;
    readonly interfacesCount?: number;
  };
}

/** A whole `vpc-cni-ipam/1` checkpoint document. */
export interface CheckpointDocument {
  /** Always {@link CHECKPOINT_VERSION}. */
  readonly version: typeof CHECKPOINT_VERSION;
  /** Every current allocation. */
  readonly allocations: readonly CheckpointEntry[];
}

/**
 * What the datastore hands a {@link Checkpointer} to store. Serialization is deferred to the adapter, so an
 * adapter that does not persist (see {@link nullCheckpointer}) costs nothing per operation.
 */
export interface CheckpointContents {
  /** Number of allocations in the checkpoint. */
  readonly allocations: number;
  /** The checkpoint file text (`vpc-cni-ipam/1` JSON). */
  serialize(): string;
  /**
   * Group commit only: a {@link GroupCommitCheckpointer} calls this once the write that serialized these
   * contents has succeeded (`true`) or failed (`false`), synchronously, before it serializes anything again
   * and before it settles the commits of that write. The datastore settles (or undoes) the write's changes
   * here, so the next snapshot never holds a change that was undone.
   */
  written?(ok: boolean): void;
}

/**
 * The persistence port of the datastore (two methods, like the reference's `Checkpointer`). `write` is
 * called after every assign and unassign and must be durable when it returns; if it throws, the datastore
 * undoes the change and reports `CheckpointWriteFailed`. `read` returns the stored text or `undefined` for
 * a fresh node. Adapters: {@link createFileCheckpointer}, {@link nullCheckpointer}, and the in-memory fake in
 * `@vpc-cni-kit/datastore/testing`.
 */
export interface Checkpointer {
  /** The stored checkpoint text, or `undefined` if none exists. */
  read(): string | undefined;
  /** Durably replaces the stored checkpoint. */
  write(contents: CheckpointContents): void;
}

/**
 * The asynchronous persistence port: writes run off the caller's thread and concurrent requests share one
 * write (group commit). The datastore calls `commit` after every change and waits on the returned promise
 * before it reports the change durable.
 *
 * Contract for adapters (see {@link createGroupCommit} for a ready-made core):
 * - `commit` resolves only once a write that called `serialize()` of these (or later) contents *after*
 *   `commit` was called has completed durably; it rejects if that write failed.
 * - A write starts by calling `serialize()` on the newest contents it was given: the text is a snapshot of
 *   the datastore at that moment, so it includes every change made before any commit it satisfies. When the
 *   write ends, it calls `written(ok)` on those same contents (if defined) before anything else.
 * - At most one write is in flight; requests made meanwhile are coalesced into the next write.
 * - A stored file is always a complete checkpoint (never half-written), whether a write succeeds or fails.
 *
 * Adapters: {@link createGroupCommitFileCheckpointer} and `InMemoryGroupCommitCheckpointer` in
 * `@vpc-cni-kit/datastore/testing`.
 */
export interface GroupCommitCheckpointer {
  /** The stored checkpoint text, or `undefined` if none exists (synchronous: read once at start-up). */
  read(): string | undefined;
  /** Asks for the contents to be stored; settles once they are durable (or the write failed). */
  commit(contents: CheckpointContents): Promise<void>;
}

/** True when a checkpointer is a {@link GroupCommitCheckpointer} rather than a synchronous {@link Checkpointer}. */
export function isGroupCommitCheckpointer(
  cp: Checkpointer | GroupCommitCheckpointer,
): cp is GroupCommitCheckpointer {
  return typeof (cp as Partial<GroupCommitCheckpointer>).commit === 'function';
}

/** A checkpointer that stores nothing (the reference's `NullCheckpoint`): for tests and benchmarks. */
export const nullCheckpointer: Checkpointer = {
  read: () => undefined,
  write: () => {},
};

/** JSON text of one entry, fields in the reference's order, empty fields omitted as Go's `omitempty` does. */
export function serializeCheckpointEntry(entry: CheckpointEntry): string {
  const m = entry.metadata;
  const meta: string[] = [];
  if (m.k8sPodNamespace) meta.push(`"k8sPodNamespace":${JSON.stringify(m.k8sPodNamespace)}`);
  if (m.k8sPodName) meta.push(`"k8sPodName":${JSON.stringify(m.k8sPodName)}`);
  if (m.interfacesCount) meta.push(`"interfacesCount":${m.interfacesCount}`);
  const parts = [
    `"networkName":${JSON.stringify(entry.networkName)}`,
    `"containerID":${JSON.stringify(entry.containerID)}`,
    `"ifName":${JSON.stringify(entry.ifName)}`,
  ];
  if (entry.ipv4) parts.push(`"ipv4":${JSON.stringify(entry.ipv4)}`);
  if (entry.ipv6) parts.push(`"ipv6":${JSON.stringify(entry.ipv6)}`);
  parts.push(`"allocationTimestamp":${entry.allocationTimestamp.toString()}`);
  parts.push(`"metadata":{${meta.join(',')}}`);
  return `{${parts.join(',')}}`;
}

/** Assembles checkpoint text from already-serialized entries. */
export function serializeCheckpointFromEntries(entries: Iterable<string>): string {
  return `{"version":"${CHECKPOINT_VERSION}","allocations":[${[...entries].join(',')}]}`;
}

/** Serializes a whole checkpoint document. */
export function serializeCheckpoint(doc: CheckpointDocument): string {
  return serializeCheckpointFromEntries(doc.allocations.map(serializeCheckpointEntry));
}

const NS_MARK = '\u0000';
const NS_LITERAL = /("allocationTimestamp"\s*:\s*)(-?[0-9]+)(?=\s*[,}])/g;

function malformed(path: string, why: string): DatastoreError {
  return new DatastoreError('CheckpointMalformed', `checkpoint ${path}: ${why}`, { path });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(obj: Record<string, unknown>, field: string, path: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw malformed(`${path}.${field}`, 'must be a string');
  return v;
}

function requiredKeyField(obj: Record<string, unknown>, field: string, path: string): string {
  const v = optionalString(obj, field, path);
  if (v === undefined || v === '') throw malformed(`${path}.${field}`, 'must be a non-empty string');
  return v;
}

function parseEntry(raw: unknown, path: string): CheckpointEntry {
  if (!isObject(raw)) throw malformed(path, 'must be an object');
  const networkName = requiredKeyField(raw, 'networkName', path);
  const containerID = requiredKeyField(raw, 'containerID', path);
  const ifName = requiredKeyField(raw, 'ifName', path);
  const ipv4 = optionalString(raw, 'ipv4', path) || undefined;
  const ipv6 = optionalString(raw, 'ipv6', path) || undefined;
  if ((ipv4 === undefined) === (ipv6 === undefined)) {
    throw malformed(path, 'must have exactly one of ipv4 and ipv6');
  }
  let canonical4: string | undefined;
  let canonical6: string | undefined;
  if (ipv4 !== undefined) {
    const a = parseAddress(ipv4);
    if (a === undefined || a.family !== 4) throw malformed(`${path}.ipv4`, `not an IPv4 address: ${ipv4}`);
    canonical4 = formatAddress(4, a.value);
  }
  if (ipv6 !== undefined) {
    const a = parseAddress(ipv6);
    if (a === undefined || a.family !== 6) throw malformed(`${path}.ipv6`, `not an IPv6 address: ${ipv6}`);
    canonical6 = formatAddress(6, a.value);
  }
  const tsRaw = raw['allocationTimestamp'] ?? `${NS_MARK}0`;
  if (typeof tsRaw !== 'string' || !tsRaw.startsWith(NS_MARK) || !/^[0-9]+$/.test(tsRaw.slice(1))) {
    throw malformed(`${path}.allocationTimestamp`, 'must be a non-negative integer (Unix nanoseconds)');
  }
  const ts = BigInt(tsRaw.slice(1));
  const metaRaw = raw['metadata'] ?? {};
  if (!isObject(metaRaw)) throw malformed(`${path}.metadata`, 'must be an object');
  const mpath = `${path}.metadata`;
  const k8sPodNamespace = optionalString(metaRaw, 'k8sPodNamespace', mpath);
  const k8sPodName = optionalString(metaRaw, 'k8sPodName', mpath);
  const count = metaRaw['interfacesCount'] ?? 0;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
    throw malformed(`${mpath}.interfacesCount`, 'must be a non-negative integer');
  }
  return {
    networkName,
    containerID,
    ifName,
    ...(canonical4 === undefined ? {} : { ipv4: canonical4 }),
    ...(canonical6 === undefined ? {} : { ipv6: canonical6 }),
    allocationTimestamp: ts,
    metadata: {
      ...(k8sPodNamespace ? { k8sPodNamespace } : {}),
      ...(k8sPodName ? { k8sPodName } : {}),
      ...(count ? { interfacesCount: count } : {}),
    },
  };
}

/**
 * Parses and validates checkpoint text. Throws a {@link DatastoreError} with code `CheckpointMalformed`
 * (bad JSON or shape; `details.path` says where) or `CheckpointUnknownVersion`. Addresses come back in
 * canonical form. Cross-entry checks (duplicates, CIDR membership) are the datastore's, at restore.
 */
export function parseCheckpoint(text: string): CheckpointDocument {
  let raw: unknown;
  try {
    // Nanosecond timestamps exceed 2^53; quote the integer literals (with a marker no JSON string can hold
    // unescaped) before parsing so they survive exactly. The pattern cannot match inside a JSON string.
    raw = JSON.parse(
      text.replace(NS_LITERAL, (_m, head: string, digits: string) => `${head}"\\u0000${digits}"`),
    );
  } catch (cause) {
    throw new DatastoreError('CheckpointMalformed', 'checkpoint is not valid JSON', { path: '$', cause });
  }
  if (!isObject(raw)) throw malformed('$', 'must be a JSON object');
  if (raw['version'] !== CHECKPOINT_VERSION) {
    throw new DatastoreError(
      'CheckpointUnknownVersion',
      `checkpoint version ${JSON.stringify(raw['version'])} is not ${CHECKPOINT_VERSION}`,
      { path: '$.version' },
    );
  }
  const list = raw['allocations'] ?? [];
  if (!Array.isArray(list)) throw malformed('$.allocations', 'must be an array');
  return {
    version: CHECKPOINT_VERSION,
    allocations: list.map((e, i) => parseEntry(e, `$.allocations[${i}]`)),
  };
}

/**
 * The checkpoint `text` as {@link Datastore.restore} takes it: {@link parseCheckpoint}, and no address or pod
 * key (network name, container ID, interface) listed twice. A daemon calls it before it changes anything on the
 * node, so a checkpoint it could not restore stops the start first, and hands the document to `restore`.
 *
 * @throws DatastoreError `CheckpointMalformed`, `CheckpointUnknownVersion`, `CheckpointDuplicateAddress` or
 *   `CheckpointDuplicatePodKey`
 */
export function parseRestorableCheckpoint(text: string): CheckpointDocument {
  const doc = parseCheckpoint(text);
  const addresses = new Set<string>();
  const keys = new Set<string>();
  doc.allocations.forEach((e, i) => {
    const addr = (e.ipv4 ?? e.ipv6)!;
    if (addresses.has(addr)) {
      throw new DatastoreError('CheckpointDuplicateAddress', `checkpoint assigns ${addr} twice`, {
        address: addr,
        path: `$.allocations[${i}]`,
      });
    }
    addresses.add(addr);
    const key = `${e.networkName}/${e.containerID}/${e.ifName}`;
    if (keys.has(key)) {
      throw new DatastoreError('CheckpointDuplicatePodKey', `checkpoint lists pod ${key} twice`, {
        podKey: key,
        path: `$.allocations[${i}]`,
      });
    }
    keys.add(key);
  });
  return doc;
}
