/**
 * The pool loop against the real ec2-simulator when EC2 calls fail or lose their replies: the pool re-reads
 * the ENI and adopts what EC2 holds, so it never drifts from EC2 and never wedges.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer } from '@vpc-cni-kit/datastore/testing';
import { routeTableId } from '@vpc-cni-kit/routing-table';
import { afterEach, describe, expect, it } from 'vitest';
import { testPool } from './support/pool.js';
import { type SimNode, startSimNode } from './support/sim-node.js';

let world: SimNode | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A pool keeping `warmIpTarget` addresses on the node's primary ENI (one ENI allowed). */
async function pool(w: SimNode, warmIpTarget: number) {
  const datastore = new Datastore({
    clock: w.clock,
    checkpointer: new InMemoryGroupCommitCheckpointer(),
    cooldownMs: 0,
  });
  const failures: string[] = [];
  const loop = testPool(datastore, w.eni, warmIpTarget, {
    limits: { maxEnis: 1, ipv4PerEni: 10, maxPods: 9 },
    now: () => w.clock.now(),
    observer: { decision: () => {}, actionFailed: (kind, code) => failures.push(`${kind} ${code}`) },
    routeTableId,
  });
  await loop.adoptEni(w.node.primaryEni);
  return { datastore, loop, failures };
}

async function ec2Secondaries(w: SimNode): Promise<string[]> {
  const [eni] = await w.eni.describeEnis([w.node.primaryEni.eniId]);
  return [...eni!.secondaryIpv4].sort();
}
const datastoreCidrs = (ds: Datastore) =>
  ds
    .stats()
    .enis.flatMap((e) => e.cidrs.map((c) => c.cidr.replace('/32', '')))
    .sort();

describe('PoolLoop when EC2 replies are lost', () => {
  it('a lost AssignPrivateIpAddresses reply: the pool adopts what EC2 assigned and does not ask again', async () => {
    world = await startSimNode();
    const { datastore, loop, failures } = await pool(world, 3);
    world.sim.faults.failNext('AssignPrivateIpAddresses', 'InternalError', { afterApply: true });
    expect((await loop.tick()).kind).toBe('assign');
    expect(failures).toEqual(['assign InternalError']);
    // EC2 assigned three; the datastore knows all three at once, and the pool is satisfied.
    expect(datastoreCidrs(datastore)).toEqual(await ec2Secondaries(world));
    expect(datastore.stats().totalIPs).toBe(3);
    expect((await loop.tick()).kind).toBe('none');
    expect(world.sim.calls.filter((c) => c.action === 'AssignPrivateIpAddresses')).toHaveLength(1);
  });

  it('a failed UnassignPrivateIpAddresses: the address EC2 still holds goes back into the datastore', async () => {
    world = await startSimNode();
    const { datastore, loop, failures } = await pool(world, 4);
    expect((await loop.tick()).kind).toBe('assign');
    expect(datastore.stats().totalIPs).toBe(4);
    // Fewer warm addresses wanted: the next pass releases one, and EC2 refuses.
    const shrinking = await pool(world, 1);
    for (const cidr of datastoreCidrs(datastore))
      shrinking.datastore.addCidr(world.node.primaryEni.eniId, `${cidr}/32`);
    world.sim.faults.failNext('UnassignPrivateIpAddresses', 'UnauthorizedOperation');
    expect((await shrinking.loop.tick()).kind).toBe('release');
    expect(shrinking.failures).toEqual(['release UnauthorizedOperation']);
    expect(datastoreCidrs(shrinking.datastore)).toEqual(await ec2Secondaries(world));
    expect(shrinking.datastore.stats().totalIPs).toBe(4);
    expect(failures).toEqual([]);
  });

  it('an UnassignPrivateIpAddresses whose reply is lost: the released address stays released', async () => {
    world = await startSimNode();
    const { datastore, loop } = await pool(world, 2);
    await loop.tick();
    const shrinking = await pool(world, 1);
    for (const cidr of datastoreCidrs(datastore))
      shrinking.datastore.addCidr(world.node.primaryEni.eniId, `${cidr}/32`);
    world.sim.faults.failNext('UnassignPrivateIpAddresses', 'InternalError', { afterApply: true, count: 10 });
    expect((await shrinking.loop.tick()).kind).toBe('release');
    expect(datastoreCidrs(shrinking.datastore)).toEqual(await ec2Secondaries(world));
  });
});
