/**
 * Prefix delegation in a fragmented subnet on the virtual VPC (issue #20): the subnet has free addresses but no
 * aligned free /28, EC2 answers `InsufficientCidrBlocks`, and pods still start on /32 secondary addresses; the
 * metric and introspection show the fallback; once /28s can be had again, new capacity comes as prefixes.
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster, ClusterPod } from '../src/cluster.js';
import { eventually, startOneNode } from './support/scenario.js';

const NODE_SUBNET = 'subnet-0c000000000000001';

interface WarmPool {
  prefixFallback: { active: boolean; fallbackGrowths: number };
}

const warmPool = async (c: Cluster) => (await c.introspect(0, '/v1/warm-pool')) as WarmPool;
const gauge = async (c: Cluster) => /^awscni_prefix_fallback (\d+)$/m.exec(await c.metrics(0))?.[1];

describePrivileged('prefix delegation in a fragmented subnet', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('pods start on /32s while no /28 is free, and new capacity comes as prefixes once one is', async () => {
    const c = await startOneNode({
      instanceType: 'm5.4xlarge',
      env: {
        ENABLE_PREFIX_DELEGATION: 'true',
        WARM_PREFIX_TARGET: '1',
        AWS_NODE_PREFIX_FALLBACK_SECONDS: '2',
      },
    });
    cluster = c;
    const state = c.vpc.simulator.state;
    await eventually('the first prefix', async () => state.enis().some((e) => e.ipv4Prefixes.length > 0));

    // Someone takes one address in every /28 of the node's /20 that is entirely free: no /28 is left.
    const squatters: string[] = [];
    for (let block = 0; block < 256; block++) {
      const third = Math.floor(block / 16);
      const fourth = (block % 16) * 16 + 8;
      try {
        squatters.push(
          state.createNetworkInterface({ subnetId: NODE_SUBNET, primaryAddress: `10.0.${third}.${fourth}` })
            .id,
        );
      } catch {
        // Taken already: that block is no /28 candidate anyway.
      }
    }

    // The 16 addresses of the prefix, then more: the pool falls back to /32s and pods keep starting.
    const pods: ClusterPod[] = [];
    for (let i = 0; i < 18; i++) pods.push(await c.addPod(0, { retryForMs: 20_000 }));
    expect(new Set(pods.map((p) => p.address)).size).toBe(18);
    const secondaries = () =>
      state
        .enis()
        .filter((e) => e.attachment?.instanceId === c.nodes[0]!.instance.instanceId)
        .flatMap((e) => e.privateIps.slice(1).map((a) => a.value));
    const held = new Set(secondaries());
    expect(pods.filter((p) => held.has(p.address)).length).toBeGreaterThanOrEqual(2);
    expect((await warmPool(c)).prefixFallback).toMatchObject({ active: true });
    expect(await gauge(c)).toBe('1');
    expect(await c.metrics(0)).toMatch(/^awscni_prefix_fallback_count [1-9]/m);

    // The subnet frees up; after the fallback period the next growth asks for a /28 and gets it.
    for (const id of squatters) state.deleteNetworkInterface(id);
    const prefixesBefore = state.enis().flatMap((e) => e.ipv4Prefixes).length;
    await new Promise((r) => setTimeout(r, 2_100));
    // More pods until the pool has to grow (the fallback /32s serve the first ones).
    const prefixes = () => state.enis().flatMap((e) => e.ipv4Prefixes).length;
    for (let i = 0; i < 40 && prefixes() === prefixesBefore; i++) {
      pods.push(await c.addPod(0, { retryForMs: 20_000 }));
      await new Promise((r) => setTimeout(r, 100));
    }
    await eventually('a new prefix', async () => prefixes() > prefixesBefore, 10_000);
    await eventually('the fallback to end', async () => !(await warmPool(c)).prefixFallback.active);
    expect(await gauge(c)).toBe('0');
    for (const p of pods) await c.delPod(p);
  }, 180_000);
});
