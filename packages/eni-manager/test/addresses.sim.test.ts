import { afterEach, describe, expect, it } from 'vitest';
import { isEniManagerError } from '../src/index.js';
import { FRAG_SUBNET, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('assignIpv4 / unassignIpv4 against ec2-simulator', () => {
  it('a top-up is exactly one EC2 call, and the addresses appear on the ENI and in IMDS', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    const got = await world.manager.assignIpv4(eniId, { ipv4Count: 4 });
    expect(got.ipv4Addresses).toHaveLength(4);
    expect(world.ec2Calls().map((e) => e.action)).toEqual(['AssignPrivateIpAddresses']);

    const [eni] = await world.manager.describeEnis([eniId]);
    expect(eni!.secondaryIpv4).toEqual(got.ipv4Addresses);
    const imds = await world.metadata.readEni(world.node.primaryMac);
    expect(imds!.ipv4Addresses.slice(1)).toEqual(got.ipv4Addresses);

    world.events.length = 0;
    await world.manager.unassignIpv4(eniId, { ipv4Addresses: got.ipv4Addresses.slice(0, 2) });
    expect(world.ec2Calls().map((e) => e.action)).toEqual(['UnassignPrivateIpAddresses']);
    const [after] = await world.manager.describeEnis([eniId]);
    expect(after!.secondaryIpv4).toEqual(got.ipv4Addresses.slice(2));
  });

  it('prefixes: one call assigns an aligned /28, one call releases it', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    const got = await world.manager.assignIpv4(eniId, { prefixCount: 2 });
    expect(got.ipv4Prefixes).toHaveLength(2);
    for (const p of got.ipv4Prefixes) expect(Number(p.split('/')[0]!.split('.')[3]) % 16).toBe(0);
    await world.manager.unassignIpv4(eniId, { ipv4Prefixes: got.ipv4Prefixes });
    const [after] = await world.manager.describeEnis([eniId]);
    expect(after!.ipv4Prefixes).toEqual([]);
    expect(world.ec2Calls()).toHaveLength(3); // assign, unassign, describe
  });

  it('IPv6: one AssignIpv6Addresses call delegates a /80, seen by EC2 and IMDS with the subnet and VPC blocks', async () => {
    world = await startWorld();
    expect(world.node.localIpv6).toMatch(/^2001:db8:c00:1:/);
    const eniId = world.node.primaryEni.eniId;
    expect(world.node.primaryEni.subnetIpv6Cidrs).toEqual(['2001:db8:c00:1::/64']);
    expect(world.node.primaryEni.vpcIpv6Cidrs).toEqual(['2001:db8:c00::/56']);
    const got = await world.manager.assignIpv6Prefixes(eniId, 1);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^2001:db8:c00:1:[0-9a-f:]+\/80$/);
    expect(world.ec2Calls().map((e) => e.action)).toEqual(['AssignIpv6Addresses']);
    const [eni] = await world.manager.describeEnis([eniId]);
    expect(eni!.ipv6Prefixes).toEqual(got);
    expect(eni!.ipv6Addresses).toEqual([world.node.localIpv6]);
    const imds = await world.metadata.readEni(world.node.primaryMac);
    expect(imds!.ipv6Prefixes).toEqual(got);
    const bad = await world.manager.assignIpv6Prefixes(eniId, 0).catch((e: unknown) => e);
    expect(isEniManagerError(bad, 'InvalidInput')).toBe(true);
  });

  it('PrivateIpAddressLimitExceeded past the instance type limit (m5.large: 10 per ENI), not retried', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    await world.manager.assignIpv4(eniId, { ipv4Count: 9 });
    const error = await world.manager.assignIpv4(eniId, { ipv4Count: 1 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'PrivateIpAddressLimitExceeded')).toBe(true);
    expect(world.ec2Calls('AssignPrivateIpAddresses')).toHaveLength(2);
  });

  it('fragmentation: free addresses but no aligned free /28 → InsufficientCidrBlocks, one call, no retry', async () => {
    world = await startWorld();
    // 10.0.1.0/26 holds four /28s: .0/28 and .48/28 include AWS-reserved addresses (.0–.3, .63), so only .16/28
    // and .32/28 can ever be prefixes. One address taken in each leaves dozens free and no /28 to delegate.
    const eni = await world.manager.allocateEni({ subnetId: FRAG_SUBNET });
    await world.admin.call('AssignPrivateIpAddresses', {
      NetworkInterfaceId: eni.eniId,
      PrivateIpAddresses: ['10.0.1.20', '10.0.1.40'],
    });
    const subnets = await world.admin.call('DescribeSubnets', { SubnetIds: [FRAG_SUBNET] });
    expect(subnets.Subnets![0]!.AvailableIpAddressCount).toBeGreaterThan(16);

    world.events.length = 0;
    const error = await world.manager.assignIpv4(eni.eniId, { prefixCount: 1 }).catch((e: unknown) => e);
    expect(isEniManagerError(error, 'InsufficientCidrBlocks')).toBe(true);
    expect((error as { retryable: boolean }).retryable).toBe(false);
    expect(world.ec2Calls()).toHaveLength(1);

    // Free one of the blockers: exactly that /28 becomes available.
    await world.manager.unassignIpv4(eni.eniId, { ipv4Addresses: ['10.0.1.40'] });
    const got = await world.manager.assignIpv4(eni.eniId, { prefixCount: 1 });
    expect(got.ipv4Prefixes).toEqual(['10.0.1.32/28']);
  });

  it('rejects malformed requests before calling EC2', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    await expect(world.manager.assignIpv4('eni-nope', { ipv4Count: 1 })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    await expect(world.manager.assignIpv4(eniId, { ipv4Count: 0 })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    await expect(world.manager.assignIpv4(eniId, { prefixCount: 1.5 })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    await expect(world.manager.unassignIpv4(eniId, { ipv4Addresses: [] })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    await expect(world.manager.unassignIpv4(eniId, { ipv4Addresses: ['10.0.0.256'] })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    await expect(world.manager.unassignIpv4(eniId, { ipv4Prefixes: ['10.0.0.0/24'] })).rejects.toMatchObject({
      code: 'InvalidInput',
    });
    expect(world.ec2Calls()).toEqual([]);
  });
});
