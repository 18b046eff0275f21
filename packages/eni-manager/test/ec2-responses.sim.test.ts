import { afterEach, describe, expect, it } from 'vitest';
import {
  allocationNodeOf,
  createEniManager,
  createInstanceLimitsSource,
  type Ec2Action,
  type Ec2Actions,
  type Ec2Api,
  type EniManager,
  isEniManagerError,
} from '../src/index.js';
import { fastBackoff, startWorld, type World } from './support/world.js';

// ec2-simulator has no hook to garble a reply, so the manager here talks to it through this Ec2Api: every call
// goes to the simulator over HTTP through the real SDK, and the parsed SDK output of one action is edited before
// the code under test sees it (a hand-written port implementation, not a mock of our modules).
function editing<E extends Ec2Action>(
  inner: Ec2Api,
  action: E,
  edit: (out: Ec2Actions[E][1]) => void,
): Ec2Api {
  return {
    async call(a, input) {
      const out = await inner.call(a, input);
      if ((a as Ec2Action) === action) edit(out as Ec2Actions[E][1]);
      return out;
    },
    destroy: () => inner.destroy(),
  };
}

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function managerOver(w: World, ec2: Ec2Api): EniManager {
  return createEniManager({
    ec2,
    metadata: w.metadata,
    node: allocationNodeOf(w.node),
    clusterName: 'test-cluster',
    timings: { imdsWaitMs: 3000, imdsBackoff: fastBackoff, detachWaitMs: 3000, detachBackoff: fastBackoff },
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (e: unknown) => e,
  );
}

function expectInvalid(error: unknown, action: string, field: string): void {
  expect(isEniManagerError(error, 'Ec2InvalidResponse'), String(error)).toBe(true);
  const e = error as { action?: string; field?: string; message: string; retryable: boolean };
  expect(e.action).toBe(action);
  expect(e.field).toBe(field);
  expect(e.message).toContain(field);
  expect(e.retryable).toBe(false);
}

type NetworkInterface = NonNullable<Ec2Actions['DescribeNetworkInterfaces'][1]['NetworkInterfaces']>[number];

describe('EC2 responses are shape-checked like IMDS ones', () => {
  const badEni: [string, string, (ni: NetworkInterface) => void][] = [
    [
      'an ENI id without the eni- prefix',
      'NetworkInterfaceId',
      (ni) => (ni.NetworkInterfaceId = 'ni-0123abcd'),
    ],
    ['a MAC that is not one', 'MacAddress', (ni) => (ni.MacAddress = '02:00:00:00:00')],
    ['a subnet id of another kind', 'SubnetId', (ni) => (ni.SubnetId = 'vpc-0a000000000000001')],
    ['no VPC id', 'VpcId', (ni) => (ni.VpcId = undefined)],
    ['a zone that is a region', 'AvailabilityZone', (ni) => (ni.AvailabilityZone = 'us-west-2')],
    [
      'a private address out of range',
      'PrivateIpAddresses[0].PrivateIpAddress',
      (ni) => (ni.PrivateIpAddresses![0]!.PrivateIpAddress = '10.0.0.256'),
    ],
    [
      'an address entry without its address',
      'PrivateIpAddresses[0].PrivateIpAddress',
      (ni) => (ni.PrivateIpAddresses![0]!.PrivateIpAddress = undefined),
    ],
    [
      'an IPv4 prefix with host bits',
      'Ipv4Prefixes[0].Ipv4Prefix',
      (ni) => (ni.Ipv4Prefixes = [{ Ipv4Prefix: '10.0.0.17/28' }]),
    ],
    [
      'an IPv4 prefix that is not a /28',
      'Ipv4Prefixes[0].Ipv4Prefix',
      (ni) => (ni.Ipv4Prefixes = [{ Ipv4Prefix: '10.0.0.0/16' }]),
    ],
    [
      'an IPv6 address that is not one',
      'Ipv6Addresses[0].Ipv6Address',
      (ni) => (ni.Ipv6Addresses = [{ Ipv6Address: '2001:db8::g' }]),
    ],
    [
      'an IPv6 prefix that is not a /80',
      'Ipv6Prefixes[0].Ipv6Prefix',
      (ni) => (ni.Ipv6Prefixes = [{ Ipv6Prefix: '2001:db8:c00:1::/64' }]),
    ],
    [
      'a security group that is a name',
      'Groups[0].GroupId',
      (ni) => (ni.Groups = [{ GroupId: 'default', GroupName: 'default' }]),
    ],
    [
      'an attachment id without eni-attach-',
      'Attachment.AttachmentId',
      (ni) => (ni.Attachment!.AttachmentId = 'attach-0123abcd'),
    ],
    ['a negative device index', 'Attachment.DeviceIndex', (ni) => (ni.Attachment!.DeviceIndex = -1)],
    ['a fractional device index', 'Attachment.DeviceIndex', (ni) => (ni.Attachment!.DeviceIndex = 1.5)],
    ['no device index', 'Attachment.DeviceIndex', (ni) => (ni.Attachment!.DeviceIndex = undefined)],
    [
      'a network card index that is not an integer',
      'Attachment.NetworkCardIndex',
      (ni) => (ni.Attachment!.NetworkCardIndex = Number.NaN),
    ],
    [
      'an instance id of another kind',
      'Attachment.InstanceId',
      (ni) => (ni.Attachment!.InstanceId = 'eni-0a000000000000001'),
    ],
  ];

  it.each(badEni)(
    'DescribeNetworkInterfaces with %s: Ec2InvalidResponse naming the field',
    async (_, field, edit) => {
      world = await startWorld();
      const manager = managerOver(
        world,
        editing(world.ec2, 'DescribeNetworkInterfaces', (out) => edit(out.NetworkInterfaces![0]!)),
      );
      const error = await rejection(manager.describeEnis([world.node.primaryEni.eniId]));
      expectInvalid(error, 'DescribeNetworkInterfaces', `NetworkInterfaces[0].${field}`);
    },
  );

  it('an untouched reply passes, and what it gives agrees with IMDS', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'DescribeNetworkInterfaces', () => undefined),
    );
    const [eni] = await manager.describeEnis([world.node.primaryEni.eniId]);
    const imds = world.node.primaryEni;
    expect(eni!.mac).toBe(imds.mac);
    expect([eni!.primaryIpv4, ...eni!.secondaryIpv4]).toEqual(imds.ipv4Addresses);
    expect(eni!.ipv6Addresses).toEqual(imds.ipv6Addresses);
    expect(eni!.attachment?.deviceIndex).toBe(imds.deviceNumber);
  });

  it('AssignPrivateIpAddresses with a malformed address: the error names the element', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'AssignPrivateIpAddresses', (out) => {
        out.AssignedPrivateIpAddresses![1]!.PrivateIpAddress = '10.0.0';
      }),
    );
    const error = await rejection(manager.assignIpv4(world.node.primaryEni.eniId, { ipv4Count: 2 }));
    expectInvalid(error, 'AssignPrivateIpAddresses', 'AssignedPrivateIpAddresses[1].PrivateIpAddress');
  });

  it('AssignPrivateIpAddresses with a prefix that is not a /28, or too few of them', async () => {
    world = await startWorld();
    const eniId = world.node.primaryEni.eniId;
    const wide = managerOver(
      world,
      editing(world.ec2, 'AssignPrivateIpAddresses', (out) => {
        out.AssignedIpv4Prefixes![0]!.Ipv4Prefix = '10.0.0.0/24';
      }),
    );
    expectInvalid(
      await rejection(wide.assignIpv4(eniId, { prefixCount: 1 })),
      'AssignPrivateIpAddresses',
      'AssignedIpv4Prefixes[0].Ipv4Prefix',
    );
    const short = managerOver(
      world,
      editing(world.ec2, 'AssignPrivateIpAddresses', (out) => {
        out.AssignedIpv4Prefixes = out.AssignedIpv4Prefixes!.slice(1);
      }),
    );
    expectInvalid(
      await rejection(short.assignIpv4(eniId, { prefixCount: 2 })),
      'AssignPrivateIpAddresses',
      'AssignedIpv4Prefixes',
    );
  });

  it('AssignIpv6Addresses with a /64 where a /80 was delegated', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'AssignIpv6Addresses', (out) => {
        out.AssignedIpv6Prefixes = ['2001:db8:c00:1::/64'];
      }),
    );
    const error = await rejection(manager.assignIpv6Prefixes(world.node.primaryEni.eniId, 1));
    expectInvalid(error, 'AssignIpv6Addresses', 'AssignedIpv6Prefixes[0]');
  });

  it('DescribeSubnets with a malformed subnet id fails the allocation before any ENI is created', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'DescribeSubnets', (out) => {
        out.Subnets![0]!.SubnetId = 'subnet-XYZ';
      }),
    );
    const error = await rejection(manager.allocateEni({ ipv4Count: 1 }));
    expectInvalid(error, 'DescribeSubnets', 'Subnets[0].SubnetId');
    expect(world.ec2Calls('CreateNetworkInterface')).toHaveLength(0);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('DescribeInstances with a negative device index: no attach, and the new ENI is deleted', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'DescribeInstances', (out) => {
        out.Reservations![0]!.Instances![0]!.NetworkInterfaces![0]!.Attachment!.DeviceIndex = -3;
      }),
    );
    const error = await rejection(manager.allocateEni({ ipv4Count: 1 }));
    expectInvalid(
      error,
      'DescribeInstances',
      'Reservations[].Instances[].NetworkInterfaces[0].Attachment.DeviceIndex',
    );
    expect(world.ec2Calls('AttachNetworkInterface')).toHaveLength(0);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('CreateNetworkInterface describing the new ENI with a malformed MAC: the ENI is deleted again', async () => {
    world = await startWorld();
    const manager = managerOver(
      world,
      editing(world.ec2, 'CreateNetworkInterface', (out) => {
        out.NetworkInterface!.MacAddress = 'not-a-mac';
      }),
    );
    const error = await rejection(manager.allocateEni({ ipv4Count: 1 }));
    expectInvalid(error, 'CreateNetworkInterface', 'NetworkInterface.MacAddress');
    expect(world.ec2Calls('DescribeInstances')).toHaveLength(0);
    expect(world.ec2Calls('DeleteNetworkInterface').length).toBeGreaterThan(0);
    expect(await world.ourEnis()).toEqual([]);
  });

  it('AttachNetworkInterface with a malformed attachment id: detached and deleted, IMDS unchanged', async () => {
    world = await startWorld();
    const before = await world.metadata.listMacs();
    const manager = managerOver(
      world,
      editing(world.ec2, 'AttachNetworkInterface', (out) => {
        out.AttachmentId = 'eni-attach-NOPE';
      }),
    );
    const error = await rejection(manager.allocateEni({ ipv4Count: 1 }));
    expectInvalid(error, 'AttachNetworkInterface', 'AttachmentId');
    expect(world.ec2Calls('ModifyNetworkInterfaceAttribute')).toHaveLength(0);
    expect(await world.ourEnis()).toEqual([]);
    expect(await world.metadata.listMacs()).toEqual(before);
  });

  it('DescribeInstanceTypes with a network card index that is not one', async () => {
    world = await startWorld();
    const source = createInstanceLimitsSource(
      editing(world.ec2, 'DescribeInstanceTypes', (out) => {
        out.InstanceTypes![0]!.NetworkInfo!.NetworkCards![0]!.NetworkCardIndex = -1;
      }),
    );
    const error = await rejection(source.limits('m5.large'));
    expectInvalid(
      error,
      'DescribeInstanceTypes',
      'InstanceTypes[0].NetworkInfo.NetworkCards[0].NetworkCardIndex',
    );
  });
});
