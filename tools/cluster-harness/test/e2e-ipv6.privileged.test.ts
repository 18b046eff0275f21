/**
 * An IPv6 cluster on the dual-stack virtual VPC: two nodes whose daemons run in IPv6 mode (`ENABLE_IPv6=true`,
 * `ENABLE_IPv4=false`, prefix delegation), pods created through libcni. Pods get /128s from the /80 the daemon
 * delegated to its primary ENI, talk across nodes with their own addresses, reach the IPv6 internet host
 * without SNAT, reach the IPv4-only internet host through egress-cni (chained after aws-cni, as the daemon's
 * conflist says) SNATed to the node's IPv4, and keep everything over a SIGKILL of the daemon (the IPv6
 * checkpoint).
 */
import { existsSync, readFileSync } from 'node:fs';
import { daemonClient } from '@vpc-cni-kit/aws-node';
import { cidrContains, parseCidr, parseIp } from '@vpc-cni-kit/ip-address';
import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { enis, eventually } from './support/scenario.js';

const binDir = awsNodeBinDir();

/** Whether `address` lies in the IPv6 `/80` `prefix`. */
function inPrefix80(address: string, prefix: string): boolean {
  return cidrContains(parseCidr(prefix)!, parseIp(address)!);
}

/** Whether `text` (`ip` output) names exactly `address` (not another address it is a prefix of). */
function names(text: string, address: string): boolean {
  return text
    .split(/\s+/)
    .some((word) => word === address || word === `${address}/128` || word === `${address}/32`);
}

/** The IPv6 addresses a checkpoint file holds (`ipv6` of each allocation), sorted. */
function checkpointIpv6(path: string): (string | undefined)[] {
  const doc = JSON.parse(readFileSync(path, 'utf8')) as { allocations: { ipv4?: string; ipv6?: string }[] };
  return doc.allocations.map((e) => (e.ipv4 === undefined ? e.ipv6 : `ipv4:${e.ipv4}`)).sort();
}

describePrivileged('aws-node in IPv6 mode on the dual-stack virtual VPC', () => {
  let cluster: Cluster;
  const pods: ClusterPod[] = [];
  const prefixes: string[] = [];

  beforeAll(async () => {
    if (!existsSync(`${binDir}/aws-node.cjs`))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    cluster = await Cluster.start({
      nodes: 2,
      ipv6: true,
      binDir,
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
    });
    for (const node of cluster.nodes) prefixes.push(...primaryPrefixes(node.index));
  }, 180_000);

  /** The /80 prefixes EC2 (the simulator's state) lists on node `i`'s primary ENI. */
  const primaryPrefixes = (i: number) =>
    cluster.vpc.simulator.state
      .eni(cluster.nodes[i]!.instance.enis[0]!.eniId)!
      .ipv6Prefixes.map((p) => p.value);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('delegates exactly one /80 to each primary ENI and creates no other ENI', async () => {
    expect(prefixes).toHaveLength(2);
    for (const p of prefixes) expect(p).toMatch(/^2001:db8:c00:1:[0-9a-f:]+\/80$/);
    for (const node of cluster.nodes)
      expect(cluster.vpc.describe().instances[node.index]!.enis).toHaveLength(1);
    // The /80 is the datastore's only CIDR, listed where the reference lists it.
    const card = await enis(cluster);
    const primary = Object.values(card.ENIs)[0] as Record<string, Record<string, unknown>>;
    expect(Object.keys(primary['IPv6Cidrs']!)).toEqual([prefixes[0]]);
    expect(primary['IPv6Cidrs']![prefixes[0]!]).toMatchObject({ AddressFamily: '6', IsPrefix: true });
    expect(primary['AvailableIPv4Cidrs']).toEqual({});
  });

  it('chains egress-cni after aws-cni in the conflist, enabled for IPv4 egress with the node IPv4', () => {
    const node = cluster.nodes[0]!;
    const conflist = JSON.parse(readFileSync(`${node.confDir}/10-aws.conflist`, 'utf8')) as {
      plugins: Record<string, unknown>[];
    };
    expect(conflist.plugins.map((p) => p['type'])).toEqual(['aws-cni', 'egress-cni', 'portmap']);
    expect(conflist.plugins[1]).toMatchObject({
      enabled: 'true',
      nodeIP: node.instance.privateIp,
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: '169.254.172.0/22' }]],
        routes: [{ dst: '0.0.0.0/0' }],
      },
    });
  });

  it('gives pods /128s from the node /80, in the reference result shape', async () => {
    pods.push(await cluster.addPod(0), await cluster.addPod(0), await cluster.addPod(1));
    expect(inPrefix80(pods[0]!.address, prefixes[0]!)).toBe(true);
    expect(inPrefix80(pods[1]!.address, prefixes[0]!)).toBe(true);
    expect(inPrefix80(pods[2]!.address, prefixes[1]!)).toBe(true);
    expect(new Set(pods.map((p) => p.address)).size).toBe(3);
    expect(pods[0]!.result).toMatchObject({
      cniVersion: '0.4.0',
      interfaces: [
        { name: expect.stringMatching(/^eni[0-9a-f]{11}$/) },
        { name: 'eth0', sandbox: pods[0]!.netnsPath, mac: '254' },
        { name: expect.stringMatching(/^dummy/), mac: '0', sandbox: '0' },
        // egress-cni's host veth and the pod's v4if0 (its IPv4 address is not added to the result).
        { name: expect.stringMatching(/^veth/) },
        { name: 'v4if0', sandbox: pods[0]!.netnsPath },
      ],
      ips: [{ version: '6', address: `${pods[0]!.address}/128`, interface: 1 }],
    });
    // Inside the pod: the /128 (past duplicate-address detection) and the default route via fe80::1.
    const addr = (await inNetns(pods[0]!.netnsPath, ['ip', '-6', 'addr', 'show', 'dev', 'eth0'])).stdout;
    expect(addr).toContain(`${pods[0]!.address}/128`);
    expect(addr).not.toContain('tentative');
    const route = (await inNetns(pods[0]!.netnsPath, ['ip', '-6', 'route', 'show', 'default'])).stdout;
    expect(route).toContain('via fe80::1 dev eth0');
  });

  it('the Kubernetes view: Nodes by their IPv6 InternalIP, pods Running with their /128', () => {
    const objects = cluster.kube.sim.objects;
    const node = objects.get('v1', 'nodes', cluster.nodes[0]!.nodeName);
    const status = node?.status as { addresses?: { type: string; address: string }[] } | undefined;
    expect(status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe(
      cluster.nodes[0]!.instance.ipv6,
    );
    const pod = objects.get('v1', 'pods', pods[0]!.name, pods[0]!.namespace);
    expect(pod?.status).toMatchObject({ phase: 'Running', podIP: pods[0]!.address });
  });

  it('CHECK passes for an IPv6 pod (aws-cni and egress-cni verify what ADD made)', async () => {
    expect(await cluster.checkPod(pods[0]!)).toEqual({ ok: true });
  });

  it('sets the node up as the reference: v6 fwmark rule, no SNAT or connmark, the egress-range FORWARD block', async () => {
    const ns = cluster.nodes[0]!.instance.netnsPath;
    const rules6 = (await inNetns(ns, ['ip', '-6', 'rule', 'show'])).stdout;
    expect(rules6).toMatch(/^1024:\s+from all fwmark 0x80\/0x80 lookup main/m);
    expect(rules6).toContain(`512:\tfrom all to ${pods[0]!.address} lookup main`);
    const nat = (await inNetns(ns, ['iptables-save', '-t', 'nat'])).stdout;
    expect(nat).not.toContain('AWS-SNAT-CHAIN');
    const forward = (await inNetns(ns, ['iptables', '-S', 'FORWARD'])).stdout;
    expect(forward).toContain(
      '-A FORWARD -d 169.254.172.0/22 -m conntrack --ctstate NEW -m comment --comment "Block Node Local Pod access via IPv4" -j REJECT',
    );
  });

  it('AddNetwork replies carry IPv6Addr and the VPC IPv6 block, as the reference', async () => {
    const node = cluster.nodes[1]!;
    const reply = await daemonClient(node.socket, 5000).addNetwork({
      K8S_POD_NAME: 'grpc-probe',
      K8S_POD_NAMESPACE: 'default',
      K8S_POD_INFRA_CONTAINER_ID: 'c-grpc-probe',
      Netns: '',
      IfName: 'eth0',
      NetworkName: 'aws-cni',
      ContainerID: 'c-grpc-probe',
      ClientVersion: '',
      RequiresMultiNICAttachment: false,
      PodPlumbing: false,
      Mtu: 0,
      VethPrefix: '',
    });
    expect(reply).toMatchObject({
      Success: true,
      UseExternalSNAT: false,
      VPCv4CIDRs: [],
      VPCv6CIDRs: ['2001:db8:c00::/56'],
    });
    expect(reply.IPAllocationMetadata[0]).toMatchObject({ IPv4Addr: '', DeviceNumber: 0, RouteTableId: 254 });
    expect(inPrefix80(reply.IPAllocationMetadata[0]!.IPv6Addr, prefixes[1]!)).toBe(true);
    const del = await daemonClient(node.socket, 5000).delNetwork({
      K8S_POD_NAME: 'grpc-probe',
      K8S_POD_NAMESPACE: 'default',
      K8S_POD_INFRA_CONTAINER_ID: 'c-grpc-probe',
      K8S_POD_UID: '',
      Reason: 'PodDeleted',
      IfName: 'eth0',
      NetworkName: 'aws-cni',
      ContainerID: 'c-grpc-probe',
      ClientVersion: '',
      PodPlumbing: false,
    });
    expect(del.IPAllocationMetadata[0]?.IPv6Addr).toBe(reply.IPAllocationMetadata[0]!.IPv6Addr);
  });

  it('connects pod↔pod on one node and across nodes over IPv6, keeping pod addresses (TCP)', async () => {
    const [a, b, c] = pods as [ClusterPod, ClusterPod, ClusterPod];
    expect(await cluster.ping(a.netnsPath, b.address)).toBe(true);
    expect(await cluster.ping(a.netnsPath, c.address)).toBe(true);
    expect(await cluster.ping(c.netnsPath, a.address)).toBe(true);
    const probe = tcpPeerProbe(c.netnsPath, c.address, 18081);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, c.address, 18081)).toBe(true);
    expect(await probe.peer).toBe(a.address);
  });

  it('reaches the IPv6 internet host with the pod address (no SNAT)', async () => {
    const [a] = pods as [ClusterPod];
    const { internet } = cluster.vpc.describe();
    const probe = tcpPeerProbe(internet.netnsPath, internet.hostIpv6!, 18080);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, internet.hostIpv6!, 18080)).toBe(true);
    expect(await probe.peer).toBe(a.address);
    expect(cluster.vpc.routerView().drops['source-dest-check']).toBe(0);
  });

  it('reaches the IPv4-only internet host through egress-cni, SNATed to the node IPv4', async () => {
    const [a] = pods as [ClusterPod];
    const v4 = (await inNetns(a.netnsPath, ['ip', '-4', 'addr', 'show', 'dev', 'v4if0'])).stdout;
    expect(v4).toMatch(/inet 169\.254\.17[2-5]\.\d+\/22/);
    const { internet } = cluster.vpc.describe();
    const probe = tcpPeerProbe(internet.netnsPath, internet.host, 18082);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, internet.host, 18082)).toBe(true);
    expect(await probe.peer).toBe(cluster.nodes[0]!.instance.privateIp);
    expect(cluster.vpc.routerView().drops['egress-not-public']).toBe(0);
  });

  it('writes v6 entries to the checkpoint and loses nothing over a SIGKILL and restart', async () => {
    const node = cluster.nodes[0]!;
    const text = readFileSync(node.checkpoint, 'utf8');
    const mine = pods.filter((p) => p.node === 0);
    expect(checkpointIpv6(node.checkpoint)).toEqual(mine.map((p) => p.address).sort());
    // The reference's field order and names, an IPv6 entry without ipv4.
    expect(text).toMatch(
      /\{"networkName":"aws-cni","containerID":"[^"]+","ifName":"eth0","ipv6":"2001:db8:c00:1:[0-9a-f:]+","allocationTimestamp":\d+,"metadata":\{"k8sPodNamespace":"default","k8sPodName":"pod-0-\d+"/,
    );

    await cluster.stopDaemon(0, 'SIGKILL');
    await cluster.startDaemon(0);
    expect(checkpointIpv6(node.checkpoint)).toEqual(mine.map((p) => p.address).sort());
    const card = await enis(cluster);
    expect(card.AssignedIPs).toBe(mine.length);
    // Still one /80: the restart reused the delegated prefix.
    expect(primaryPrefixes(0)).toEqual([prefixes[0]]);
    // Pods keep working, and a new pod gets a fresh address.
    const [a, , c] = pods as [ClusterPod, ClusterPod, ClusterPod];
    expect(await cluster.ping(c.netnsPath, a.address)).toBe(true);
    const d = await cluster.addPod(0);
    pods.push(d);
    expect(mine.map((p) => p.address)).not.toContain(d.address);
    expect(inPrefix80(d.address, prefixes[0]!)).toBe(true);
  });

  it('DEL removes the pod host route and rule, and its egress chain and routes', async () => {
    const d = pods.pop()!;
    const ns = cluster.nodes[d.node]!.instance.netnsPath;
    const egressIp = /inet (169\.254\.\d+\.\d+)\//.exec(
      (await inNetns(d.netnsPath, ['ip', '-4', 'addr', 'show', 'dev', 'v4if0'])).stdout,
    )?.[1];
    expect(egressIp).toBeDefined();
    const natBefore = (await inNetns(ns, ['iptables-save', '-t', 'nat'])).stdout;
    const jump = new RegExp(
      `^-A POSTROUTING -s ${egressIp!.replaceAll('.', '\\.')}/32 .*-j (CNI-E4-[0-9a-f]+)`,
      'm',
    );
    const chain = jump.exec(natBefore)?.[1];
    expect(chain).toBeDefined();
    const nodeIp = cluster.nodes[d.node]!.instance.privateIp;
    expect(natBefore).toMatch(
      new RegExp(`^-A ${chain} .*-j SNAT --to-source ${nodeIp.replaceAll('.', '\\.')}`, 'm'),
    );
    expect(names((await inNetns(ns, ['ip', '-4', 'route', 'show'])).stdout, egressIp!)).toBe(true);
    await cluster.delPod(d);
    await eventually('the route and rule to be gone', async () => {
      const rules = (await inNetns(ns, ['ip', '-6', 'rule', 'show'])).stdout;
      const routes = (await inNetns(ns, ['ip', '-6', 'route', 'show'])).stdout;
      return !names(rules, d.address) && !names(routes, d.address);
    });
    const natAfter = (await inNetns(ns, ['iptables-save', '-t', 'nat'])).stdout;
    expect(natAfter).not.toContain(chain!);
    expect(natAfter).not.toContain(`${egressIp}/32`);
    expect(names((await inNetns(ns, ['ip', '-4', 'route', 'show'])).stdout, egressIp!)).toBe(false);
    const metrics = await cluster.metrics(0);
    expect(metrics).toMatch(/^awscni_assigned_ip_addresses 2$/m);
    expect(metrics).not.toContain('awscni_connmark_backend{');
  });

  it('DEL with the daemon down tears the IPv6 pod down from prevResult; the restart gives its address back', async () => {
    const [a] = pods as [ClusterPod];
    const ns = cluster.nodes[0]!.instance.netnsPath;
    await cluster.stopDaemon(0, 'SIGTERM');
    try {
      await cluster.delPod(a);
      pods.shift();
      const rules = (await inNetns(ns, ['ip', '-6', 'rule', 'show'])).stdout;
      const routes = (await inNetns(ns, ['ip', '-6', 'route', 'show'])).stdout;
      expect(names(rules, a.address)).toBe(false);
      expect(names(routes, a.address)).toBe(false);
    } finally {
      await cluster.startDaemon(0);
    }
    // The checkpoint still named it; its veth is gone, so the restore dropped it.
    expect(checkpointIpv6(cluster.nodes[0]!.checkpoint)).not.toContain(a.address);
  });
});
