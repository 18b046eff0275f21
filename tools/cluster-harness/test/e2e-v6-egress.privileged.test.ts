/**
 * An IPv4 cluster on the dual-stack virtual VPC with `ENABLE_V6_EGRESS=true`: egress-cni gives each pod a
 * `v6if0` with a ULA, and the pod reaches the IPv6-only internet host SNATed to the node's IPv6 address.
 */
import { existsSync, readFileSync } from 'node:fs';
import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod, DUAL_STACK_NETWORK } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';

const binDir = awsNodeBinDir();

describePrivileged('an IPv4 cluster with ENABLE_V6_EGRESS on the dual-stack virtual VPC', () => {
  let cluster: Cluster;
  let pod: ClusterPod;

  beforeAll(async () => {
    if (!existsSync(`${binDir}/aws-node.cjs`))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    cluster = await Cluster.start({
      nodes: 1,
      network: DUAL_STACK_NETWORK,
      env: { ENABLE_V6_EGRESS: 'true' },
      binDir,
      libcniRunner: await buildLibcniRunner(),
      simulator: { rateLimits: false },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('chains egress-cni for IPv6 egress with the node IPv6, and blocks the ULA range in FORWARD', async () => {
    const node = cluster.nodes[0]!;
    const conflist = JSON.parse(readFileSync(`${node.confDir}/10-aws.conflist`, 'utf8')) as {
      plugins: Record<string, unknown>[];
    };
    expect(conflist.plugins[1]).toMatchObject({
      type: 'egress-cni',
      enabled: 'true',
      nodeIP: node.instance.ipv6,
      ipam: { ranges: [[{ subnet: 'fd00::ac:00/118' }]], routes: [{ dst: '::/0' }] },
    });
    const forward = (await inNetns(node.instance.netnsPath, ['ip6tables', '-S', 'FORWARD'])).stdout;
    expect(forward).toContain('-A FORWARD -d fd00::ac:0/118 -m conntrack --ctstate NEW');
  });

  it('gives the pod an IPv4 address and a v6if0 ULA; it reaches the IPv6 host SNATed to the node IPv6', async () => {
    pod = await cluster.addPod(0);
    expect(pod.address).toMatch(/^10\.0\.\d+\.\d+$/);
    const v6 = (await inNetns(pod.netnsPath, ['ip', '-6', 'addr', 'show', 'dev', 'v6if0'])).stdout;
    expect(v6).toMatch(/inet6 fd00::ac:[0-9a-f]+\/118/);
    const { internet } = cluster.vpc.describe();
    const probe = tcpPeerProbe(internet.netnsPath, internet.hostIpv6!, 18083);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(pod.netnsPath, internet.hostIpv6!, 18083)).toBe(true);
    expect(await probe.peer).toBe(cluster.nodes[0]!.instance.ipv6);
    // IPv4 still goes out SNATed to the node's IPv4, as before.
    const probe4 = tcpPeerProbe(internet.netnsPath, internet.host, 18084);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(pod.netnsPath, internet.host, 18084)).toBe(true);
    expect(await probe4.peer).toBe(cluster.nodes[0]!.instance.privateIp);
  });

  it('DEL removes the IPv6 egress chain', async () => {
    const ns = cluster.nodes[0]!.instance.netnsPath;
    expect((await inNetns(ns, ['ip6tables-save', '-t', 'nat'])).stdout).toMatch(/^:CNI-E6-/m);
    await cluster.delPod(pod);
    const after = (await inNetns(ns, ['ip6tables-save', '-t', 'nat'])).stdout;
    expect(after).not.toMatch(/CNI-E6-/);
  });
});
