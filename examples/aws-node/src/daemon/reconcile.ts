import type { Datastore, DroppedAssignment } from '@vpc-cni-kit/datastore';
import type { Ec2Eni, ImdsEni, NodeMetadata } from '@vpc-cni-kit/eni-manager';
import type { Logger } from './logger.js';

/** What one reconcile changed. */
export interface ReconcileReport {
  adoptedEnis: string[];
  removedEnis: string[];
  addedCidrs: string[];
  removedCidrs: string[];
  /** Pods that lost their address because EC2 no longer has it (the reference's force removal). */
  droppedPods: DroppedAssignment[];
  /** Removed ENIs on which pods still held addresses (the reference's `awscni_force_removed_enis`). */
  forceRemovedEnis: string[];
}

/** Everything the reconciler depends on. */
export interface ReconcilerDeps {
  datastore: Datastore;
  metadata: Pick<NodeMetadata, 'listEnis'>;
  log: Logger;
  now: () => number;
  /** Sets up and records an ENI found attached (as at start). */
  adoptEni: (eni: ImdsEni) => Promise<void>;
  /** Removes an ENI's host routing. */
  teardownEni: (eniId: string) => Promise<void>;
  /** CIDRs the pool loop released recently, by `eniId cidr`, with the time (IMDS may still list them). */
  recentlyReleased: ReadonlyMap<string, number>;
  /**
   * EC2's view of ENIs (DescribeNetworkInterfaces by id), asked only for known ENIs whose IMDS addresses
   * differ from the datastore's, as the reference does: IMDS lags EC2 both ways, so a difference is settled by
   * EC2. Absent in IMDS-only mode (IMDS is then trusted). If EC2 cannot be read, addresses are added from IMDS
   * but none is removed this round.
   */
  describeEnis?: (eniIds: readonly string[]) => Promise<Ec2Eni[]>;
  /**
   * Keeps the ENIs this node manages (see `NodeEnis.select`, which classifies them again); the others are
   * never adopted, and a known ENI that is no longer managed leaves the datastore as a detached one does.
   * Absent: all are managed.
   */
  selectManaged?: (imds: ImdsEni[]) => Promise<ImdsEni[]>;
}

/** The reference's reconcile cooldown: a released CIDR is not re-added from IMDS for 60 s. */
export const RECONCILE_COOLDOWN_MS = 60_000;

/**
 * The reference's `nodeIPPoolReconcile`, against IMDS: ENIs attached but unknown are set up and adopted;
 * known ENIs gain addresses/prefixes IMDS lists and the datastore lacks (unless released within the
 * cooldown), and lose the ones IMDS no longer lists (forced: a pod holding one loses it, as on AWS the
 * address is gone); ENIs gone from IMDS are removed. Network card 0 only.
 */
export async function reconcileWithImds(deps: ReconcilerDeps): Promise<ReconcileReport> {
  const { datastore, log } = deps;
  const report: ReconcileReport = {
    adoptedEnis: [],
    removedEnis: [],
    addedCidrs: [],
    removedCidrs: [],
    droppedPods: [],
    forceRemovedEnis: [],
  };
  const listed = (await deps.metadata.listEnis()).filter((e) => e.networkCard === 0);
  const imdsEnis = deps.selectManaged === undefined ? listed : await deps.selectManaged(listed);
  const stats = datastore.stats();
  const known = new Map(stats.enis.map((e) => [e.id, e]));
  const now = deps.now();

  const cidrsOf = (e: { ipv4Addresses: readonly string[]; ipv4Prefixes: readonly string[] }) =>
    new Set([...e.ipv4Addresses.map((ip) => `${ip}/32`), ...e.ipv4Prefixes]);
  const haveOf = (id: string) => new Set(known.get(id)?.cidrs.map((c) => c.cidr) ?? []);
  const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
  // Known ENIs where IMDS and the datastore disagree: EC2 settles it.
  const differing = imdsEnis.filter(
    (e) =>
      known.has(e.eniId) &&
      !sameSet(cidrsOf({ ...e, ipv4Addresses: e.ipv4Addresses.slice(1) }), haveOf(e.eniId)),
  );
  let truth: Map<string, Ec2Eni> | undefined;
  let mayRemove = true;
  if (differing.length > 0 && deps.describeEnis !== undefined) {
    try {
      truth = new Map((await deps.describeEnis(differing.map((e) => e.eniId))).map((e) => [e.eniId, e]));
    } catch (e) {
      mayRemove = false;
      log.warn('reconcile: EC2 could not be read; adding from IMDS, removing nothing', { error: String(e) });
    }
  }

  for (const e of imdsEnis) {
    const current = known.get(e.eniId);
    if (current === undefined) {
      await deps.adoptEni(e);
      report.adoptedEnis.push(e.eniId);
      continue;
    }
    const ec2 = truth?.get(e.eniId);
    const want =
      ec2 !== undefined
        ? cidrsOf({ ipv4Addresses: ec2.secondaryIpv4, ipv4Prefixes: ec2.ipv4Prefixes })
        : cidrsOf({ ...e, ipv4Addresses: e.ipv4Addresses.slice(1) });
    const have = haveOf(e.eniId);
    for (const cidr of want) {
      if (have.has(cidr)) continue;
      const released = deps.recentlyReleased.get(`${e.eniId} ${cidr}`);
      if (released !== undefined && now - released < RECONCILE_COOLDOWN_MS) continue;
      datastore.addCidr(e.eniId, cidr);
      report.addedCidrs.push(`${e.eniId} ${cidr}`);
    }
    for (const cidr of have) {
      if (want.has(cidr) || !mayRemove) continue;
      const removal = datastore.removeCidr(e.eniId, cidr, { force: true });
      report.removedCidrs.push(`${e.eniId} ${cidr}`);
      report.droppedPods.push(...removal.dropped);
    }
  }
  const attached = new Set(imdsEnis.map((e) => e.eniId));
  for (const [id, eni] of known) {
    if (attached.has(id) || eni.isPrimary || eni.networkCard !== 0) continue;
    const removal = datastore.removeEni(id, { force: true });
    report.droppedPods.push(...removal.dropped);
    if (removal.dropped.length > 0) report.forceRemovedEnis.push(id);
    await deps.teardownEni(id);
    report.removedEnis.push(id);
  }
  for (const d of report.droppedPods) {
    log.warn('address force-removed: EC2 no longer has it', {
      address: d.address,
      containerID: d.key.containerID,
    });
  }
  if (
    report.adoptedEnis.length +
      report.removedEnis.length +
      report.addedCidrs.length +
      report.removedCidrs.length >
    0
  ) {
    log.info('reconciled with IMDS', {
      ...report,
      droppedPods: report.droppedPods.length,
      forceRemovedEnis: report.forceRemovedEnis.length,
    });
  }
  return report;
}
