/**
 * The file that keeps the daemon's record of branch pods across restarts (ADR 0030). It is the daemon's own file,
 * next to the IPAM checkpoint and never inside it: the reference's `vpc-cni-ipam/1` checkpoint stays byte-exact and
 * holds no branch pod, as the reference's does.
 */
import { parseIp } from '@vpc-cni-kit/ip-address';
import { MAX_VLAN_ID } from '@vpc-cni-kit/sgp-branch';

/** A branch pod the daemon plumbed, as introspection and `aws-node status` show it and the ledger keeps it. */
export interface BranchPodRecord {
  readonly containerID: string;
  readonly ifName: string;
  readonly networkName: string;
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly vlanId: number;
  readonly branchEniId: string;
  readonly branchMac: string;
  readonly trunkEniId: string;
  readonly trunkInterface: string;
  readonly hostVeth: string;
  readonly mode: 'strict' | 'standard';
  /** When it was plumbed (ms since epoch). */
  readonly since: number;
}

/** The format tag of the file. */
export const BRANCH_LEDGER_VERSION = 'aws-node-branch-pods/1';

/** The file name, in the directory of the IPAM checkpoint (`/var/run/aws-node/branch-pods.json`). */
export const BRANCH_LEDGER_FILE = 'branch-pods.json';

/** Where the ledger's text lives (a crash-safe file in production, a string in tests). */
export interface BranchLedgerStore {
  /** The stored text, or `undefined` when there is none (a fresh node, or a node upgraded from the reference). */
  read(): string | undefined;
  /**
   * Replaces the stored text with what `snapshot` gives when the write runs (writes asked for while one is in
   * flight are coalesced into the next); settles once that text is durable, rejects when it cannot be written.
   */
  write(snapshot: () => string): Promise<void>;
}

/** The ledger's text as read at start (`undefined`: there is none), or why it could not be read. */
export type BranchLedgerRead = { readonly text: string | undefined } | { readonly problem: string };

/**
 * Reads the ledger once, at start, before the daemon changes anything on the node; never throws (an unreadable
 * ledger is a problem to log, and the node starts with no record: ADR 0030).
 */
export function readBranchLedger(store: BranchLedgerStore): BranchLedgerRead {
  try {
    return { text: store.read() };
  } catch (e) {
    return { problem: e instanceof Error ? e.message : String(e) };
  }
}

/** What {@link parseBranchLedger} found. */
export interface ParsedBranchLedger {
  /** The well-formed records. */
  readonly records: BranchPodRecord[];
  /** Why the file or a record was not read (one line each). */
  readonly problems: string[];
}

/** The file text of `records`. */
export function serializeBranchLedger(records: readonly BranchPodRecord[]): string {
  return `${JSON.stringify({ version: BRANCH_LEDGER_VERSION, pods: records })}\n`;
}

const STRING_FIELDS = [
  'containerID',
  'ifName',
  'networkName',
  'namespace',
  'name',
  'address',
  'branchEniId',
  'branchMac',
  'trunkEniId',
  'trunkInterface',
  'hostVeth',
] as const;

/** One record, or why it is not one. */
function recordOf(value: unknown): BranchPodRecord | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const r = value as Record<string, unknown>;
  for (const f of STRING_FIELDS)
    if (typeof r[f] !== 'string' || r[f] === '') return `${f} must be a non-empty string`;
  if (!Number.isInteger(r.vlanId) || (r.vlanId as number) < 1 || (r.vlanId as number) > MAX_VLAN_ID)
    return `vlanId must be 1..${MAX_VLAN_ID}`;
  if (parseIp(r.address as string)?.family !== 4) return 'address must be an IPv4 address';
  if (r.mode !== 'strict' && r.mode !== 'standard') return 'mode must be strict or standard';
  if (typeof r.since !== 'number' || !Number.isFinite(r.since)) return 'since must be a number';
  const record: Record<string, unknown> = {};
  for (const f of STRING_FIELDS) record[f] = r[f];
  return { ...record, vlanId: r.vlanId, mode: r.mode, since: r.since } as unknown as BranchPodRecord;
}

/**
 * Reads the file text: every well-formed record, and a line per problem. A file that is not this format yields
 * no record (the start-up then finds no branch pod recorded; their DEL still works from the prevResult).
 */
export function parseBranchLedger(text: string): ParsedBranchLedger {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { records: [], problems: [`not JSON: ${(e as Error).message}`] };
  }
  const d = doc as { version?: unknown; pods?: unknown };
  if (
    typeof doc !== 'object' ||
    doc === null ||
    d.version !== BRANCH_LEDGER_VERSION ||
    !Array.isArray(d.pods)
  )
    return { records: [], problems: [`not an ${BRANCH_LEDGER_VERSION} document`] };
  const records: BranchPodRecord[] = [];
  const problems: string[] = [];
  d.pods.forEach((p, i) => {
    const r = recordOf(p);
    if (typeof r === 'string') problems.push(`pods[${i}]: ${r}`);
    else records.push(r);
  });
  return { records, problems };
}
