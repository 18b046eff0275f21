/**
 * Security groups for pods end to end, with the real VPC resource controller (its program, against the cluster's
 * kube-simulator and the VPC's EC2 endpoint) and the real aws-node on every node: pods through libcni, branch ENIs
 * on trunks in the virtual VPC, security groups enforced on packets by its router.
 *
 * Node 0 runs in strict mode (m5.large, 9 branches), node 1 in standard mode (c7i-flex.large: 3 branches, so the
 * limit is reachable). A database instance admits TCP 5432 from the `db-client` group only.
 */
import { existsSync } from 'node:fs';
import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod, PodError } from '../src/cluster.js';
import { databaseHello } from '../src/database.js';
import { inNetns } from '../src/exec.js';
import { resourceControllerBin } from '../src/resource-controller.js';
import { SGP, SMALL_TRUNK_TYPE, sgpLayout, sgpPolicies } from '../src/sgp-layout.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { eventually } from './support/scenario.js';

const COOLDOWN_MS = 1000;

/** `count` pings, 0.2 s apart; the number of replies. */
async function pings(from: ClusterPod, to: string, count = 3): Promise<number> {
  const r = await inNetns(from.netnsPath, ['ping', '-c', String(count), '-i', '0.2', '-W', '1', to]);
  const m = /(\d+) received/.exec(r.stdout);
  return m ? Number(m[1]) : 0;
}

describePrivileged('security groups for pods on the virtual VPC (controller + aws-node)', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    for (const f of [`${awsNodeBinDir()}/aws-node.cjs`, resourceControllerBin()])
      if (!existsSync(f)) throw new Error(`build first: ${f} is missing (npm run build)`);
    cluster = await Cluster.start({
      nodes: 2,
      binDir: awsNodeBinDir(),
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
      network: sgpLayout,
      podEni: { mode: 'strict' },
      perNode: [
        // The kubelet's TCP probes reach a strict-mode pod only with early demux off (as on EKS).
        { env: { DISABLE_TCP_EARLY_DEMUX: 'true' } },
        { instanceType: SMALL_TRUNK_TYPE.name, env: { POD_SECURITY_GROUP_ENFORCING_MODE: 'standard' } },
      ],
      instanceTypes: [SMALL_TRUNK_TYPE],
      database: { securityGroupId: SGP.databaseGroup, port: SGP.databasePort },
    });
    for (const p of sgpPolicies) cluster.kube.createSecurityGroupPolicy(p);
    await cluster.startController({ cooldownMs: COOLDOWN_MS });
    await cluster.waitForTrunks();
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  /** Pods by name, as the tests create them. */
  const pods = new Map<string, ClusterPod>();
  const add = async (node: number, name: string, app: string) => {
    const p = await cluster.addPod(node, { name, labels: { app } });
    pods.set(name, p);
    return p;
  };
  const sgDrops = (eniId: string) => cluster.vpc.routerView().securityGroupDropsByEni[eniId]?.ingress ?? 0;

  /** What the node's kernel holds for branch pods: branch links, host veths of strict mode, prio-10 rules. */
  async function nodeBranchState(i: number) {
    const ns = cluster.nodes[i]!.instance.netnsPath;
    const links = (await inNetns(ns, ['ip', '-o', 'link', 'show'])).stdout;
    const rules = (await inNetns(ns, ['ip', 'rule', 'show'])).stdout;
    return {
      branchLinks: [...links.matchAll(/^\d+: (vlan\.eth\.\d+)[@:]/gm)].map((m) => m[1]!).sort(),
      vethLinks: [...links.matchAll(/^\d+: (vlan[0-9a-f]{11})[@:]/gm)].map((m) => m[1]!).sort(),
      rules: rules
        .split('\n')
        .filter((l) => /\blookup (1\d\d|[2-9]\d\d|[1-4]\d{3})\b/.test(l) && /^(10|512|1536):/.test(l)),
    };
  }

  /**
   * EC2 holds exactly one associated branch ENI per live branch pod (the pod's own), and nothing else: no
   * leftover, no unassociated branch, no second trunk.
   */
  function ec2MatchesPods(): boolean {
    const live = new Map(cluster.pods.filter((p) => p.branch).map((p) => [p.branch!.eniId, p]));
    const enis = cluster.branchEnis();
    const associated = new Set(cluster.vpc.simulator.state.trunkAssociations().map((a) => a.branchEniId));
    const trunks = cluster.vpc.simulator.state.enis().filter((e) => e.interfaceType === 'trunk');
    return (
      enis.length === live.size &&
      enis.every((e) => live.has(e.eniId) && associated.has(e.eniId)) &&
      associated.size === live.size &&
      trunks.length === cluster.nodes.length
    );
  }

  it('a SecurityGroupPolicy selecting app=db-client gives those pods branch ENIs from the subnet', async () => {
    const a = await add(0, 'client-a', 'db-client');
    const plain = await add(0, 'plain-0', 'web');
    expect(a.branch).toBeDefined();
    expect(plain.branch).toBeUndefined();
    // The branch: its own ENI in the node's subnet with the policy's group, on node 0's trunk, its address the pod's.
    const eni = cluster.branchEnis().find((b) => b.eniId === a.branch?.eniId);
    expect(eni).toMatchObject({ subnetId: SGP.subnet, groups: [SGP.dbClientGroup], address: a.address });
    expect(cluster.vpc.simulator.state.trunkAssociations(cluster.trunkOf(0)!.eniId)).toEqual([
      expect.objectContaining({ branchEniId: a.branch!.eniId, vlanId: a.branch!.vlanId }),
    ]);
    // The ordinary pod's address is one of the node's ENIs' (the warm pool), in the nodes' group.
    expect(cluster.branchEnis().some((b) => b.address === plain.address)).toBe(false);
    // On the node: the branch link with the branch's MAC on the trunk's interface, in strict mode's shape.
    const state = await nodeBranchState(0);
    expect(state.branchLinks).toEqual([`vlan.eth.${a.branch!.vlanId}`]);
    expect(
      state.rules.some((l) => l.startsWith('10:') && l.includes(`lookup ${a.branch!.vlanId + 100}`)),
    ).toBe(true);
    // The controller said so on the pod.
    expect(cluster.kube.podEvents('default', 'client-a')).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Normal', reason: 'ResourceAllocated' })]),
    );
  });

  it("a policy's serviceAccountSelector selects pods by their ServiceAccount's labels", async () => {
    cluster.kube.ensureServiceAccount('reports', 'reporter', { role: 'db-reader' });
    cluster.kube.createSecurityGroupPolicy({
      namespace: 'reports',
      name: 'db-readers',
      serviceAccountLabels: { role: 'db-reader' },
      groupIds: [SGP.dbClientGroup],
    });
    const reporter = await cluster.addPod(0, {
      name: 'report-0',
      namespace: 'reports',
      labels: { app: 'report' },
      serviceAccountName: 'reporter',
    });
    const other = await cluster.addPod(0, {
      name: 'report-1',
      namespace: 'reports',
      labels: { app: 'report' },
    });
    expect(reporter.branch).toBeDefined();
    expect(other.branch).toBeUndefined();
    expect(await databaseHello(reporter.netnsPath, cluster.database!.address, cluster.database!.port)).toBe(
      true,
    );
    await cluster.delPod(reporter);
    await cluster.delPod(other);
  });

  it('the database accepts TCP from the db-client pod and refuses the same connection from an ordinary pod on the same node', async () => {
    const db = cluster.database!;
    const a = pods.get('client-a')!;
    const plain = pods.get('plain-0')!;
    const refusedBefore = sgDrops(db.eniId);
    expect(await databaseHello(a.netnsPath, db.address, db.port)).toBe(true);
    expect(db.peers()).toContain(a.address);
    expect(await databaseHello(plain.netnsPath, db.address, db.port)).toBe(false);
    expect(db.peers()).not.toContain(plain.address);
    // Refused by the database's group in the VPC (a counted drop), not by anything on the node.
    expect(sgDrops(db.eniId)).toBeGreaterThan(refusedBefore);
    // Both pods reach the database's address otherwise (ICMP is not 5432: refused too, the group is that narrow).
    expect(await pings(a, db.address, 1)).toBe(0);
  });

  it('strict mode: traffic between two branch pods on one node crosses the VPC and its groups', async () => {
    const a = pods.get('client-a')!;
    const b = await add(0, 'client-b', 'db-client');
    const iso = await add(0, 'isolated-0', 'isolated');
    // Every request and every reply went up the trunk to the VPC router and back down.
    const between = await cluster.routerPackets(a.address, b.address, () => pings(a, b.address, 3));
    expect(between).toEqual({ result: 3, packets: 6 });
    // The isolated pod's group admits nobody: the router drops what a db-client pod on the same node sends it.
    const dropped = sgDrops(iso.branch!.eniId);
    const refused = await cluster.routerPackets(a.address, iso.address, () => pings(a, iso.address, 2));
    expect(refused).toEqual({ result: 0, packets: 2 });
    expect(sgDrops(iso.branch!.eniId) - dropped).toBe(2);
  });

  it('standard mode: traffic between two branch pods on one node stays on the node', async () => {
    // At once, as a burst: node 1's daemon has not seen its trunk yet, its ADDs share one lookup.
    const [b1, b2, iso] = await Promise.all([
      add(1, 'client-s1', 'db-client'),
      add(1, 'client-s2', 'db-client'),
      add(1, 'isolated-s', 'isolated'),
    ]);
    expect([b1, b2, iso].every((p) => p.branch !== undefined)).toBe(true);
    const dropped = sgDrops(iso.branch!.eniId);
    // Node-local: the router sees none of it, and the groups do not apply, so even the isolated pod answers.
    const between = await cluster.routerPackets(b1.address, b2.address, () => pings(b1, b2.address, 3));
    expect(between).toEqual({ result: 3, packets: 0 });
    const toIsolated = await cluster.routerPackets(b1.address, iso.address, () => pings(b1, iso.address, 2));
    expect(toIsolated).toEqual({ result: 2, packets: 0 });
    expect(sgDrops(iso.branch!.eniId)).toBe(dropped);
    // Off the node a standard-mode branch pod still leaves through its branch ENI, with its groups.
    expect(await databaseHello(b1.netnsPath, cluster.database!.address, cluster.database!.port)).toBe(true);
    expect(cluster.database!.peers()).toContain(b1.address);
  });

  it('the node reaches its strict-mode branch pod over TCP (a kubelet probe)', async () => {
    const a = pods.get('client-a')!;
    const probe = tcpPeerProbe(a.netnsPath, a.address, 18090);
    await new Promise((r) => setTimeout(r, 300));
    const node = cluster.nodes[0]!.instance;
    const [connected, peer] = await Promise.all([
      tcpConnect(node.netnsPath, a.address, 18090),
      probe.peer.catch(() => 'no peer'),
    ]);
    // From the node's own address, through the VPC (strict mode) and back up the branch.
    expect({ connected, peer }).toEqual({ connected: true, peer: node.privateIp });
  });

  it('a daemon restart keeps branch pods connected, in both modes', async () => {
    await Promise.all([0, 1].map((i) => cluster.stopDaemon(i, 'SIGTERM')));
    await Promise.all([0, 1].map((i) => cluster.startDaemon(i)));
    const db = cluster.database!;
    const a = pods.get('client-a')!;
    const b = pods.get('client-b')!;
    const s1 = pods.get('client-s1')!;
    const s2 = pods.get('client-s2')!;
    expect(await databaseHello(a.netnsPath, db.address, db.port)).toBe(true);
    expect(await databaseHello(s1.netnsPath, db.address, db.port)).toBe(true);
    expect(await cluster.routerPackets(a.address, b.address, () => pings(a, b.address, 2))).toEqual({
      result: 2,
      packets: 4,
    });
    expect(await cluster.routerPackets(s1.address, s2.address, () => pings(s1, s2.address, 2))).toEqual({
      result: 2,
      packets: 0,
    });
  });

  it("hitting the trunk's branch limit gives the pod a clear, distinct error (CNI error and Event)", async () => {
    // Node 1 (c7i-flex.large) carries 3 branches, all in use now.
    const over = await cluster.addPod(1, { name: 'client-over', labels: { app: 'db-client' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(over).toBeInstanceOf(PodError);
    expect(over).toMatchObject({ cniCode: 126, message: expect.stringMatching(/no free branch ENI/) });
    // Both sides said so on the pod: the node (aws-node's Event for the CNI failure) …
    await eventually(
      "aws-node's PodEniBranchLimitReached Event",
      async () =>
        cluster.kube
          .podEvents('default', 'client-over')
          .some(
            (e) => e.type === 'Warning' && e.reason === 'PodEniBranchLimitReached' && e.source === 'aws-node',
          ),
      10_000,
      100,
    );
    // … and the controller, with the cause's code.
    expect(cluster.kube.podEvents('default', 'client-over')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Warning',
          reason: 'BranchAllocationFailed',
          message: expect.stringMatching(/^BRANCH_LIMIT_REACHED: .*3 of 3/),
        }),
      ]),
    );
  });

  it("while a deleted pod's branch is in the controller's cooldown, a new pod is told the trunk is full (126), not that its annotation is missing", async () => {
    // A cooldown long enough to be inside it (the suite's is 1 s).
    await cluster.startController({ cooldownMs: 60_000 });
    const gone = pods.get('isolated-s')!;
    await cluster.delPod(gone);
    pods.delete('isolated-s');
    // Node 1 carries two branch links of its three now; EC2 still holds the third, cooling down.
    expect((await nodeBranchState(1)).branchLinks).toHaveLength(2);
    expect(cluster.branchEnis().some((e) => e.eniId === gone.branch!.eniId)).toBe(true);
    const refused = await cluster.addPod(1, { name: 'client-cool', labels: { app: 'db-client' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(PodError);
    expect(refused).toMatchObject({ cniCode: 126, message: expect.stringMatching(/no free branch ENI/) });
    expect((refused as PodError).details).toMatch(
      /EC2 holds 3 of the 3 branches .*2 plumbed here, 1 .*waiting out the controller's cooldown/,
    );
    // Once the cooled branch is deleted (a restarted controller deletes what it finds released at once), the
    // controller gives the pod a branch and the kubelet's next try succeeds.
    await cluster.startController({ cooldownMs: COOLDOWN_MS });
    await eventually(
      'the cooled branch deleted',
      async () => !cluster.branchEnis().some((e) => e.eniId === gone.branch!.eniId),
      15_000,
      100,
    );
    const cooled = await add(1, 'client-cooled', 'db-client');
    expect(cooled.branch).toBeDefined();
    await cluster.delPod(cooled);
    pods.delete('client-cooled');
  });

  it('deleting a branch pod frees its branch ENI: none left in EC2 after the cooldown', async () => {
    const b = pods.get('client-b')!;
    const eniId = b.branch!.eniId;
    await cluster.delPod(b);
    pods.delete('client-b');
    // Disassociated and deleted once the cooldown is over (1 s here; 60 s by default).
    await eventually(
      'the branch ENI deleted',
      async () => !cluster.branchEnis().some((e) => e.eniId === eniId),
      15_000,
      100,
    );
    expect(cluster.vpc.simulator.state.trunkAssociations().some((x) => x.branchEniId === eniId)).toBe(false);
    expect((await nodeBranchState(0)).branchLinks).not.toContain(`vlan.eth.${b.branch!.vlanId}`);
    expect(ec2MatchesPods()).toBe(true);
  });

  it('the controller killed (SIGKILL) mid-churn and restarted leaks nothing', async () => {
    const churn = Array.from({ length: 4 }, (_, k) =>
      cluster.addPod(0, { name: `churn-c${k}`, labels: { app: 'db-client' }, retryForMs: 60_000 }),
    );
    const before = cluster.branchEnis().length;
    // Every churn pod is created (through the controller's webhook, so it carries the pod-eni resource) before
    // the kill: a pod created while the webhook is down gets no resource, as in EKS with failurePolicy Ignore.
    await eventually(
      'the churn pods created',
      async () =>
        Array.from({ length: 4 }, (_, k) =>
          cluster.kube.sim.objects.get('v1', 'pods', `churn-c${k}`, 'default'),
        ).every((p) => p !== undefined),
      15_000,
      10,
    );
    await eventually('a branch ENI being made', async () => cluster.branchEnis().length > before, 15_000, 10);
    await cluster.stopController('SIGKILL');
    // It died with work left: some of the churn's pods have no branch yet.
    expect(
      Array.from({ length: 4 }, (_, k) => cluster.podEniAnnotation('default', `churn-c${k}`)).some(
        (a) => a === undefined,
      ),
    ).toBe(true);
    // While it is down, a branch pod goes (its ENI must not leak) and the churn waits.
    const a = pods.get('client-a')!;
    await cluster.delPod(a);
    pods.delete('client-a');
    await cluster.startController({ cooldownMs: COOLDOWN_MS });
    const made = await Promise.all(churn);
    expect(made.every((p) => p.branch !== undefined)).toBe(true);
    for (const p of made) await cluster.delPod(p);
    await eventually('EC2 holds exactly the live pods’ branches', async () => ec2MatchesPods(), 20_000, 100);
  });

  it('the daemon killed (SIGKILL) mid-churn leaks nothing on the node or in EC2', async () => {
    const churn = Array.from({ length: 4 }, (_, k) =>
      cluster.addPod(0, { name: `churn-d${k}`, labels: { app: 'db-client' }, retryForMs: 60_000 }),
    );
    // Kill it while ADDs are being served.
    await eventually(
      'a branch pod plumbed',
      async () => (await nodeBranchState(0)).branchLinks.length > 1,
      15_000,
      10,
    );
    await cluster.stopDaemon(0, 'SIGKILL');
    await cluster.startDaemon(0);
    const made = await Promise.all(churn.map((p) => p.catch((e: unknown) => e)));
    const ok = made.filter((p): p is ClusterPod => !(p instanceof Error));
    // Pods made before the kill are deleted by a daemon that never saw them (the plugin's prevResult path).
    for (const p of ok) await cluster.delPod(p);
    const iso = pods.get('isolated-0')!;
    await cluster.delPod(iso);
    pods.delete('isolated-0');
    // A host veth whose peer was in a deleted pod namespace goes with it, but the kernel frees namespaces in
    // the background: allow it a moment.
    let state = await nodeBranchState(0);
    for (let t = 0; t < 50 && state.vethLinks.length > 0; t++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await nodeBranchState(0);
    }
    expect(state).toEqual({ branchLinks: [], vethLinks: [], rules: [] });
    await eventually('EC2 holds exactly the live pods’ branches', async () => ec2MatchesPods(), 20_000, 100);
  });
});
