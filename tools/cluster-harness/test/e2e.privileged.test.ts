/**
 * aws-node and aws-cni end to end on the virtual VPC: two m5.large nodes (namespaces), daemons inside them,
 * pods created through Debian's libcni chaining aws-cni with portmap and bandwidth.
 */
import { existsSync } from 'node:fs';
import { daemonClient } from '@vpc-cni-kit/aws-node';
import { buildLibcniRunner, describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsNodeBinDir } from '../src/bin-dir.js';
import { Cluster, type ClusterPod } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { intruderAddRequest } from './support/scenario.js';

const binDir = awsNodeBinDir();

describePrivileged('aws-node on the virtual VPC', () => {
  let cluster: Cluster;
  const pods: ClusterPod[] = [];

  beforeAll(async () => {
    if (!existsSync(`${binDir}/aws-node.cjs`))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    cluster = await Cluster.start({
      nodes: 2,
      binDir,
      libcniRunner: await buildLibcniRunner(),
      bandwidth: true,
      simulator: { rateLimits: false },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('gives pods ENI secondary addresses in the VPC', async () => {
    pods.push(await cluster.addPod(0), await cluster.addPod(0), await cluster.addPod(1));
    for (const p of pods) expect(p.address).toMatch(/^10\.0\.\d+\.\d+$/);
    expect(new Set(pods.map((p) => p.address)).size).toBe(3);
    // The result has the reference's shape: host veth, eth0 in the pod, the dummy marker.
    expect(pods[0]?.result).toMatchObject({
      cniVersion: '0.4.0',
      interfaces: [
        { name: expect.stringMatching(/^eni[0-9a-f]{11}$/) },
        { name: 'eth0', sandbox: pods[0]?.netnsPath },
        { name: expect.stringMatching(/^dummy/) },
      ],
    });
  });

  it('connects pod↔pod on one node and across nodes, and pod→node', async () => {
    const [a, b, c] = pods as [ClusterPod, ClusterPod, ClusterPod];
    expect(await cluster.ping(a.netnsPath, b.address)).toBe(true);
    expect(await cluster.ping(a.netnsPath, c.address)).toBe(true);
    expect(await cluster.ping(c.netnsPath, a.address)).toBe(true);
    expect(await cluster.ping(a.netnsPath, cluster.nodes[0]!.instance.privateIp)).toBe(true);
  });

  it('reaches the internet SNATed to the node address; VPC traffic keeps the pod address (TCP)', async () => {
    const [a, , c] = pods as [ClusterPod, ClusterPod, ClusterPod];
    const { internet } = cluster.vpc.describe();
    const out = tcpPeerProbe(internet.netnsPath, internet.host, 18080);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, internet.host, 18080)).toBe(true);
    expect(await out.peer).toBe(cluster.nodes[0]!.instance.privateIp);

    const vpc = tcpPeerProbe(c.netnsPath, c.address, 18081);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, c.address, 18081)).toBe(true);
    expect(await vpc.peer).toBe(a.address);
  });

  it('a scrape shows start-up and node-init durations, the connmark backend and process metrics', async () => {
    const text = await cluster.metrics(0);
    expect(text).toMatch(/^awscni_ipamd_startup_duration_seconds_count\{success="true",.*\} 1$/m);
    expect(text).toMatch(/^awscni_ipamd_node_initialization_duration_seconds_count\{success="true"\} 1$/m);
    expect(text).toMatch(/^awscni_connmark_backend\{backend="(iptables|nftables)"\} 1$/m);
    expect(text).toContain('awscni_connmark_reconcile_total{result="success"} 1');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    // The reference's reconcile, force-removal, in-progress, AWS utils and pod-ENI series.
    for (const [name, type] of [
      ['awscni_reconcile_count', 'counter'],
      ['awscni_force_removed_enis', 'counter'],
      ['awscni_force_removed_ips', 'counter'],
      ['awscni_ipamd_action_inprogress', 'gauge'],
      ['awscni_aws_utils_error_count', 'counter'],
      ['awscni_pod_eni_error_count', 'counter'],
    ])
      expect(text).toMatch(new RegExp(`^# TYPE ${name} ${type}$`, 'm'));
    expect(text).toMatch(/^awscni_force_removed_ips 0$/m);
  });

  it('a refused ADD is listed, newest first, with its code and reason in /v1/failures', async () => {
    const node = cluster.nodes[0]!;
    const reply = await daemonClient(node.socket, 5000).addNetwork(
      intruderAddRequest(node.instance.netnsPath),
    );
    expect(reply).toMatchObject({ Success: false, FailureCode: 'InvalidRequest' });
    const failures = (await cluster.introspect(0, '/v1/failures')) as Record<string, unknown>[];
    expect(failures[0]).toMatchObject({
      source: 'add-network',
      action: 'AddNetwork',
      code: 'InvalidRequest',
      pod: 'default/intruder',
      reason: reply.FailureMessage,
    });
  });

  it('DEL removes the host route and rules', async () => {
    const c = pods.pop()!;
    const node = cluster.nodes[c.node]!;
    const before = (await inNetns(node.instance.netnsPath, ['ip', 'rule', 'show'])).stdout;
    expect(before).toContain(`to ${c.address} lookup main`);
    await cluster.delPod(c);
    const rules = (await inNetns(node.instance.netnsPath, ['ip', 'rule', 'show'])).stdout;
    const routes = (await inNetns(node.instance.netnsPath, ['ip', 'route', 'show'])).stdout;
    expect(rules).not.toContain(c.address);
    expect(routes).not.toContain(c.address);
  });
});
