import { afterEach, describe, expect, it } from 'vitest';
import { isEniManagerError } from '../src/index.js';
import { startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('freeEni against ec2-simulator', () => {
  it('detaches, waits for available, deletes: the ENI is gone from EC2 and IMDS', async () => {
    world = await startWorld();
    const eni = await world.manager.allocateEni({ ipv4Count: 2 });
    world.events.length = 0;
    expect(await world.manager.freeEni(eni.eniId)).toBe('deleted');
    expect(await world.manager.describeEnis([eni.eniId])).toEqual([]);
    expect(await world.metadata.readEni(eni.ec2.mac)).toBeUndefined();
    const mutating = world.ec2Calls().filter((e) => !e.action.startsWith('Describe'));
    expect(mutating.map((e) => e.action)).toEqual(['DetachNetworkInterface', 'DeleteNetworkInterface']);
  });

  it('slow detach: keeps polling until the ENI is available, then deletes', async () => {
    world = await startWorld({ manager: { timings: { detachWaitMs: 10_000 } } });
    const eni = await world.manager.allocateEni();
    world.sim.faults.add({ kind: 'slow-detach', ms: 1000 });
    expect(await world.manager.freeEni(eni.eniId)).toBe('deleted');
    expect(world.ec2Calls('DescribeNetworkInterfaces').length).toBeGreaterThan(2);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('delete refused while in use is retried (InvalidNetworkInterface.InUse), then succeeds', async () => {
    world = await startWorld();
    const eni = await world.manager.allocateEni();
    world.sim.faults.failNext('DeleteNetworkInterface', 'InvalidNetworkInterface.InUse', { count: 2 });
    expect(await world.manager.freeEni(eni.eniId)).toBe('deleted');
    expect(world.ec2Calls('DeleteNetworkInterface').map((e) => e.errorCode)).toEqual([
      'InvalidNetworkInterface.InUse',
      'InvalidNetworkInterface.InUse',
      undefined,
    ]);
  });

  it('an ENI that is already gone is success (NotFound at describe, or at delete)', async () => {
    world = await startWorld();
    expect(await world.manager.freeEni('eni-0ffffffffffffffff')).toBe('already-gone');
    const eni = await world.manager.allocateEni();
    world.sim.faults.failNext('DeleteNetworkInterface', 'InvalidNetworkInterfaceID.NotFound');
    expect(await world.manager.freeEni(eni.eniId)).toBe('already-gone');
  });

  it('refuses the primary ENI and malformed ids without mutating anything', async () => {
    world = await startWorld();
    const error = await world.manager.freeEni(world.node.primaryEni.eniId).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InvalidInput')).toBe(true);
    await expect(world.manager.freeEni('not-an-eni')).rejects.toMatchObject({ code: 'InvalidInput' });
    expect(world.ec2Calls().filter((e) => !e.action.startsWith('Describe'))).toEqual([]);
  });

  it('describeEnis without ids lists this instance: primary plus the ones allocated', async () => {
    world = await startWorld();
    const a = await world.manager.allocateEni();
    const enis = await world.manager.describeEnis();
    expect(enis.map((e) => e.eniId).sort()).toEqual([world.node.primaryEni.eniId, a.eniId].sort());
    const both = await world.manager.describeEnis([a.eniId, 'eni-0ffffffffffffffff']);
    expect(both.map((e) => e.eniId)).toEqual([a.eniId]);
  });
});
