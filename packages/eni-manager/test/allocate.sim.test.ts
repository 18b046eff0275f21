import { afterEach, describe, expect, it } from 'vitest';
import { isEniManagerError, mutatingActions } from '../src/index.js';
import {
  FRAG_SUBNET,
  INSTANCE,
  PRIMARY_SUBNET,
  SG,
  startWorld,
  TINY_SUBNET,
  type World,
} from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function describeEni(w: World, eniId: string) {
  const out = await w.admin.call('DescribeNetworkInterfaces', { NetworkInterfaceIds: [eniId] });
  return out.NetworkInterfaces![0]!;
}

describe('allocateEni against ec2-simulator', () => {
  it('creates, tags, attaches at the first free index, sets DeleteOnTermination, and waits for IMDS', async () => {
    world = await startWorld();
    const eni = await world.manager.allocateEni({ ipv4Count: 5 });

    expect(eni.deviceIndex).toBe(1);
    expect(eni.subnetId).toBe(PRIMARY_SUBNET);
    expect(eni.imds.eniId).toBe(eni.eniId);
    expect(eni.imds.deviceNumber).toBe(1);
    expect(eni.imds.ipv4Addresses).toHaveLength(6);

    const seen = await describeEni(world, eni.eniId);
    expect(seen.Status).toBe('in-use');
    expect(seen.Description).toBe(`aws-K8S-${INSTANCE}`);
    expect(seen.Groups?.map((g) => g.GroupId)).toEqual([SG]);
    expect(seen.Attachment).toMatchObject({
      InstanceId: INSTANCE,
      DeviceIndex: 1,
      DeleteOnTermination: true,
    });
    const tags = Object.fromEntries((seen.TagSet ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      'node.k8s.amazonaws.com/instance_id': INSTANCE,
      'cluster.k8s.amazonaws.com/name': 'test-cluster',
      'eks:eni:owner': 'amazon-vpc-cni',
      team: 'net',
    });
    expect(tags['node.k8s.amazonaws.com/createdAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(tags['k8s.amazonaws.com/reserved']).toBeUndefined();

    const mutating = world.ec2Calls().filter((e) => mutatingActions.has(e.action));
    expect(mutating.map((e) => e.action)).toEqual([
      'CreateNetworkInterface',
      'AttachNetworkInterface',
      'ModifyNetworkInterfaceAttribute',
    ]);

    const second = await world.manager.allocateEni({ prefixCount: 1 });
    expect(second.deviceIndex).toBe(2);
    expect(second.imds.ipv4Prefixes).toHaveLength(1);
  });

  it('concurrent allocations are queued: each gets its own device index', async () => {
    world = await startWorld();
    const [a, b] = await Promise.all([world.manager.allocateEni(), world.manager.allocateEni()]);
    expect([a.deviceIndex, b.deviceIndex].sort()).toEqual([1, 2]);
    expect(world.ec2Calls('AttachNetworkInterface').every((e) => e.errorCode === undefined)).toBe(true);
  });

  it('attach failure: the created ENI is deleted, nothing leaks', async () => {
    world = await startWorld();
    world.sim.faults.failNext('AttachNetworkInterface', 'AttachmentLimitExceeded');
    const error = await world.manager.allocateEni({ ipv4Count: 2 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'AttachmentLimitExceeded')).toBe(true);
    expect(world.ec2Calls('DeleteNetworkInterface').at(-1)?.errorCode).toBeUndefined();
    expect(await world.ourEnis()).toEqual([]);
  });

  it('failure after attach (DeleteOnTermination refused): detached and deleted, nothing leaks', async () => {
    world = await startWorld();
    world.sim.faults.failNext('ModifyNetworkInterfaceAttribute', 'InvalidParameterValue');
    const error = await world.manager.allocateEni({ ipv4Count: 2 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InvalidParameterValue')).toBe(true);
    expect(world.ec2Calls('DetachNetworkInterface')).toHaveLength(1);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('never visible in IMDS: EniNotVisible, and the ENI is rolled back', async () => {
    world = await startWorld({ manager: { timings: { imdsWaitMs: 150 } } });
    world.sim.faults.add({ kind: 'imds-delay', ms: 600_000 });
    const error = await world.manager.allocateEni({ ipv4Count: 1 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'EniNotVisible')).toBe(true);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('no free device index: NoFreeDeviceIndex, and the ENI is deleted', async () => {
    world = await startWorld({ manager: { maxDeviceIndex: 0 } });
    const error = await world.manager.allocateEni().catch((e: unknown) => e);
    expect(isEniManagerError(error, 'NoFreeDeviceIndex')).toBe(true);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('eventual consistency: waits for IMDS and Describe to catch up, then succeeds', async () => {
    world = await startWorld({ manager: { timings: { imdsWaitMs: 10_000 } } });
    world.sim.faults.add({ kind: 'imds-delay', ms: 1000 });
    world.sim.faults.add({ kind: 'slow-attach', ms: 100 });
    const eni = await world.manager.allocateEni({ ipv4Count: 3 });
    expect(eni.imds.ipv4Addresses).toHaveLength(4);
    const imdsReads = world.events.filter(
      (e) => e.service === 'imds' && e.action === `network/interfaces/macs/${eni.ec2.mac}/`,
    );
    expect(imdsReads.length).toBeGreaterThan(1); // it polled
  });

  it('EC2 eventual consistency: a new ENI not yet visible to Describe* still gets attached and readied', async () => {
    world = await startWorld({ manager: { timings: { imdsWaitMs: 10_000 } } });
    world.sim.faults.add({ kind: 'eventual-consistency', ms: 500 });
    const eni = await world.manager.allocateEni({ ipv4Count: 2 });
    expect(eni.imds.ipv4Addresses).toHaveLength(3);
  });

  it('EC2 eventual consistency: a rollback right after the create still deletes the ENI', async () => {
    world = await startWorld();
    world.sim.faults.add({ kind: 'eventual-consistency', ms: 500 });
    world.sim.faults.failNext('AttachNetworkInterface', 'AttachmentLimitExceeded');
    const error = await world.manager.allocateEni().catch((e: unknown) => e);
    expect(isEniManagerError(error, 'AttachmentLimitExceeded')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await world.ourEnis()).toEqual([]);
  });

  it('subnet full: typed error on the first attempt, no retry storm, nothing created', async () => {
    world = await startWorld();
    // A /28 has 11 usable addresses; 1 primary + 12 secondaries cannot fit.
    const error = await world.manager
      .allocateEni({ subnetId: TINY_SUBNET, ipv4Count: 12 })
      .catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InsufficientFreeAddressesInSubnet')).toBe(true);
    expect((error as { retryable: boolean }).retryable).toBe(false);
    expect(world.ec2Calls('CreateNetworkInterface')).toHaveLength(1);
    expect(world.sim.calls.filter((c) => c.action === 'CreateNetworkInterface')).toHaveLength(1);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('subnet discovery moves to the next eligible subnet when the best one is full', async () => {
    world = await startWorld();
    world.sim.faults.failNext('CreateNetworkInterface', 'InsufficientFreeAddressesInSubnet');
    const eni = await world.manager.allocateEni({ ipv4Count: 1 });
    // Primary (/24) ranks first and "is full"; the /26 role-tagged subnet is next; the other-AZ and untagged ones never.
    expect(eni.subnetId).toBe(FRAG_SUBNET);
    expect(world.ec2Calls('CreateNetworkInterface').map((e) => e.errorCode)).toEqual([
      'InsufficientFreeAddressesInSubnet',
      undefined,
    ]);
  });

  it('unauthorized: typed error naming the IAM action, not retried', async () => {
    world = await startWorld();
    world.sim.faults.deny('ec2:CreateNetworkInterface');
    const error = await world.manager.allocateEni().catch((e: unknown) => e);
    expect(isEniManagerError(error, 'UnauthorizedOperation')).toBe(true);
    expect((error as { iamAction: string }).iamAction).toBe('ec2:CreateNetworkInterface');
    expect(world.ec2Calls('CreateNetworkInterface')).toHaveLength(1);
  });

  it('unauthorized attach: names ec2:AttachNetworkInterface and rolls the ENI back', async () => {
    world = await startWorld();
    world.sim.faults.deny('AttachNetworkInterface');
    const error = await world.manager.allocateEni().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UnauthorizedOperation', iamAction: 'ec2:AttachNetworkInterface' });
    expect(await world.ourEnis()).toEqual([]);
  });

  it('throttling storm: every call retried until it succeeds, attempts bounded', async () => {
    world = await startWorld({ ec2: { maxAttempts: 10 } });
    world.sim.faults.throttleNext(12);
    const eni = await world.manager.allocateEni({ ipv4Count: 1 });
    expect(eni.deviceIndex).toBe(1);
    const throttled = world.ec2Calls().filter((e) => e.errorCode === 'RequestLimitExceeded');
    expect(throttled).toHaveLength(12);
    expect(Math.max(...world.ec2Calls().map((e) => e.attempt))).toBeLessThanOrEqual(10);
  });

  it('a storm longer than the retry budget fails with RequestLimitExceeded after exactly maxAttempts', async () => {
    world = await startWorld({ ec2: { maxAttempts: 4 }, manager: { subnetDiscovery: false } });
    world.sim.faults.throttleNext(100);
    const error = await world.manager.allocateEni().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'RequestLimitExceeded', attempts: 4, retryable: true });
    expect(world.sim.calls).toHaveLength(4);
    world.sim.faults.clear();
    expect(await world.ourEnis()).toEqual([]);
  });

  it('rejects malformed requests before calling EC2', async () => {
    world = await startWorld();
    for (const bad of [
      { ipv4Count: 1, prefixCount: 1 },
      { ipv4Count: -1 },
      { subnetId: 'subnet-x' },
      { networkCard: 99 },
    ]) {
      await expect(world.manager.allocateEni(bad)).rejects.toMatchObject({ code: 'InvalidInput' });
    }
    expect(world.ec2Calls()).toEqual([]);
  });
});
