import {
  type CheckpointDocument,
  type CheckpointEntry,
  type Datastore,
  parseAddress,
  parseCidr,
  type RestoreReport,
} from '@vpc-cni-kit/datastore';
import type { Ec2Eni, ImdsEni } from '@vpc-cni-kit/eni-manager';
import { familyBits } from '@vpc-cni-kit/ip-address';
import type { Logger } from './logger.js';
import { StartError } from './start-error.js';

/**
 * The node's ENIs as IMDS shows them, with each one's addresses and prefixes as EC2 lists them when EC2 knows
 * the ENI. IMDS lags EC2 (an address assigned a moment ago may be missing, one released a moment ago may
 * linger); DescribeNetworkInterfaces is the truth, as the reference's node init reads it. ENIs EC2 lists but
 * IMDS does not show yet are left out: without their link nothing can be set up for them (the reconcile
 * adopts them once IMDS shows them). EC2's addresses and prefixes have passed the same shape checks as IMDS's
 * (eni-manager rejects a malformed DescribeNetworkInterfaces reply with `Ec2InvalidResponse`), so the result
 * holds only validated values.
 */
export function withEc2Addresses(imds: readonly ImdsEni[], ec2: readonly Ec2Eni[]): ImdsEni[] {
  const byId = new Map(ec2.map((e) => [e.eniId, e]));
  return imds.map((e) => {
    const truth = byId.get(e.eniId);
    if (truth === undefined) return e;
    return {
      ...e,
      ipv4Addresses: [truth.primaryIpv4, ...truth.secondaryIpv4],
      ipv4Prefixes: [...truth.ipv4Prefixes],
      ipv6Addresses: [...truth.ipv6Addresses],
      ipv6Prefixes: [...truth.ipv6Prefixes],
    };
  });
}

/** True when `address` lies in one of `cidrs` (secondary addresses, bare or as /32, and prefixes). */
function placeable(address: string, cidrs: readonly string[]): boolean {
  const a = parseAddress(address);
  if (a === undefined) return false;
  return cidrs.some((text) => {
    const c = parseCidr(text.includes('/') ? text : `${text}/${familyBits(a.family)}`);
    if (c === undefined || c.family !== a.family) return false;
    const shift = BigInt(familyBits(c.family) - c.bits);
    return a.value >> shift === c.base >> shift;
  });
}

const podCidrs = (enis: readonly ImdsEni[]) =>
  enis.flatMap((e) => [...e.ipv4Addresses.slice(1), ...e.ipv4Prefixes, ...e.ipv6Prefixes]);
const ec2Cidrs = (enis: readonly Ec2Eni[]) =>
  enis.flatMap((e) => [...e.secondaryIpv4, ...e.ipv4Prefixes, ...e.ipv6Prefixes]);
/** A checkpoint entry's address (IPv4, or IPv6 in IPv6 mode). */
const addressOf = (e: CheckpointEntry): string => (e.ipv4 ?? e.ipv6)!;

/** Everything {@link restoreNode} depends on. */
export interface NodeRestoreDeps {
  /** An empty datastore (nothing assigned yet). */
  datastore: Datastore;
  /**
   * The checkpoint as read and checked before the node was changed (`parseRestorableCheckpoint`, see
   * `readSavedState`), or `null` on a fresh node.
   */
  checkpoint: CheckpointDocument | null;
  /** The node's ENIs from IMDS. */
  listImdsEnis: () => Promise<ImdsEni[]>;
  /**
   * The ENIs EC2 has attached to this instance (DescribeNetworkInterfaces). Absent in IMDS-only mode, where
   * IMDS is all there is.
   */
  describeEnis?: () => Promise<Ec2Eni[]>;
  /**
   * Keeps the ENIs this node manages (see `NodeEnis.select`), given EC2's read when there is one; the others are
   * never adopted. Absent: all are managed.
   */
  selectManaged?: (imds: ImdsEni[], ec2: Ec2Eni[] | undefined) => Promise<ImdsEni[]>;
  /** Sets up and records one ENI and its addresses (the pool loop's adopt). */
  adoptEni: (eni: ImdsEni) => Promise<void>;
  /**
   * Whether a checkpointed pod still exists on the node (its host veth is there; the reference keeps entries
   * without pod names). Entries it refuses are dropped; the others are live pods.
   */
  podExists: (entry: CheckpointEntry) => boolean;
  /** How long to keep re-reading while a live pod's address is not placeable yet. */
  confirmWaitMs: number;
  /** Pause between re-reads. */
  retryMs: number;
  sleep: (ms: number) => Promise<void>;
  /** Monotonic milliseconds. */
  now: () => number;
  log: Logger;
}

/** What {@link restoreNode} did. */
export interface NodeRestoreOutcome {
  /** The datastore's restore report. */
  report: RestoreReport;
  /** The ENIs adopted (network card 0), with EC2's addresses where EC2 was read. */
  enis: ImdsEni[];
  /** Reads of IMDS (and EC2) it took until every live pod's address was placeable (1 when at once). */
  reads: number;
}

/**
 * Node start's restore, which must never hand a live pod's address to another pod: reads the node's ENIs
 * (IMDS, with EC2's addresses unless IMDS-only), adopts them, and restores the checkpoint keeping entries
 * whose pods still exist. When a live pod's address lies on no ENI yet (IMDS lag, or EC2's own eventual
 * consistency right after an assign), it re-reads for up to `confirmWaitMs`. Then an entry EC2 does not list
 * at all is dropped (EC2 confirms the address is gone, as the reference's force removal does); any other
 * unplaceable live entry (IMDS-only mode, or an ENI EC2 lists but IMDS does not show yet) stops the start
 * with `RestoreUnconfirmed` before the checkpoint is touched: the next start tries again, and no address is
 * ever given out twice.
 */
export async function restoreNode(deps: NodeRestoreDeps): Promise<NodeRestoreOutcome> {
  const live = deps.checkpoint?.allocations.filter((e) => deps.podExists(e)) ?? [];
  const deadline = deps.now() + deps.confirmWaitMs;
  let reads = 0;
  let enis: ImdsEni[];
  let ec2: Ec2Eni[] | undefined;
  let missing: CheckpointEntry[];
  for (;;) {
    reads++;
    const listed = (await deps.listImdsEnis()).filter((e) => e.networkCard === 0);
    ec2 = deps.describeEnis === undefined ? undefined : await deps.describeEnis();
    const imds = deps.selectManaged === undefined ? listed : await deps.selectManaged(listed, ec2);
    enis = ec2 === undefined ? imds : withEc2Addresses(imds, ec2);
    const cidrs = podCidrs(enis);
    missing = live.filter((e) => !placeable(addressOf(e), cidrs));
    if (missing.length === 0 || deps.now() >= deadline) break;
    deps.log.info('waiting for IMDS/EC2 to list the addresses of live pods', {
      addresses: missing.map(addressOf).join(','),
    });
    await deps.sleep(deps.retryMs);
  }
  const ec2Has = ec2 === undefined ? [] : ec2Cidrs(ec2);
  const unconfirmed = ec2 === undefined ? missing : missing.filter((e) => placeable(addressOf(e), ec2Has));
  if (unconfirmed.length > 0) {
    const list = unconfirmed.map(
      (e) => `${addressOf(e)} (${e.metadata.k8sPodNamespace}/${e.metadata.k8sPodName})`,
    );
    throw new StartError(
      'RestoreUnconfirmed',
      `live pods hold addresses that ${ec2 === undefined ? 'IMDS does not list' : 'are on an ENI IMDS does not show'} after ${deps.confirmWaitMs} ms: ${list.join(', ')}; not starting, so they are not given to other pods (the next start tries again)`,
    );
  }
  for (const e of enis) await deps.adoptEni(e);
  for (const e of missing)
    deps.log.warn('live pod lost its address: EC2 no longer assigns it to this node', {
      address: addressOf(e),
      containerID: e.containerID,
    });
  const report = deps.datastore.restore({ keep: deps.podExists, document: deps.checkpoint });
  return { report, enis, reads };
}
