import type { Datastore, DroppedAssignment } from '@vpc-cni-kit/datastore';
import type { ImdsEni, NodeMetadata } from '@vpc-cni-kit/eni-manager';
import type { Logger } from './logger.js';

/** What one reconcile changed. */
export interface ReconcileReport {
  adoptedEnis: string[];
  removedEnis: string[];
  addedCidrs: string[];
  removedCidrs: string[];
  /** Pods that lost their address because EC2 no longer has it (the reference's force removal). */
  droppedPods: DroppedAssignment[];
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
  };
  const imdsEnis = (await deps.metadata.listEnis()).filter((e) => e.networkCard === 0);
  const stats = datastore.stats();
  const known = new Map(stats.enis.map((e) => [e.id, e]));
  const now = deps.now();

  for (const e of imdsEnis) {
    const current = known.get(e.eniId);
    if (current === undefined) {
      await deps.adoptEni(e);
      report.adoptedEnis.push(e.eniId);
      continue;
    }
    const want = new Set([...e.ipv4Addresses.slice(1).map((ip) => `${ip}/32`), ...e.ipv4Prefixes]);
    const have = new Set(current.cidrs.map((c) => c.cidr));
    for (const cidr of want) {
      if (have.has(cidr)) continue;
      const released = deps.recentlyReleased.get(`${e.eniId} ${cidr}`);
      if (released !== undefined && now - released < RECONCILE_COOLDOWN_MS) continue;
      datastore.addCidr(e.eniId, cidr);
      report.addedCidrs.push(`${e.eniId} ${cidr}`);
    }
    for (const cidr of have) {
      if (want.has(cidr)) continue;
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
    log.info('reconciled with IMDS', { ...report, droppedPods: report.droppedPods.length });
  }
  return report;
}
