import { afterEach, describe, expect, it } from 'vitest';
import {
  createImdsNodeMetadata,
  createInstanceLimitsSource,
  ImdsClient,
  isEniManagerError,
  maxPods,
} from '../src/index.js';
import { INSTANCE, PRIMARY_SUBNET, SG, startWorld, VPC, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('IMDS node discovery against ec2-simulator', () => {
  it('reads every field, and each matches what EC2 says about the instance', async () => {
    world = await startWorld();
    const node = world.node;
    const reservations = await world.admin.call('DescribeInstances', { InstanceIds: [INSTANCE] });
    const instance = reservations.Reservations![0]!.Instances![0]!;
    const primary = (
      await world.admin.call('DescribeNetworkInterfaces', {
        NetworkInterfaceIds: [instance.NetworkInterfaces![0]!.NetworkInterfaceId!],
      })
    ).NetworkInterfaces![0]!;

    expect(node.instanceId).toBe(INSTANCE);
    expect(node.instanceType).toBe('m5.large');
    expect(node.availabilityZone).toBe('us-west-2a');
    expect(node.region).toBe('us-west-2');
    expect(node.localIpv4).toBe(instance.PrivateIpAddress);
    expect(node.primaryMac).toBe(primary.MacAddress);
    expect(node.enis).toHaveLength(1);
    const eni = node.primaryEni;
    expect(eni.mac).toBe(primary.MacAddress);
    expect(eni.eniId).toBe(primary.NetworkInterfaceId);
    expect(eni.deviceNumber).toBe(0);
    expect(eni.networkCard).toBe(0);
    expect(eni.subnetId).toBe(PRIMARY_SUBNET);
    expect(eni.subnetIpv4Cidr).toBe('10.0.0.0/24');
    expect(eni.vpcId).toBe(VPC);
    expect(eni.vpcIpv4Cidrs).toEqual(['10.0.0.0/16', '10.1.0.0/16']);
    expect(eni.securityGroupIds).toEqual([SG]);
    expect(eni.ipv4Addresses).toEqual([primary.PrivateIpAddress]);
    expect(eni.ipv4Prefixes).toEqual([]);
    expect(eni.ipv6Addresses).toEqual([primary.Ipv6Addresses![0]!.Ipv6Address]);
    expect(node.localIpv6).toBe(primary.Ipv6Addresses![0]!.Ipv6Address);
    expect(eni.ipv6Prefixes).toEqual([]);
    expect(eni.subnetIpv6Cidrs).toEqual(['2001:db8:c00:1::/64']);
    expect(eni.vpcIpv6Cidrs).toEqual(['2001:db8:c00::/56']);
  });

  it('sees new ENIs, their device numbers, addresses and prefixes', async () => {
    world = await startWorld();
    await world.manager.assignIpv4(world.node.primaryEni.eniId, { prefixCount: 1 });
    const a = await world.manager.allocateEni({ ipv4Count: 2 });
    const enis = await world.metadata.listEnis();
    expect(enis.map((e) => [e.eniId, e.deviceNumber])).toEqual([
      [world.node.primaryEni.eniId, 0],
      [a.eniId, 1],
    ]);
    expect(enis[0]!.ipv4Prefixes).toHaveLength(1);
    expect(enis[1]!.ipv4Addresses).toEqual([a.ec2.primaryIpv4, ...enis[1]!.ipv4Addresses.slice(1)]);
    expect(enis[1]!.ipv4Addresses).toHaveLength(3);
  });

  it('uses one token for a whole discovery', async () => {
    world = await startWorld();
    const puts: string[] = [];
    const metadata = createImdsNodeMetadata(
      new ImdsClient({
        endpoint: world.sim.imdsEndpoint(INSTANCE),
        hooks: { onCall: (e) => e.action === 'api/token' && puts.push(e.action) },
      }),
    );
    await metadata.discoverNode();
    await metadata.discoverNode();
    expect(puts).toHaveLength(1);
  });
});

describe('instance limits against ec2-simulator', () => {
  it('reads DescribeInstanceTypes once per type and computes max pods', async () => {
    world = await startWorld();
    const limits = createInstanceLimitsSource(world.ec2);
    const m5 = await limits.limits('m5.large');
    expect(m5).toMatchObject({
      instanceType: 'm5.large',
      maxEnis: 3,
      ipv4PerEni: 10,
      defaultNetworkCardIndex: 0,
      hypervisor: 'nitro',
      prefixDelegationSupported: true,
    });
    expect(maxPods(m5)).toBe(29);
    await limits.limits('m5.large');
    await Promise.all([limits.limits('c5.xlarge'), limits.limits('c5.xlarge')]);
    expect(world.ec2Calls('DescribeInstanceTypes')).toHaveLength(2);
    expect(maxPods(await limits.limits('c5.xlarge'))).toBe(58);
    expect(maxPods(await limits.limits('t3.small'))).toBe(11);
  });

  it('an unknown type is a typed error and is not cached', async () => {
    world = await startWorld();
    const limits = createInstanceLimitsSource(world.ec2);
    const error = await limits.limits('zz9.huge').catch((e: unknown) => e);
    expect(isEniManagerError(error)).toBe(true);
    expect((error as { code: string }).code).toMatch(
      /^(InvalidParameterValue|Ec2InvalidResponse|Ec2Unknown)$/,
    );
    await limits.limits('zz9.huge').catch(() => undefined);
    expect(world.ec2Calls('DescribeInstanceTypes')).toHaveLength(2);
    await expect(limits.limits('not a type')).rejects.toMatchObject({ code: 'InvalidInput' });
  });
});
