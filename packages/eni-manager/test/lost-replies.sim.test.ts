/**
 * Lost EC2 replies (the call went through, the answer never came: the simulator's `afterApply` faults) on
 * calls that are not idempotent. Retrying them blind acts twice or fails on what the first attempt did; they
 * are sent once, and the caller reads the ENI and adopts what exists.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorCodeInfo, isEniManagerError } from '../src/index.js';
import { INSTANCE, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('lost EC2 replies', () => {
  it('AssignPrivateIpAddresses whose reply is lost is not sent again: EC2 holds one batch, not two', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    world.sim.faults.failNext('AssignPrivateIpAddresses', 'InternalError', { afterApply: true });
    const error = await world.manager.assignIpv4(eniId, { ipv4Count: 3 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InternalError')).toBe(true);
    expect(world.ec2Calls('AssignPrivateIpAddresses')).toHaveLength(1);
    // The one call went through: a re-read of the ENI shows exactly its three addresses, to adopt.
    const [eni] = await world.manager.describeEnis([eniId]);
    expect(eni!.secondaryIpv4).toHaveLength(3);
  });

  it('AttachNetworkInterface whose reply is lost: the attachment EC2 made is adopted, nothing rolled back', async () => {
    world = await startWorld();
    world.sim.faults.failNext('AttachNetworkInterface', 'InternalError', { afterApply: true });
    const started = Date.now();
    const eni = await world.manager.allocateEni({ ipv4Count: 2 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(world.ec2Calls('AttachNetworkInterface')).toHaveLength(1);
    expect(world.ec2Calls('DeleteNetworkInterface')).toEqual([]);
    expect(eni.deviceIndex).toBe(1);
    expect(eni.attachmentId).toMatch(/^eni-attach-/);
    const [seen] = await world.manager.describeEnis([eni.eniId]);
    expect(seen!.attachment).toMatchObject({ instanceId: INSTANCE, attachmentId: eni.attachmentId });
    expect(eni.imds.ipv4Addresses).toHaveLength(3);
  });

  it('InvalidNetworkInterface.InUse on an attach is not retried; an ENI attached elsewhere is rolled back', async () => {
    expect(errorCodeInfo['InvalidNetworkInterface.InUse'].retryable).toBe(false);
    world = await startWorld();
    world.sim.faults.failNext('AttachNetworkInterface', 'InvalidNetworkInterface.InUse');
    const error = await world.manager.allocateEni({ ipv4Count: 2 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InvalidNetworkInterface.InUse')).toBe(true);
    expect(world.ec2Calls('AttachNetworkInterface')).toHaveLength(1);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('CreateNetworkInterface whose reply is lost is retried with the same ClientToken: one ENI', async () => {
    world = await startWorld();
    world.sim.faults.failNext('CreateNetworkInterface', 'InternalError', { afterApply: true });
    const eni = await world.manager.allocateEni({ ipv4Count: 2 });
    expect(world.ec2Calls('CreateNetworkInterface')).toHaveLength(2);
    expect(await world.ourEnis()).toEqual([eni.eniId]);
  });
});
