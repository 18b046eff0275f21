/**
 * Prefix delegation in a fragmented subnet, against the real ec2-simulator: EC2 has free addresses but no
 * aligned free /28 (`InsufficientCidrBlocks`), so the pool grows in /32s and pods still get addresses; once
 * /28s can be had again (after the fallback period) new capacity comes as prefixes, and the fallback /32s
 * are released first.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer } from '@vpc-cni-kit/datastore/testing';
import { routeTableId } from '@vpc-cni-kit/routing-table';
import { afterEach, describe, expect, it } from 'vitest';
import { testPool } from './support/pool.js';
import { type SimNode, startSimNode } from './support/sim-node.js';

let world: SimNode | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const pod = (i: number) => ({ networkName: 'aws-cni', containerID: `c${i}`, ifName: 'eth0' });

/** Takes one address in every /28 of the node's subnet that is entirely free; returns the squatting ENIs. */
async function fragment(w: SimNode): Promise<string[]> {
  const subnetId = w.node.primaryEni.subnetId;
  const squatters: string[] = [];
  for (let block = 1; block < 15; block++) {
    try {
      const out = await w.admin.call('CreateNetworkInterface', {
        SubnetId: subnetId,
        PrivateIpAddress: `10.0.0.${block * 16 + 8}`,
      });
      squatters.push(out.NetworkInterface!.NetworkInterfaceId!);
    } catch {
      // That address is taken already: the block is not free anyway.
    }
  }
  return squatters;
}

/** AssignPrivateIpAddresses calls so far, and how many EC2 refused for want of a /28. */
const assigns = (w: SimNode) => {
  const calls = w.sim.calls.filter((c) => c.action === 'AssignPrivateIpAddresses');
  return { all: calls.length, refused: calls.filter((c) => c.errorCode === 'InsufficientCidrBlocks').length };
};

describe('prefix delegation falls back to /32s in a fragmented subnet', () => {
  it('grows in /32s while no /28 is free, goes back to prefixes after the fallback period, releases /32s first', async () => {
    // Many EC2 calls in a row (a fragmented subnet, 32 releases): the client-side buckets must not pace them.
    const bucket = { capacity: 100, refillPerSecond: 100 };
    world = await startSimNode({
      instanceType: 'c5.18xlarge',
      rateLimits: { createDelete: bucket, assignUnassign: bucket, describe: bucket },
    });
    const w = world;
    const squatters = await fragment(w);
    const datastore = new Datastore({
      clock: w.clock,
      checkpointer: new InMemoryCheckpointer(),
      cooldownMs: 0,
      prefixDelegation: true,
    });
    const observed: boolean[] = [];
    const failures: string[] = [];
    const loop = testPool(datastore, w.eni, 0, {
      targets: {
        warmEniTarget: 0,
        warmIpTarget: 0,
        minimumIpTarget: 0,
        warmPrefixTarget: 1,
        prefixDelegation: true,
      },
      limits: { maxEnis: 1, ipv4PerEni: 50, maxPods: 200 },
      now: () => w.clock.now(),
      observer: {
        decision: () => {},
        actionFailed: (kind, code) => failures.push(`${kind} ${code}`),
        prefixFallback: (active) => observed.push(active),
      },
      routeTableId,
      prefixFallbackMs: 60_000,
    });
    await loop.adoptEni(w.node.primaryEni);

    // EC2 refuses the /28: the same growth comes as 16 /32s, and a pod gets one.
    expect(await loop.tick()).toMatchObject({ kind: 'assign', unit: 'prefix', count: 1 });
    expect(failures).toEqual([]);
    expect(observed).toEqual([true]);
    expect(loop.prefixFallback()).toMatchObject({ active: true, fallbackGrowths: 1 });
    expect(datastore.stats()).toMatchObject({ totalIPs: 16, totalPrefixes: 0 });
    expect(datastore.assign(pod(0)).cidr).toMatch(/\/32$/);
    expect(assigns(w)).toEqual({ all: 2, refused: 1 });

    // Still in the fallback period: the next growth goes straight to /32s, without asking for a /28.
    expect(await loop.tick()).toMatchObject({ kind: 'assign', unit: 'prefix' });
    expect(assigns(w)).toEqual({ all: 3, refused: 1 });
    expect(datastore.stats()).toMatchObject({ totalIPs: 32, totalPrefixes: 0 });
    expect((await loop.tick()).kind).toBe('none');

    // The subnet frees up; after the fallback period, growth asks for a /28 again and gets it.
    for (const id of squatters) await w.admin.call('DeleteNetworkInterface', { NetworkInterfaceId: id });
    w.clock.advance(60_001);
    for (let i = 1; i <= 16; i++) datastore.assign(pod(i));
    expect(await loop.tick()).toMatchObject({ kind: 'assign', unit: 'prefix', count: 1 });
    expect(assigns(w)).toEqual({ all: 4, refused: 1 });
    expect(observed).toEqual([true, false]);
    expect(loop.prefixFallback()).toMatchObject({ active: false, fallbackGrowths: 2 });
    expect(datastore.stats()).toMatchObject({ totalIPs: 48, totalPrefixes: 1 });

    // Pods leave: the empty fallback /32s go back to EC2 first, the prefix stays.
    for (let i = 0; i <= 16; i++) datastore.unassign(pod(i));
    w.clock.advance(1);
    const release = await loop.tick();
    expect(release.kind).toBe('release');
    if (release.kind !== 'release') return;
    expect(release.cidrs).toHaveLength(32);
    expect(release.cidrs.every((c) => c.cidr.endsWith('/32'))).toBe(true);
    expect(failures).toEqual([]);
    const [eni] = await w.eni.describeEnis([w.node.primaryEni.eniId]);
    expect(eni!.secondaryIpv4).toEqual([]);
    expect(eni!.ipv4Prefixes).toHaveLength(1);
    expect(datastore.stats()).toMatchObject({ totalIPs: 16, totalPrefixes: 1 });
  });
});
