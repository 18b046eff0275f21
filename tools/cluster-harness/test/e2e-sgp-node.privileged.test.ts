/**
 * Security groups for pods on the node, end to end on the virtual VPC (issue #15, the daemon's side): aws-node
 * with ENABLE_POD_ENI, pods through libcni, Pod objects in kube-simulator. The TEST plays the VPC resource
 * controller: it creates the trunk and the branch ENIs with the AWS SDK against the ec2-simulator, associates
 * each branch with the trunk under a VLAN id and writes the pod's `vpc.amazonaws.com/pod-eni` annotation.
 *
 * - the pool keeps the trunk's ENI slot free; the daemon asks for a trunk in its CNINode;
 * - a branch pod gets its branch's address, and its traffic meets the branch's groups (ping and TCP to a
 *   "database" pod whose group admits only its clients' group); CNI CHECK verifies it;
 * - strict mode: traffic between two branch pods on the node crosses the VPC (the router's security-group
 *   counters move); standard mode: it stays on the node (they do not);
 * - DEL removes every branch link, rule and route, through the daemon or, when it is down, from the prevResult;
 *   branch pods keep their network across daemon restarts; the warm pool never counts a branch pod;
 * - a daemon killed (SIGKILL) comes back with its branch pod records, and a DEL afterwards goes through it;
 *   CNI GC removes the branch plumbing of an attachment the runtime no longer lists, and nothing else;
 * - a missing trunk, an unparsable annotation and a plugin/daemon version mismatch each fail with their own
 *   CNI code (or gRPC status) and a Warning Event on the pod.
 */

import { readFileSync } from 'node:fs';
import {
  AssociateTrunkInterfaceCommand,
  AttachNetworkInterfaceCommand,
  AuthorizeSecurityGroupIngressCommand,
  CreateNetworkInterfaceCommand,
  CreateSecurityGroupCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { netnsDel } from '@vpc-cni-kit/netlink';
import { formatPodEniAnnotation, POD_ENI_ANNOTATION, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cluster, type ClusterPod, PodError } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { attachment, runPlugin } from './support/run-plugin.js';
import { enis, eventually, startOneNode } from './support/scenario.js';

const SUBNET = 'subnet-0c000000000000001';
const SUBNET_CIDR = '10.0.0.0/20';
const LIMITS = { [POD_ENI_RESOURCE]: '1' };

describePrivileged('security groups for pods: aws-node and aws-cni on the virtual VPC', () => {
  let c: Cluster;
  let ec2: EC2Client;
  let trunkId = '';
  const groups = { db: '', clients: '', others: '' };
  let vlan = 0;

  /** As the controller would: a branch ENI with `groups`, associated with the trunk, and its annotation. */
  async function branch(sg: string): Promise<{ eniId: string; address: string; annotation: string }> {
    const created = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET, Groups: [sg] })))
      .NetworkInterface!;
    const vlanId = ++vlan;
    const assoc = await ec2.send(
      new AssociateTrunkInterfaceCommand({
        BranchInterfaceId: created.NetworkInterfaceId!,
        TrunkInterfaceId: trunkId,
        VlanId: vlanId,
      }),
    );
    return {
      eniId: created.NetworkInterfaceId!,
      address: created.PrivateIpAddress!,
      annotation: formatPodEniAnnotation({
        eniId: created.NetworkInterfaceId!,
        mac: created.MacAddress!,
        ipv4: created.PrivateIpAddress!,
        subnetCidr: SUBNET_CIDR,
        vlanId,
        associationId: assoc.InterfaceAssociation!.AssociationId!,
      }),
    };
  }

  const node = () => c.nodes[0]!;
  const onNode = async (cmd: string[]) => (await inNetns(node().instance.netnsPath, cmd)).stdout;
  const ingressDrops = (eniId: string) => c.vpc.routerView().securityGroupDropsByEni[eniId]?.ingress ?? 0;
  const podEvent = (name: string, reason: string) =>
    c.kube.sim.objects
      .list('events.k8s.io/v1', 'events', 'default')
      .find((e) => e.reason === reason && (e.regarding as { name?: string } | undefined)?.name === name);

  async function addFails(name: string, annotations: Record<string, string>): Promise<PodError> {
    const e = await c
      .addPod(0, { name, annotations, limits: LIMITS, retryForMs: 0 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PodError);
    return e as PodError;
  }

  beforeAll(async () => {
    c = await startOneNode({
      env: {
        ENABLE_POD_ENI: 'true',
        POD_SECURITY_GROUP_ENFORCING_MODE: 'strict',
        DISABLE_TCP_EARLY_DEMUX: 'true',
        AWS_NODE_BRANCH_LINK_KIND: 'macvlan',
        AWS_NODE_RECONCILE_INTERVAL_SECONDS: '1',
        // More warm addresses than two ENIs hold: the pool would take the third (last) slot of the m5.large
        // were it not kept for the trunk.
        WARM_ENI_TARGET: '0',
        WARM_IP_TARGET: '30',
      },
    });
    ec2 = new EC2Client({
      endpoint: c.vpc.simulator.endpoint,
      region: c.vpc.simulator.region,
      credentials: { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator-secret' },
      maxAttempts: 1,
    });
    const vpcId = (await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [SUBNET] }))).Subnets![0]!.VpcId!;
    for (const name of ['db', 'clients', 'others'] as const) {
      groups[name] = (
        await ec2.send(new CreateSecurityGroupCommand({ GroupName: name, Description: name, VpcId: vpcId }))
      ).GroupId!;
    }
    // The "database" admits its clients' group only.
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: groups.db,
        IpPermissions: [{ IpProtocol: '-1', UserIdGroupPairs: [{ GroupId: groups.clients }] }],
      }),
    );
  }, 120_000);

  afterAll(async () => {
    ec2?.destroy();
    await c?.close();
  }, 120_000);

  it('asks for a trunk, refuses branch pods until one is attached, then finds it', async () => {
    await eventually('the CNINode with SecurityGroupsForPods', async () => {
      const obj = c.kube.sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', node().nodeName);
      return ((obj?.spec as { features?: { name: string }[] })?.features ?? []).some(
        (f) => f.name === 'SecurityGroupsForPods',
      );
    });
    // No trunk yet: a branch pod fails with NO_TRUNK (CNI 124) and an Event on the pod.
    const annotation = formatPodEniAnnotation({
      eniId: 'eni-0ffffffffffffffff',
      mac: '0a:ff:ff:ff:ff:ff',
      ipv4: '10.0.15.250',
      subnetCidr: SUBNET_CIDR,
      vlanId: 99,
    });
    const noTrunk = await addFails('early', { [POD_ENI_ANNOTATION]: annotation });
    expect(noTrunk.cniCode).toBe(124);
    await eventually('the PodEniNoTrunk Event', async () => podEvent('early', 'PodEniNoTrunk') !== undefined);

    // The pool grew as far as it may: two ENIs, the instance's third slot kept free for the trunk.
    expect(Object.keys((await enis(c)).ENIs)).toHaveLength(2);
    expect(c.vpc.simulator.state.attachedEnis(node().instance.instanceId)).toHaveLength(2);
    const trunk = (
      await ec2.send(
        new CreateNetworkInterfaceCommand({
          SubnetId: SUBNET,
          InterfaceType: 'trunk',
          Groups: [groups.others],
        }),
      )
    ).NetworkInterface!;
    trunkId = trunk.NetworkInterfaceId!;
    const used = new Set(
      c.vpc.simulator.state.attachedEnis(node().instance.instanceId).map((e) => e.attachment?.deviceIndex),
    );
    let device = 1;
    while (used.has(device)) device++;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: trunkId,
        InstanceId: node().instance.instanceId,
        DeviceIndex: device,
      }),
    );
    await eventually('the trunk classified', async () =>
      ((await c.introspect(0, '/v1/unmanaged-enis')) as { eniId: string; reason: string }[]).some(
        (u) => u.eniId === trunkId && u.reason === 'trunk',
      ),
    );
    // The trunk took the kept slot; the pool never adds a fourth.
    expect(c.vpc.simulator.state.attachedEnis(node().instance.instanceId)).toHaveLength(3);
  }, 60_000);

  let db: ClusterPod;
  let client: ClusterPod;
  let other: ClusterPod;
  let ordinary: ClusterPod;
  let dbEni = '';

  it('strict mode: branch pods get their branch addresses; same-node traffic crosses the VPC and its groups', async () => {
    const b = {
      db: await branch(groups.db),
      client: await branch(groups.clients),
      other: await branch(groups.others),
    };
    dbEni = b.db.eniId;
    const timings: Record<string, number> = {};
    const add = async (name: string, annotation?: string) => {
      const t0 = performance.now();
      const pod = await c.addPod(0, {
        name,
        ...(annotation ? { annotations: { [POD_ENI_ANNOTATION]: annotation }, limits: LIMITS } : {}),
      });
      timings[name] = performance.now() - t0;
      return pod;
    };
    ordinary = await add('plain');
    db = await add('db', b.db.annotation);
    client = await add('db-client', b.client.annotation);
    other = await add('other', b.other.annotation);
    console.log('ADD through libcni, ms (branch pods: db, db-client, other):', timings);

    expect([db.address, client.address, other.address]).toEqual([
      b.db.address,
      b.client.address,
      b.other.address,
    ]);
    expect(ordinary.address).not.toBe('');
    // The reference's result: the VLAN id in the dummy interface, the branch subnet's gateway on the address.
    const result = db.result as { interfaces: { name: string; mac?: string }[]; ips: { gateway?: string }[] };
    expect(result.interfaces[2]).toMatchObject({ mac: '1' });
    expect(result.ips[0]!.gateway).toBe('10.0.0.1');
    const links = await onNode(['ip', '-o', 'link', 'show']);
    for (const v of [1, 2, 3]) expect(links).toContain(`vlan.eth.${v}@`);
    const rules = await onNode(['ip', 'rule', 'show']);
    expect(rules).toMatch(/^10:\s+from all iif vlan\.eth\.1 lookup 101/m);
    expect(rules).toMatch(/^20:\s+from all lookup local/m);
    expect(await onNode(['sysctl', '-n', 'net.ipv4.tcp_early_demux'])).toBe('0\n');

    // The warm pool never sees a branch pod: one address assigned (the ordinary pod's).
    expect((await enis(c)).AssignedIPs).toBe(1);
    const listed = (await c.introspect(0, '/v1/branch-pods')) as {
      name: string;
      vlanId: number;
      branchEniId: string;
    }[];
    expect(listed.map((p) => [p.name, p.vlanId, p.branchEniId]).sort()).toEqual(
      [
        ['db', 1, b.db.eniId],
        ['db-client', 2, b.client.eniId],
        ['other', 3, b.other.eniId],
      ].sort(),
    );

    // CNI CHECK of a branch pod: pod side, branch link and rules.
    for (const p of [db, client, other]) expect(await c.checkPod(p)).toEqual({ ok: true });

    // The database admits its clients' group: the client connects, the others are dropped by the VPC.
    const before = ingressDrops(dbEni);
    expect(await c.ping(client.netnsPath, db.address)).toBe(true);
    expect(ingressDrops(dbEni)).toBe(before);
    expect(await c.ping(other.netnsPath, db.address)).toBe(false);
    expect(await c.ping(ordinary.netnsPath, db.address)).toBe(false);
    expect(ingressDrops(dbEni)).toBeGreaterThanOrEqual(before + 2);

    // TCP to the "database" on 5432: refused (dropped by the VPC) from the other group, accepted from the
    // client, whose branch address the database sees (no SNAT on vlan+).
    const listener = tcpPeerProbe(db.netnsPath, db.address, 5432);
    expect(await tcpConnect(other.netnsPath, db.address, 5432, 2000)).toBe(false);
    expect(await tcpConnect(client.netnsPath, db.address, 5432, 2000)).toBe(true);
    expect(await listener.peer).toBe(client.address);
  }, 90_000);

  it("a pod copying another pod's annotation without asking for the resource gets a pool address; the branch pod keeps its VLAN", async () => {
    const stolen = c.podEniAnnotation('default', 'db')!;
    const assignedBefore = (await enis(c)).AssignedIPs;
    const recorded = await listedBranchPods();
    const vlanOfDb = db.branch!.vlanId;
    // No limits: the pod does not ask for vpc.amazonaws.com/pod-eni, only its annotation names db's branch.
    const forger = await c.addPod(0, { name: 'forger', annotations: { [POD_ENI_ANNOTATION]: stolen } });
    expect(forger.address).not.toBe(db.address);
    expect((await enis(c)).AssignedIPs).toBe(assignedBefore + 1);
    // db's record, branch link, routes and rules are untouched, and its clients still reach it over the VPC.
    expect(await listedBranchPods()).toEqual(recorded);
    expect(await vlanState(vlanOfDb)).toEqual({ link: true, routes: true, rules: 2 });
    expect(await c.ping(client.netnsPath, db.address)).toBe(true);
    const warned = readFileSync(node().logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('annotation ignored') && l.includes('"pod":"default/forger"'));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 'warn' });
    await c.delPod(forger);
    expect(await vlanState(vlanOfDb)).toEqual({ link: true, routes: true, rules: 2 });
    expect((await enis(c)).AssignedIPs).toBe(assignedBefore);
  }, 60_000);

  it('an unparsable annotation fails with its own code, Event and count', async () => {
    const invalid = await addFails('garbled', { [POD_ENI_ANNOTATION]: '[{"eniId":' });
    expect(invalid.cniCode).toBe(123);
    await eventually(
      'the PodEniAnnotationInvalid Event',
      async () => podEvent('garbled', 'PodEniAnnotationInvalid') !== undefined,
    );
    const metrics = await c.metrics(0);
    expect(metrics).toMatch(/awscni_pod_eni_error_count\{fn="AddNetwork.ANNOTATION_INVALID"\} 1/);
    expect(metrics).toMatch(/awscni_pod_eni_error_count\{fn="AddNetwork.NO_TRUNK"\} 1/);
  }, 60_000);

  /** What the node's kernel holds for VLAN `v`: its branch link, its table's routes, its prio-10 rules. */
  async function vlanState(v: number) {
    const links = await onNode(['ip', '-o', 'link', 'show']);
    const rules = await onNode(['ip', 'rule', 'show']);
    return {
      link: links.includes(`vlan.eth.${v}@`),
      routes: (await onNode(['ip', 'route', 'show', 'table', String(100 + v)])).trim() !== '',
      rules: rules.split('\n').filter((l) => l.startsWith('10:') && l.includes(`lookup ${100 + v}`)).length,
    };
  }
  type Listed = { containerID: string; name: string; vlanId: number; branchEniId: string; hostVeth: string };
  const listedBranchPods = async () =>
    ((await c.introspect(0, '/v1/branch-pods')) as Listed[])
      .map((p) => [p.name, p.containerID, p.vlanId, p.branchEniId, p.hostVeth].join(' '))
      .sort();
  /** A branch pod `name` on a new branch of the clients' group, and its VLAN id. */
  async function branchPodOnNewVlan(name: string): Promise<{ pod: ClusterPod; v: number }> {
    const b = await branch(groups.clients);
    const pod = await c.addPod(0, {
      name,
      annotations: { [POD_ENI_ANNOTATION]: b.annotation },
      limits: LIMITS,
    });
    return { pod, v: vlan };
  }

  it('a daemon killed (SIGKILL) comes back with its branch pod records, and a DEL afterwards goes through it', async () => {
    const { pod, v } = await branchPodOnNewVlan('restarted');
    const before = await listedBranchPods();
    expect(before).toHaveLength(4);
    await c.stopDaemon(0, 'SIGKILL');
    const t0 = performance.now();
    await c.startDaemon(0);
    console.log(`daemon restart with 4 branch pods: healthy after ${Math.round(performance.now() - t0)} ms`);
    // The records are back (the introspection and `aws-node status` list them), from the ledger, as the host has them.
    expect(await listedBranchPods()).toEqual(before);
    const restored = c
      .logTail(0, 400)
      .split('\n')
      .filter((l) => l.includes('branch pods restored'))
      .map((l) => JSON.parse(l) as { found: number; restored: number; ms: number })
      .at(-1);
    expect(restored).toMatchObject({ found: 4, restored: 4 });
    console.log(`branch pod records read back and checked against the host in ${restored?.ms} ms`);
    expect(await c.checkPod(pod)).toEqual({ ok: true });

    // DEL after the restart: the daemon knows the pod and tears it down itself.
    await c.delPod(pod);
    expect(
      c
        .logTail(0, 50)
        .split('\n')
        .some((l) => l.includes('DelNetwork (branch ENI)') && l.includes(pod.containerId)),
    ).toBe(true);
    expect(await vlanState(v)).toEqual({ link: false, routes: false, rules: 0 });
    expect(await listedBranchPods()).toEqual(before.filter((p) => !p.includes(pod.containerId)));
  }, 60_000);

  it('CNI GC removes the branch plumbing of an attachment the runtime lost, after a restart too, and nothing else', async () => {
    const { pod: lost, v } = await branchPodOnNewVlan('lost');
    const hostVeth = ((await c.introspect(0, '/v1/branch-pods')) as Listed[]).find(
      (p) => p.containerID === lost.containerId,
    )!.hostVeth;
    // The runtime lost the pod without a DEL: its namespace (and with it its host veth) is gone, the branch link,
    // its table and rules stay on the host.
    netnsDel(lost.netns);
    c.pods.splice(c.pods.indexOf(lost), 1);
    await eventually(
      'the host veth gone with the namespace',
      async () => !(await onNode(['ip', '-o', 'link', 'show'])).includes(hostVeth),
    );
    expect(await vlanState(v)).toEqual({ link: true, routes: true, rules: 2 });
    // And the daemon restarted since (its records come from the ledger).
    await c.stopDaemon(0, 'SIGKILL');
    await c.startDaemon(0);

    const live = [ordinary, db, client, other];
    const othersBefore = await Promise.all([1, 2, 3].map(vlanState));
    const gc = await runPlugin(node(), 'GC', { 'cni.dev/valid-attachments': live.map(attachment) });
    expect(gc.code).toBe(0);
    expect(await vlanState(v)).toEqual({ link: false, routes: false, rules: 0 });
    const hostRoutes = await onNode(['ip', 'route', 'show', 'table', 'all']);
    expect(hostRoutes).not.toContain(`${lost.address} `);
    const line = c
      .logTail(0, 100)
      .split('\n')
      .filter((l) => l.includes('GC of stale attachments'))
      .at(-1);
    expect(JSON.parse(line!)).toMatchObject({
      released: [],
      branches: [{ address: lost.address, containerID: lost.containerId, vlanId: v }],
    });
    // Nothing of the live pods moved.
    expect(await Promise.all([1, 2, 3].map(vlanState))).toEqual(othersBefore);
    for (const p of live) expect(await c.checkPod(p)).toEqual({ ok: true });
    expect((await listedBranchPods()).some((p) => p.includes(lost.containerId))).toBe(false);
    // A second GC finds nothing more.
    expect((await runPlugin(node(), 'GC', { 'cni.dev/valid-attachments': live.map(attachment) })).code).toBe(
      0,
    );
    expect(await Promise.all([1, 2, 3].map(vlanState))).toEqual(othersBefore);
    c.kube.deletePod(lost.namespace, lost.name);
  }, 60_000);

  it('DEL removes every branch link, rule and route (with the daemon, and from prevResult without it)', async () => {
    // A branch link gone behind the daemon's back: CHECK names it, DEL still completes.
    await onNode(['ip', 'link', 'del', 'vlan.eth.2']);
    const broken = await c.checkPod(client);
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error.msg).toContain('missing branch link vlan.eth.2');
    for (const p of [db, client]) await c.delPod(p);
    const dels = c
      .logTail(0, 400)
      .split('\n')
      .filter((l) => l.includes('DelNetwork (branch ENI)'));
    for (const p of [db, client]) expect(dels.filter((l) => l.includes(p.containerId))).toHaveLength(1);
    // A strict-mode branch pod keeps its network across a daemon restart (the subnet gateway, on the router,
    // is reached through the branch).
    expect(await c.ping(other.netnsPath, '10.0.0.1')).toBe(true);
    await c.stopDaemon(0);
    await c.startDaemon(0);
    expect(await c.ping(other.netnsPath, '10.0.0.1')).toBe(true);
    // The daemon is down: the plugin tears the branch down from its prevResult (the VLAN id in the dummy).
    await c.stopDaemon(0);
    await c.delPod(other);
    await c.startDaemon(0);
    expect(await onNode(['ip', '-o', 'link', 'show'])).not.toContain('vlan.eth.');
    const rules = await onNode(['ip', 'rule', 'show']);
    expect(rules).not.toMatch(/^10:/m);
    for (const p of [db, client, other]) {
      expect(rules).not.toContain(p.address);
      expect(await onNode(['ip', 'route', 'show', 'table', 'all'])).not.toContain(`${p.address} `);
    }
    expect(await c.introspect(0, '/v1/branch-pods')).toEqual([]);
  }, 60_000);

  it('standard mode: same-node traffic between branch pods stays on the node, off the VPC groups', async () => {
    await c.stopDaemon(0);
    node().env = {
      ...node().env,
      POD_SECURITY_GROUP_ENFORCING_MODE: 'standard',
      DISABLE_TCP_EARLY_DEMUX: 'false',
    };
    await c.startDaemon(0);
    const rules = await onNode(['ip', 'rule', 'show']);
    expect(rules).toMatch(/^0:\s+from all lookup local/m);
    expect(rules).not.toMatch(/^20:/m);
    const b = { db: await branch(groups.db), other: await branch(groups.others) };
    db = await c.addPod(0, {
      name: 'db2',
      annotations: { [POD_ENI_ANNOTATION]: b.db.annotation },
      limits: LIMITS,
    });
    other = await c.addPod(0, {
      name: 'other2',
      annotations: { [POD_ENI_ANNOTATION]: b.other.annotation },
      limits: LIMITS,
    });
    const hostRules = await onNode(['ip', 'rule', 'show']);
    expect(hostRules).toContain(`from ${b.db.address} lookup ${100 + vlan - 1}`);
    const before = ingressDrops(b.db.eniId);
    // The database's group does not admit "others", yet on the node their traffic never meets it.
    expect(await c.ping(other.netnsPath, db.address)).toBe(true);
    expect(await c.ping(ordinary.netnsPath, db.address)).toBe(true);
    expect(ingressDrops(b.db.eniId)).toBe(before);
    // The pods' rules survive a daemon restart (its routing reconcile owns priorities 512 and 1536).
    await c.stopDaemon(0);
    await c.startDaemon(0);
    expect(await c.ping(other.netnsPath, db.address)).toBe(true);
    for (const p of [db, other]) await c.delPod(p);
    const after = await onNode(['ip', 'rule', 'show']);
    expect(after).not.toContain(b.db.address);
    expect(await onNode(['ip', '-o', 'link', 'show'])).not.toContain('vlan.eth.');
    await c.delPod(ordinary);
  }, 90_000);

  it('a plugin/daemon version mismatch fails with its own code and Event', async () => {
    // A daemon of another version than the plugin (VPC_CNI_VERSION): the ADD through libcni fails with 120.
    await c.stopDaemon(0);
    const env = node().env;
    node().env = { ...env, VPC_CNI_VERSION: 'v0.0.0-skewed' };
    await c.startDaemon(0);
    try {
      const skewed = await addFails('skewed', {});
      expect(skewed.cniCode).toBe(120);
      expect(skewed.details).toContain('wrong client version');
      await eventually(
        'the PodEniVersionMismatch Event',
        async () => podEvent('skewed', 'PodEniVersionMismatch') !== undefined,
      );
      expect(await c.metrics(0)).toMatch(/awscni_pod_eni_error_count\{fn="validateVersion"\} 1/);
    } finally {
      await c.stopDaemon(0);
      node().env = env;
      await c.startDaemon(0);
    }
  }, 60_000);
});
