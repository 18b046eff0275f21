/**
 * The daemon's record of branch pods survives a restart (ADR 0030): written ahead of the plumbing to a ledger of
 * its own, read back at start and kept where the branch link still is; CNI GC collects the branch plumbing of
 * attachments the runtime no longer lists. The kernel side is in the cluster harness's e2e suite.
 */
import {
  type BranchNetworkPlan,
  type BranchTeardownPlan,
  formatPodEniAnnotation,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
} from '@vpc-cni-kit/sgp-branch';
import { describe, expect, it } from 'vitest';
import {
  BRANCH_LEDGER_VERSION,
  type BranchLedgerStore,
  parseBranchLedger,
} from '../src/daemon/branch-pod-ledger.js';
import { type BranchPlumber, BranchPods } from '../src/daemon/branch-pods.js';
import { recordingLogger } from './support/logger.js';

const TRUNK = { eniId: 'eni-trunk', mac: '0a:00:00:00:00:aa' };
const branch = (vlanId: number) => ({
  eniId: `eni-0b${vlanId}`,
  mac: `0a:00:00:00:00:b${vlanId}`,
  ipv4: `10.0.7.${vlanId}`,
  subnetCidr: '10.0.0.0/19',
  vlanId,
});

class MemoryLedger implements BranchLedgerStore {
  text: string | undefined;
  writes = 0;
  failWrites = false;
  read() {
    return this.text;
  }
  async write(snapshot: () => string) {
    if (this.failWrites) throw new Error('ENOSPC: no space left on device');
    this.writes++;
    this.text = snapshot();
  }
}

class Plumber implements BranchPlumber {
  readonly setups: BranchNetworkPlan[] = [];
  readonly teardowns: BranchTeardownPlan[] = [];
  fail = false;
  async setup(plan: BranchNetworkPlan) {
    if (this.fail) throw new Error('EEXIST');
    this.setups.push(plan);
    return { hostMac: '02:00:00:00:00:07' };
  }
  async teardown(plan: BranchTeardownPlan) {
    this.teardowns.push(plan);
  }
}

/** A daemon's BranchPods over `ledger`, on a host with `links` (plus the trunk's). */
function daemon(
  ledger: MemoryLedger,
  links: { name: string; mac: string }[] = [],
  now = 1000,
  limits: Record<string, string> = { [POD_ENI_RESOURCE]: '1' },
) {
  const plumber = new Plumber();
  const log = recordingLogger();
  const pods = new BranchPods({
    mode: 'strict',
    linkKind: 'macvlan',
    readPod: async (_ns, name) => ({
      annotations: { [POD_ENI_ANNOTATION]: formatPodEniAnnotation(branch(Number(name.slice(1)))) },
      containerLimits: [limits],
    }),
    trunk: async () => TRUNK,
    hostLinks: async () => [
      { name: 'eth1', index: 3, mac: TRUNK.mac },
      ...links.map((l, i) => ({ ...l, index: 10 + i })),
    ],
    plumber,
    ledger,
    now: () => now,
    log,
  });
  return { pods, plumber, log };
}

const key = (id: string) => ({ networkName: 'aws-cni', containerID: id, ifName: 'eth0' });

/** ADD of pod `p<vlanId>` with container `id`. */
async function add(d: ReturnType<typeof daemon>, id: string, vlanId: number) {
  const resolved = (await d.pods.resolve('shop', `p${vlanId}`))!;
  const plan = d.pods.plan(resolved, `vlan${id.padEnd(11, '0')}`);
  await d.pods.plumb(
    key(id),
    { namespace: 'shop', name: `p${vlanId}`, netnsPath: '/x', mtu: 9001 },
    resolved,
    plan,
  );
}

describe('the branch pod ledger', () => {
  it('brings back the records whose branch link is on the host, and a DEL after the restart tears down', async () => {
    const ledger = new MemoryLedger();
    const before = daemon(ledger);
    await add(before, 'c5', 5);
    await add(before, 'c6', 6);
    expect(parseBranchLedger(ledger.text!).records.map((r) => r.vlanId)).toEqual([5, 6]);

    // Restarted: pod 6 was deleted (from its prevResult) while the daemon was down; its link is gone.
    const after = daemon(ledger, [{ name: 'vlan.eth.5', mac: branch(5).mac }]);
    const report = await after.pods.restore();
    expect(report).toMatchObject({ found: 2, problems: [], unrecorded: [] });
    expect(report.restored.map((r) => [r.containerID, r.vlanId, r.branchEniId])).toEqual([
      ['c5', 5, 'eni-0b5'],
    ]);
    expect(report.dropped.map((d) => [d.record.containerID, d.why])).toEqual([['c6', 'branch-link-gone']]);
    expect(after.pods.list().map((r) => r.containerID)).toEqual(['c5']);
    expect(parseBranchLedger(ledger.text!).records.map((r) => r.containerID)).toEqual(['c5']);

    const released = await after.pods.release(key('c5'));
    expect(released?.vlanId).toBe(5);
    expect(after.plumber.teardowns).toMatchObject([{ link: { name: 'vlan.eth.5' }, table: 105 }]);
    expect(parseBranchLedger(ledger.text!).records).toEqual([]);
  });

  it('drops a record whose link now carries another branch, keeps the newer of two on one VLAN, and names unrecorded links', async () => {
    const ledger = new MemoryLedger();
    const first = daemon(ledger, [], 1000);
    await add(first, 'c5', 5);
    await add(first, 'c6', 6);
    const records = parseBranchLedger(ledger.text!).records;
    // An older record on VLAN 5 (a pod the runtime forgot; its branch went to c5 later).
    const stale = { ...records[0]!, containerID: 'c-old', since: 10 };
    ledger.text = JSON.stringify({ version: BRANCH_LEDGER_VERSION, pods: [stale, ...records] });
    const after = daemon(ledger, [
      { name: 'vlan.eth.5', mac: branch(5).mac },
      { name: 'vlan.eth.6', mac: '0a:00:00:00:00:ff' },
      { name: 'vlan.eth.9', mac: '0a:00:00:00:00:b9' },
    ]);
    const report = await after.pods.restore();
    expect(report.restored.map((r) => r.containerID)).toEqual(['c5']);
    expect(report.dropped.map((d) => [d.record.containerID, d.why]).sort()).toEqual([
      ['c-old', 'branch-link-replaced'],
      ['c6', 'branch-link-replaced'],
    ]);
    expect(report.unrecorded).toEqual(['vlan.eth.6', 'vlan.eth.9']);
  });

  it('starts with no record from a file it cannot read, and says why', async () => {
    for (const [text, problem] of [
      ['{"version":', 'not JSON'],
      ['{"version":"vpc-cni-ipam/1","allocations":[]}', `not an ${BRANCH_LEDGER_VERSION} document`],
    ] as const) {
      const ledger = new MemoryLedger();
      ledger.text = text;
      const report = await daemon(ledger, [{ name: 'vlan.eth.5', mac: branch(5).mac }]).pods.restore();
      expect(report.restored).toEqual([]);
      expect(report.problems[0]).toContain(problem);
    }
    // One malformed record among good ones: only it is left out.
    const ledger = new MemoryLedger();
    await add(daemon(ledger), 'c5', 5);
    const doc = JSON.parse(ledger.text!);
    doc.pods.push({ ...doc.pods[0], containerID: 'c7', vlanId: 0 });
    ledger.text = JSON.stringify(doc);
    const report = await daemon(ledger, [{ name: 'vlan.eth.5', mac: branch(5).mac }]).pods.restore();
    expect(report.restored.map((r) => r.containerID)).toEqual(['c5']);
    expect(report.problems).toEqual(['pods[1]: vlanId must be 1..4094']);
  });

  it('a failed setup leaves no record, and a ledger that cannot be written plumbs nothing', async () => {
    const ledger = new MemoryLedger();
    const d = daemon(ledger);
    d.plumber.fail = true;
    await expect(add(d, 'c5', 5)).rejects.toThrow('EEXIST');
    expect(d.pods.list()).toEqual([]);
    expect(parseBranchLedger(ledger.text!).records).toEqual([]);

    d.plumber.fail = false;
    ledger.failWrites = true;
    await expect(add(d, 'c5', 5)).rejects.toThrow('ENOSPC');
    expect(d.plumber.setups).toEqual([]);
    expect(d.pods.list()).toEqual([]);
  });

  it("a pod carrying another pod's annotation without asking for a branch gets none: the recorded pod keeps its VLAN", async () => {
    const ledger = new MemoryLedger();
    const d = daemon(ledger);
    await add(d, 'c5', 5);
    // Pod p5 again by name, its limits now without the resource (as a pod that copied p5's annotation): the
    // annotation is ignored, once logged, and p5's record, link and VLAN stay untouched.
    const forger = daemon(ledger, [{ name: 'vlan.eth.5', mac: branch(5).mac }], 2000, { cpu: '1' });
    await forger.pods.restore();
    expect(await forger.pods.resolve('shop', 'p5')).toBeUndefined();
    expect(await forger.pods.resolve('shop', 'p5')).toBeUndefined();
    expect(forger.plumber.setups).toEqual([]);
    expect(forger.pods.list().map((r) => [r.containerID, r.vlanId])).toEqual([['c5', 5]]);
    const warned = forger.log.lines.filter((l) => l.startsWith('warn '));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('annotation ignored');
    expect(warned[0]).toContain('"pod":"shop/p5"');
    // A pod recorded as a branch pod (before an upgrade, say) is still torn down as one by its DEL.
    expect((await forger.pods.release(key('c5')))?.vlanId).toBe(5);
    expect(forger.plumber.teardowns).toMatchObject([{ link: { name: 'vlan.eth.5' }, table: 105 }]);
    expect(parseBranchLedger(ledger.text!).records).toEqual([]);
  });

  it('an ADD onto a VLAN another record names takes it over (that pod was deleted without a DEL)', async () => {
    const ledger = new MemoryLedger();
    const d = daemon(ledger);
    await add(d, 'c5', 5);
    await add(d, 'c5-new', 5);
    expect(d.pods.list().map((r) => r.containerID)).toEqual(['c5-new']);
  });
});

describe('CNI GC of branch pods', () => {
  it('removes exactly the plumbing of stale attachments: never a valid one, one in use, or one younger than the request', async () => {
    const ledger = new MemoryLedger();
    const d = daemon(ledger, [], 1000);
    for (const [id, vlan] of [
      ['valid', 1],
      ['stale', 2],
      ['in-use', 3],
    ] as const)
      await add(d, id, vlan);
    const inUseVeth = d.pods.list().find((r) => r.containerID === 'in-use')!.hostVeth;
    const outcome = await d.pods.collect({
      networkName: 'aws-cni',
      valid: new Set(['valid\u0000eth0']),
      requestedAt: 2000,
      links: new Set([inUseVeth]),
    });
    expect(outcome.collected.map((r) => [r.containerID, r.vlanId])).toEqual([['stale', 2]]);
    expect(outcome.kept.map((k) => [k.record.containerID, k.why])).toEqual([['in-use', 'in-use']]);
    expect(d.plumber.teardowns).toMatchObject([{ link: { name: 'vlan.eth.2' }, table: 102 }]);
    expect(parseBranchLedger(ledger.text!).records.map((r) => r.containerID)).toEqual(['valid', 'in-use']);

    // Another network's GC, and a request older than the pod, collect nothing.
    expect(
      (await d.pods.collect({ networkName: 'other', valid: new Set(), requestedAt: 2000, links: new Set() }))
        .collected,
    ).toEqual([]);
    const early = await d.pods.collect({
      networkName: 'aws-cni',
      valid: new Set(),
      requestedAt: 500,
      links: new Set(),
    });
    expect(early.collected).toEqual([]);
    expect(early.kept.map((k) => k.why)).toEqual(['younger-than-request', 'younger-than-request']);
  });
});
