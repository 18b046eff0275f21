/**
 * Fault scenarios of aws-node on the virtual VPC (issue #21), each on its own one-node cluster: IMDS lagging
 * EC2 across a SIGKILL, an ADD naming the node's own network namespace, a lost AttachNetworkInterface reply,
 * a start whose metrics port is taken, and a corrupt checkpoint (both refused before the node is changed).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { daemonClient } from '@vpc-cni-kit/aws-node';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster, ClusterOptions, ClusterPod } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { enis, eventually, intruderAddRequest, startOneNode } from './support/scenario.js';

describePrivileged('aws-node under faults', () => {
  let cluster: Cluster | undefined;
  const start = async (options: Partial<ClusterOptions> = {}) => {
    cluster = await startOneNode(options);
    return cluster;
  };
  const checkpointed = (c: Cluster) =>
    (
      JSON.parse(readFileSync(c.nodes[0]!.checkpoint, 'utf8')) as { allocations: { ipv4: string }[] }
    ).allocations
      .map((a) => a.ipv4)
      .sort();

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('IMDS lags EC2 across a SIGKILL: the live pod keeps its address and no other pod gets it', async () => {
    const c = await start({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '1' } });
    // From now on IMDS shows new addresses ten minutes after EC2 assigned them.
    c.vpc.simulator.faults.add({ kind: 'imds-delay', ms: 600_000 });
    const a = await c.addPod(0);
    // The pod took the warm address; the pool tops up with one IMDS does not show yet.
    await eventually('the pool to top up', async () => (await enis(c)).TotalIPs >= 2);
    const b = await c.addPod(0);
    await c.stopDaemon(0, 'SIGKILL');
    await c.startDaemon(0);
    expect(checkpointed(c)).toEqual([a.address, b.address].sort());
    expect((await enis(c)).AssignedIPs).toBe(2);
    expect(readFileSync(c.nodes[0]!.logFile, 'utf8')).not.toContain('checkpoint entry dropped');
    const more: ClusterPod[] = [];
    for (let i = 0; i < 3; i++) more.push(await c.addPod(0, { retryForMs: 30_000 }));
    const all = [a, b, ...more].map((p) => p.address);
    expect(new Set(all).size).toBe(all.length);
  }, 180_000);

  it("an ADD naming the node's own network namespace is refused and touches nothing", async () => {
    const c = await start();
    const node = c.nodes[0]!;
    const routes = async () => (await inNetns(node.instance.netnsPath, ['ip', 'route', 'show'])).stdout;
    const links = async () => (await inNetns(node.instance.netnsPath, ['ip', '-o', 'link', 'show'])).stdout;
    const before = { routes: await routes(), links: await links(), assigned: (await enis(c)).AssignedIPs };
    const client = daemonClient(node.socket, 5000);
    // By the namespace file the node's network is mounted at, and by the daemon's own /proc entry.
    for (const netns of [node.instance.netnsPath, `/proc/${node.daemon!.pid}/ns/net`]) {
      const reply = await client.addNetwork(intruderAddRequest(netns));
      expect(reply).toMatchObject({ Success: false, FailureCode: 'InvalidRequest' });
      expect(reply.FailureMessage).toContain("node's own network namespace");
    }
    expect(await routes()).toBe(before.routes);
    expect(await links()).toBe(before.links);
    expect((await enis(c)).AssignedIPs).toBe(before.assigned);
    expect(checkpointed(c)).toEqual([]);
  }, 120_000);

  it('a lost AttachNetworkInterface reply: the ENI is adopted, the waiting pod is served in seconds', async () => {
    const c = await start({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '1' } });
    c.vpc.simulator.faults.failNext('AttachNetworkInterface', 'InternalError', { afterApply: true });
    const pods: ClusterPod[] = [];
    // m5.large: 9 pod addresses on the primary ENI; the tenth pod needs a new ENI.
    for (let i = 0; i < 10; i++) pods.push(await c.addPod(0, { retryForMs: 30_000 }));
    expect(new Set(pods.map((p) => p.address)).size).toBe(10);
    const calls = c.vpc.simulator.calls;
    expect(calls.filter((call) => call.action === 'AttachNetworkInterface')).toHaveLength(1);
    expect(calls.filter((call) => call.action === 'DeleteNetworkInterface')).toEqual([]);
    expect(Object.keys((await enis(c)).ENIs)).toHaveLength(2);
  }, 180_000);

  it('a start whose port is taken exits 1 with one line and leaves nothing serving', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    await c.stopDaemon(0, 'SIGTERM');
    const saved = { ...node.env };
    try {
      // The metrics endpoint asks for the introspection's port: it cannot listen (found before the node changes).
      node.env = { ...saved, AWS_NODE_METRICS_BIND_ADDRESS: '127.0.0.1:61679' };
      const failed = await c.startDaemon(0, 20_000).catch((e: unknown) => e);
      expect(String(failed)).toMatch(/exited \(1\)/);
      expect(String(failed)).toMatch(
        /aws-node: failed to start: cannot listen on 127\.0\.0\.1:61679: EADDRINUSE/,
      );
      await expect(daemonClient(node.socket, 1000).health()).rejects.toThrow();
      // Invalid settings stop it before anything is touched.
      node.env = { ...saved, AWS_NODE_METRICS_BIND_ADDRESS: ':99999' };
      const invalid = await c.startDaemon(0, 20_000).catch((e: unknown) => e);
      expect(String(invalid)).toMatch(/exited \(1\)/);
      expect(String(invalid)).toContain('AWS_NODE_METRICS_BIND_ADDRESS');
    } finally {
      node.env = saved;
    }
    // Fixed, it starts.
    await c.startDaemon(0);
  }, 120_000);

  it('a corrupt checkpoint stops the start with one line naming it, and the node is not changed', async () => {
    const c = await start();
    const node = c.nodes[0]!;
    const ns = node.instance.netnsPath;
    await c.stopDaemon(0, 'SIGTERM');
    const sh = async (args: string[]) => {
      const r = await inNetns(ns, args);
      if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const snat = async () => /AWS-SNAT-CHAIN-0/.test(await sh(['iptables-save', '-t', 'nat']));
    const mtu = async () => Number(/ mtu (\d+) /.exec(await sh(['ip', 'link', 'show', 'eth0']))?.[1]);
    expect(await snat()).toBe(true);
    // Undo what the first start did to the node (its SNAT rules, the primary ENI's MTU), so any change shows.
    await sh(['iptables', '-t', 'nat', '-F']);
    await sh(['iptables', '-t', 'nat', '-X']);
    await sh(['ip', 'link', 'set', 'eth0', 'mtu', '1400']);
    const good = readFileSync(node.checkpoint, 'utf8');
    writeFileSync(node.checkpoint, '{"version":"vpc-cni-ipam/1","allocations":[{"networkName"');
    const started = Date.now();
    const failed = String(await c.startDaemon(0, 20_000).catch((e: unknown) => e));
    expect(failed).toMatch(/exited \(1\)/);
    const stderr = /exited \(1\): ([\s\S]*?)\n\n/.exec(failed)?.[1] ?? '';
    const path = node.checkpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^aws-node: failed to start: checkpoint ${path} cannot be restored \\(checkpoint is not valid JSON: .+\\): ` +
            'nothing on the node was changed; move the file aside .* keep their addresses only if it is restored$',
        ),
      ),
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await snat()).toBe(false);
    expect(await mtu()).toBe(1400);
    // The checkpoint back, it starts and sets the node up again.
    renameSync(`${node.checkpoint}`, `${node.checkpoint}.corrupt`);
    writeFileSync(node.checkpoint, good);
    await c.startDaemon(0);
    expect(await snat()).toBe(true);
    expect(await mtu()).toBe(9001);
  }, 120_000);
});
