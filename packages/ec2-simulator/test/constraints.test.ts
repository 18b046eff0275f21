import {
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DeleteNetworkInterfaceCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSubnetsCommand,
  DetachNetworkInterfaceCommand,
  type EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Ec2Simulator } from '../src/index.js';
import {
  client,
  errorOf,
  NODE,
  NODE_BIG,
  SG_NODE,
  SUBNET_A,
  SUBNET_B,
  SUBNET_SMALL,
  start,
  VPC,
} from './helpers.js';

let sim: Ec2Simulator;
let ec2: EC2Client;
beforeEach(async () => {
  sim = await start();
  ec2 = client(sim);
});
afterEach(async () => {
  ec2.destroy();
  await sim.close();
});

const create = async (input: ConstructorParameters<typeof CreateNetworkInterfaceCommand>[0]) =>
  (await ec2.send(new CreateNetworkInterfaceCommand(input))).NetworkInterface!;

describe('subnet capacity', () => {
  it('reserves the first four and the last address and reports it in AvailableIpAddressCount', async () => {
    // 10.0.1.0/26: 64 addresses, 59 usable.
    const s = (await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [SUBNET_SMALL] }))).Subnets![0]!;
    expect(s.AvailableIpAddressCount).toBe(59);
    const e = await create({ SubnetId: SUBNET_SMALL });
    expect(e.PrivateIpAddress).toBe('10.0.1.4');
    for (const reserved of ['10.0.1.0', '10.0.1.3', '10.0.1.63']) {
      const err = await errorOf(
        ec2.send(
          new AssignPrivateIpAddressesCommand({
            NetworkInterfaceId: e.NetworkInterfaceId!,
            PrivateIpAddresses: [reserved],
          }),
        ),
      );
      expect(err.name).toBe('InvalidParameterValue');
    }
    const outside = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.NetworkInterfaceId!,
          PrivateIpAddresses: ['10.0.2.9'],
        }),
      ),
    );
    expect(outside.name).toBe('InvalidParameterValue');
  });

  it('a full subnet answers InsufficientFreeAddressesInSubnet, once, and takes nothing', async () => {
    // 59 usable: 1 ENI with 49 secondaries (50) leaves 9; asking for 10 more must fail and take none.
    const e = await create({ SubnetId: SUBNET_SMALL, SecondaryPrivateIpAddressCount: 49 });
    expect(e.PrivateIpAddresses).toHaveLength(50);
    sim.clearCalls();
    const err = await errorOf(create({ SubnetId: SUBNET_SMALL, SecondaryPrivateIpAddressCount: 9 }));
    expect(err.name).toBe('InsufficientFreeAddressesInSubnet');
    expect(err.status).toBe(400);
    expect(err.attempts).toBe(1);
    expect(sim.calls).toHaveLength(1);
    expect(sim.state.subnet(SUBNET_SMALL)!.ipv4.available).toBe(9);
    const ok = await create({ SubnetId: SUBNET_SMALL, SecondaryPrivateIpAddressCount: 8 });
    expect(ok.PrivateIpAddresses).toHaveLength(9);
    expect(sim.state.subnet(SUBNET_SMALL)!.ipv4.available).toBe(0);
    const none = await errorOf(create({ SubnetId: SUBNET_SMALL }));
    expect(none.name).toBe('InsufficientFreeAddressesInSubnet');
  });

  it('prefixes need an aligned, completely free /28: fragmentation gives InsufficientCidrBlocks', async () => {
    // /26 = four /28 blocks. Block 0 holds the reserved .0–.3, block 3 the reserved .63: only .16/28 and
    // .32/28 can ever be prefixes. One address in each makes prefixes impossible with 56 addresses free.
    const e = await create({ SubnetId: SUBNET_SMALL, PrivateIpAddress: '10.0.1.20' });
    expect(sim.state.subnet(SUBNET_SMALL)!.ipv4.available).toBe(58);
    const p = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: e.NetworkInterfaceId!, Ipv4PrefixCount: 1 }),
    );
    expect(p.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: '10.0.1.32/28' }]);
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        Ipv4Prefixes: ['10.0.1.32/28'],
      }),
    );
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        PrivateIpAddresses: ['10.0.1.40'],
      }),
    );
    const free = sim.state.subnet(SUBNET_SMALL)!.ipv4.available;
    expect(free).toBe(57);
    const err = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.NetworkInterfaceId!,
          Ipv4PrefixCount: 1,
        }),
      ),
    );
    expect(err.name).toBe('InsufficientCidrBlocks');
    expect(err.attempts).toBe(1);
    const onCreate = await errorOf(create({ SubnetId: SUBNET_SMALL, Ipv4PrefixCount: 1 }));
    expect(onCreate.name).toBe('InsufficientCidrBlocks');
    expect(sim.state.subnet(SUBNET_SMALL)!.ipv4.available).toBe(57);
    // Single addresses still work: the subnet is fragmented, not full.
    const single = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        SecondaryPrivateIpAddressCount: 1,
      }),
    );
    expect(single.AssignedPrivateIpAddresses).toHaveLength(1);
  });

  it('an explicit prefix must be an aligned /28 with every address free', async () => {
    const e = await create({ SubnetId: SUBNET_B });
    const misaligned = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.NetworkInterfaceId!,
          Ipv4Prefixes: ['100.64.0.8/28'],
        }),
      ),
    );
    expect(misaligned.name).toBe('InvalidParameterValue');
    const overlaps = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.NetworkInterfaceId!,
          Ipv4Prefixes: ['100.64.0.0/28'],
        }),
      ),
    );
    expect(overlaps.name).toBe('InvalidIPAddress.InUse');
    const ok = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        Ipv4Prefixes: ['100.64.3.0/28'],
      }),
    );
    expect(ok.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: '100.64.3.0/28' }]);
  });

  it('an address in use is InvalidIPAddress.InUse unless AllowReassignment moves it', async () => {
    const a = await create({
      SubnetId: SUBNET_B,
      PrivateIpAddresses: [
        { PrivateIpAddress: '100.64.0.100', Primary: true },
        { PrivateIpAddress: '100.64.0.101', Primary: false },
      ],
    });
    const b = await create({ SubnetId: SUBNET_B });
    const taken = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: b.NetworkInterfaceId!,
          PrivateIpAddresses: ['100.64.0.101'],
        }),
      ),
    );
    expect(taken.name).toBe('InvalidIPAddress.InUse');
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: b.NetworkInterfaceId!,
        PrivateIpAddresses: ['100.64.0.101'],
        AllowReassignment: true,
      }),
    );
    expect(sim.state.eni(a.NetworkInterfaceId!)!.privateIps.map((x) => x.value)).toEqual(['100.64.0.100']);
    expect(sim.state.eni(b.NetworkInterfaceId!)!.privateIps.map((x) => x.value)).toContain('100.64.0.101');
  });
});

describe('instance limits', () => {
  it('m5.large takes 3 interfaces: the fourth attach is AttachmentLimitExceeded', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!);
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: ids[0]!, InstanceId: NODE, DeviceIndex: 1 }),
    );
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: ids[1]!, InstanceId: NODE, DeviceIndex: 2 }),
    );
    const err = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: ids[2]!, InstanceId: NODE, DeviceIndex: 3 }),
      ),
    );
    expect(err.name).toBe('AttachmentLimitExceeded');
    expect(err.attempts).toBe(1);
    expect(sim.state.eni(ids[2]!)!.attachment).toBeUndefined();
  });

  it('a taken device index, an unknown card and an attached ENI are rejected', async () => {
    const a = (await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!;
    const b = (await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!;
    const dev0 = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: a, InstanceId: NODE, DeviceIndex: 0 }),
      ),
    );
    expect(dev0.name).toBe('InvalidParameterValue');
    const card = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({
          NetworkInterfaceId: a,
          InstanceId: NODE,
          DeviceIndex: 1,
          NetworkCardIndex: 1,
        }),
      ),
    );
    expect(card.name).toBe('InvalidParameterValue');
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: a, InstanceId: NODE, DeviceIndex: 1 }),
    );
    const inUse = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: a, InstanceId: NODE, DeviceIndex: 2 }),
      ),
    );
    expect(inUse.name).toBe('InvalidNetworkInterface.InUse');
    const noInstance = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({
          NetworkInterfaceId: b,
          InstanceId: 'i-0ffffffffffffffff',
          DeviceIndex: 1,
        }),
      ),
    );
    expect(noInstance.name).toBe('InvalidInstanceID.NotFound');
    const del = await errorOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: a })));
    expect(del.name).toBe('InvalidNetworkInterface.InUse');
  });

  it('p5.48xlarge: 2 interfaces per network card, across 32 cards', async () => {
    const a = (await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!;
    const b = (await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!;
    const c = (await create({ SubnetId: SUBNET_A })).NetworkInterfaceId!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: a, InstanceId: NODE_BIG, DeviceIndex: 1 }),
    );
    const full = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: b, InstanceId: NODE_BIG, DeviceIndex: 2 }),
      ),
    );
    expect(full.name).toBe('AttachmentLimitExceeded');
    const r = await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: b,
        InstanceId: NODE_BIG,
        DeviceIndex: 0,
        NetworkCardIndex: 5,
      }),
    );
    expect(r.NetworkCardIndex).toBe(5);
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: c,
        InstanceId: NODE_BIG,
        DeviceIndex: 1,
        NetworkCardIndex: 5,
      }),
    );
    const onCard5 = await ec2.send(
      new DescribeNetworkInterfacesCommand({
        Filters: [
          { Name: 'attachment.instance-id', Values: [NODE_BIG] },
          { Name: 'attachment.network-card-index', Values: ['5'] },
        ],
      }),
    );
    expect(onCard5.NetworkInterfaces!.map((n) => n.Attachment!.DeviceIndex).sort()).toEqual([0, 1]);
  });

  it('IPv4 per interface: m5.large ENIs hold 10 slots, prefixes count one each', async () => {
    const e = await create({ SubnetId: SUBNET_B, SecondaryPrivateIpAddressCount: 5 });
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        InstanceId: NODE,
        DeviceIndex: 1,
      }),
    );
    await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: e.NetworkInterfaceId!, Ipv4PrefixCount: 2 }),
    );
    // 1 primary + 5 + 2 prefixes = 8 of 10.
    const err = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.NetworkInterfaceId!,
          SecondaryPrivateIpAddressCount: 3,
        }),
      ),
    );
    expect(err.name).toBe('PrivateIpAddressLimitExceeded');
    expect(err.attempts).toBe(1);
    expect(sim.state.eni(e.NetworkInterfaceId!)!.privateIps).toHaveLength(6);
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: e.NetworkInterfaceId!,
        SecondaryPrivateIpAddressCount: 2,
      }),
    );
    // An ENI holding more than the type allows cannot be attached.
    const big = await create({ SubnetId: SUBNET_B, SecondaryPrivateIpAddressCount: 12 });
    const d = (
      await ec2.send(
        new DescribeNetworkInterfacesCommand({
          Filters: [{ Name: 'attachment.instance-id', Values: [NODE] }],
        }),
      )
    ).NetworkInterfaces!;
    expect(d).toHaveLength(2);
    const tooMany = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({
          NetworkInterfaceId: big.NetworkInterfaceId!,
          InstanceId: NODE,
          DeviceIndex: 2,
        }),
      ),
    );
    expect(tooMany.name).toBe('PrivateIpAddressLimitExceeded');
  });

  it('the primary interface cannot be detached and the primary address cannot be unassigned', async () => {
    const primary = sim.state.eni(sim.state.instance(NODE)!.primaryEniId)!;
    const det = await errorOf(
      ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: primary.attachment!.id })),
    );
    expect(det.name).toBe('OperationNotPermitted');
    const un = await errorOf(
      ec2.send(
        new UnassignPrivateIpAddressesCommand({
          NetworkInterfaceId: primary.id,
          PrivateIpAddresses: ['10.0.0.10'],
        }),
      ),
    );
    expect(un.name).toBe('InvalidParameterValue');
    const unknown = await errorOf(
      ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: 'eni-attach-0123456789abcdef0' })),
    );
    expect(unknown.name).toBe('InvalidAttachmentID.NotFound');
  });
});

describe('request validation', () => {
  it('rejects parameter combinations EC2 rejects, without changing state', async () => {
    const dump = () => JSON.stringify({ ...(sim.state.snapshot() as object), time: undefined });
    const before = dump();
    const both = await errorOf(
      create({ SubnetId: SUBNET_A, SecondaryPrivateIpAddressCount: 1, Ipv4PrefixCount: 1 }),
    );
    expect(both.name).toBe('InvalidParameterCombination');
    const e = sim.state.enis()[0]!;
    const assign = await errorOf(
      ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: e.id,
          PrivateIpAddresses: ['10.0.0.200'],
          SecondaryPrivateIpAddressCount: 1,
        }),
      ),
    );
    expect(assign.name).toBe('InvalidParameterCombination');
    const nothing = await errorOf(
      ec2.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: e.id })),
    );
    expect(nothing.name).toBe('MissingParameter');
    const twoKinds = await errorOf(
      ec2.send(
        new ModifyNetworkInterfaceAttributeCommand({
          NetworkInterfaceId: e.id,
          Groups: [SG_NODE],
          SourceDestCheck: { Value: false },
        }),
      ),
    );
    expect(twoKinds.name).toBe('InvalidParameterCombination');
    const badCount = await errorOf(create({ SubnetId: SUBNET_A, SecondaryPrivateIpAddressCount: 0 }));
    expect(badCount.name).toBe('InvalidParameterValue');
    const noSubnet = await errorOf(create({ SubnetId: 'subnet-0fffffffffffffff0' }));
    expect(noSubnet.name).toBe('InvalidSubnetID.NotFound');
    const badGroup = await errorOf(create({ SubnetId: SUBNET_A, Groups: ['sg-0fffffffffffffff0'] }));
    expect(badGroup.name).toBe('InvalidGroup.NotFound');
    const badTagType = await errorOf(
      create({
        SubnetId: SUBNET_A,
        TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'a', Value: 'b' }] }],
      }),
    );
    expect(badTagType.name).toBe('InvalidParameterValue');
    const awsTag = await errorOf(
      create({
        SubnetId: SUBNET_A,
        TagSpecifications: [{ ResourceType: 'network-interface', Tags: [{ Key: 'aws:x', Value: 'b' }] }],
      }),
    );
    expect(awsTag.name).toBe('InvalidParameterValue');
    const badIp = await errorOf(create({ SubnetId: SUBNET_A, PrivateIpAddress: '10.0.0.300' }));
    expect(badIp.name).toBe('InvalidParameterValue');
    expect(dump()).toBe(before);
  });

  it('ClientToken makes CreateNetworkInterface idempotent', async () => {
    const a = await create({ SubnetId: SUBNET_A, ClientToken: 'tok-1', SecondaryPrivateIpAddressCount: 2 });
    const b = await create({ SubnetId: SUBNET_A, ClientToken: 'tok-1', SecondaryPrivateIpAddressCount: 2 });
    expect(b.NetworkInterfaceId).toBe(a.NetworkInterfaceId);
    expect(b.PrivateIpAddresses).toEqual(a.PrivateIpAddresses);
    expect(sim.state.enis().filter((e) => e.subnetId === SUBNET_A && !e.primary)).toHaveLength(1);
    const mismatch = await errorOf(
      create({ SubnetId: SUBNET_A, ClientToken: 'tok-1', SecondaryPrivateIpAddressCount: 3 }),
    );
    expect(mismatch.name).toBe('IdempotentParameterMismatch');
    // The SDK's own token differs per call: two calls make two ENIs.
    await create({ SubnetId: SUBNET_A });
    await create({ SubnetId: SUBNET_A });
    expect(sim.state.enis().filter((e) => e.subnetId === SUBNET_A && !e.primary)).toHaveLength(3);
  });
});

describe('DescribeNetworkInterfaces filters and pagination', () => {
  it('filters by tag-key, tag:K, status, vpc-id, subnet-id and attachment.instance-id', async () => {
    const tag = (k: string, v: string) => [
      { ResourceType: 'network-interface' as const, Tags: [{ Key: k, Value: v }] },
    ];
    const ours = await create({
      SubnetId: SUBNET_A,
      TagSpecifications: tag('node.k8s.amazonaws.com/instance_id', NODE),
    });
    const other = await create({
      SubnetId: SUBNET_B,
      TagSpecifications: tag('node.k8s.amazonaws.com/instance_id', 'i-0ther'),
    });
    await create({ SubnetId: SUBNET_B, TagSpecifications: tag('cluster.k8s.amazonaws.com/name', 'c1') });
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: other.NetworkInterfaceId!,
        InstanceId: NODE,
        DeviceIndex: 1,
      }),
    );
    const q = async (Filters: { Name: string; Values: string[] }[]) =>
      (await ec2.send(new DescribeNetworkInterfacesCommand({ Filters })))
        .NetworkInterfaces!.map((n) => n.NetworkInterfaceId)
        .sort();
    expect(await q([{ Name: 'tag-key', Values: ['node.k8s.amazonaws.com/instance_id'] }])).toEqual(
      [ours.NetworkInterfaceId, other.NetworkInterfaceId].sort(),
    );
    expect(
      await q([
        { Name: 'tag-key', Values: ['node.k8s.amazonaws.com/instance_id'] },
        { Name: 'status', Values: ['available'] },
        { Name: 'vpc-id', Values: [VPC] },
      ]),
    ).toEqual([ours.NetworkInterfaceId]);
    expect(await q([{ Name: 'tag:node.k8s.amazonaws.com/instance_id', Values: ['i-0th*'] }])).toEqual([
      other.NetworkInterfaceId,
    ]);
    expect(
      await q([
        { Name: 'subnet-id', Values: [SUBNET_B] },
        { Name: 'status', Values: ['in-use'] },
      ]),
    ).toEqual([other.NetworkInterfaceId]);
    const onNode = await q([{ Name: 'attachment.instance-id', Values: [NODE] }]);
    expect(onNode).toEqual([sim.state.instance(NODE)!.primaryEniId, other.NetworkInterfaceId].sort());
    const bad = await errorOf(
      ec2.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'colour', Values: ['red'] }] })),
    );
    expect(bad.name).toBe('InvalidParameterValue');
  });

  it('MaxResults/NextToken page through every ENI exactly once', async () => {
    for (let i = 0; i < 12; i++) await create({ SubnetId: SUBNET_B });
    const all = sim.state.enis().map((e) => e.id);
    expect(all).toHaveLength(14);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const out = await ec2.send(new DescribeNetworkInterfacesCommand({ MaxResults: 5, NextToken: token }));
      seen.push(...out.NetworkInterfaces!.map((n) => n.NetworkInterfaceId!));
      token = out.NextToken;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    const small = await errorOf(ec2.send(new DescribeNetworkInterfacesCommand({ MaxResults: 4 })));
    expect(small.name).toBe('InvalidParameterValue');
    const badToken = await errorOf(ec2.send(new DescribeNetworkInterfacesCommand({ NextToken: 'garbage' })));
    expect(badToken.name).toBe('InvalidParameterValue');
    const withIds = await errorOf(
      ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [all[0]!], MaxResults: 5 })),
    );
    expect(withIds.name).toBe('InvalidParameterCombination');
  });

  it('by id, the NotFound message lists every missing id', async () => {
    const err = await errorOf(
      ec2.send(
        new DescribeNetworkInterfacesCommand({
          NetworkInterfaceIds: [
            sim.state.instance(NODE)!.primaryEniId,
            'eni-0aaaaaaaaaaaaaaa1',
            'eni-0aaaaaaaaaaaaaaa2',
          ],
        }),
      ),
    );
    expect(err.name).toBe('InvalidNetworkInterfaceID.NotFound');
    expect(err.message).toBe(
      "The networkInterface IDs 'eni-0aaaaaaaaaaaaaaa1, eni-0aaaaaaaaaaaaaaa2' does not exist",
    );
  });
});
