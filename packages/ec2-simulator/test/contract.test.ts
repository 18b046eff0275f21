import {
  type _InstanceType,
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreateTagsCommand,
  DeleteNetworkInterfaceCommand,
  DeleteTagsCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DetachNetworkInterfaceCommand,
  type EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  UnassignIpv6AddressesCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ec2Simulator } from '../src/index.js';
import {
  client,
  errorOf,
  NODE,
  NODE_BIG,
  SG_NODE,
  SG_POD,
  SUBNET_A,
  SUBNET_B,
  start,
  VPC,
} from './helpers.js';

// Every response shape goes through the real SDK and is checked field by field: a wrong member name or a
// <member> list parses silently to undefined or [], so "it did not throw" proves nothing.
describe('EC2 responses through @aws-sdk/client-ec2', () => {
  let sim: Ec2Simulator;
  let ec2: EC2Client;
  beforeAll(async () => {
    sim = await start();
    ec2 = client(sim);
  });
  afterAll(async () => {
    ec2.destroy();
    await sim.close();
  });

  it('CreateNetworkInterface returns every member', async () => {
    const out = await ec2.send(
      new CreateNetworkInterfaceCommand({
        SubnetId: SUBNET_A,
        Description: 'aws-K8S-i-0a000000000000001',
        Groups: [SG_NODE, SG_POD],
        SecondaryPrivateIpAddressCount: 2,
        TagSpecifications: [
          {
            ResourceType: 'network-interface',
            Tags: [
              { Key: 'node.k8s.amazonaws.com/instance_id', Value: NODE },
              { Key: 'cluster.k8s.amazonaws.com/name', Value: 'c1' },
            ],
          },
        ],
        ClientToken: 'token-contract-1',
      }),
    );
    expect(out.$metadata.httpStatusCode).toBe(200);
    expect(out.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.ClientToken).toBe('token-contract-1');
    const n = out.NetworkInterface!;
    expect(n.NetworkInterfaceId).toMatch(/^eni-0[0-9a-f]{16}$/);
    expect(n.SubnetId).toBe(SUBNET_A);
    expect(n.VpcId).toBe(VPC);
    expect(n.AvailabilityZone).toBe('us-west-2a');
    expect(n.Description).toBe('aws-K8S-i-0a000000000000001');
    expect(n.OwnerId).toBe('123456789012');
    expect(n.Status).toBe('available');
    expect(n.InterfaceType).toBe('interface');
    expect(n.MacAddress).toMatch(/^02(:[0-9a-f]{2}){5}$/);
    expect(n.RequesterManaged).toBe(false);
    expect(n.SourceDestCheck).toBe(true);
    expect(n.Attachment).toBeUndefined();
    expect(n.Groups).toEqual([
      { GroupId: SG_NODE, GroupName: 'node' },
      { GroupId: SG_POD, GroupName: 'pods' },
    ]);
    expect(n.TagSet).toEqual([
      { Key: 'node.k8s.amazonaws.com/instance_id', Value: NODE },
      { Key: 'cluster.k8s.amazonaws.com/name', Value: 'c1' },
    ]);
    expect(n.PrivateIpAddresses).toHaveLength(3);
    expect(n.PrivateIpAddresses![0]!.Primary).toBe(true);
    expect(n.PrivateIpAddresses![0]!.PrivateIpAddress).toBe(n.PrivateIpAddress);
    expect(n.PrivateIpAddresses![0]!.PrivateDnsName).toBe(
      `ip-${n.PrivateIpAddress!.replaceAll('.', '-')}.ec2.internal`,
    );
    expect(n.PrivateIpAddresses![1]!.Primary).toBe(false);
    expect(n.PrivateIpAddresses!.every((a) => a.PrivateIpAddress!.startsWith('10.0.0.'))).toBe(true);
    expect(n.Ipv4Prefixes).toEqual([]);
    expect(n.Ipv6Addresses).toEqual([]);
    expect(n.Ipv6Prefixes).toEqual([]);
  });

  it('CreateNetworkInterface with prefixes, explicit addresses, IPv6 and a trunk type', async () => {
    const a = await ec2.send(
      new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_B, Ipv4PrefixCount: 2, InterfaceType: 'trunk' }),
    );
    expect(a.NetworkInterface!.InterfaceType).toBe('trunk');
    expect(a.NetworkInterface!.Ipv4Prefixes).toEqual([
      { Ipv4Prefix: '100.64.0.16/28' },
      { Ipv4Prefix: '100.64.0.32/28' },
    ]);
    expect(a.NetworkInterface!.PrivateIpAddress).toBe('100.64.0.4');
    const b = await ec2.send(
      new CreateNetworkInterfaceCommand({
        SubnetId: SUBNET_B,
        PrivateIpAddresses: [
          { PrivateIpAddress: '100.64.1.7', Primary: true },
          { PrivateIpAddress: '100.64.1.9', Primary: false },
        ],
      }),
    );
    expect(b.NetworkInterface!.PrivateIpAddress).toBe('100.64.1.7');
    expect(b.NetworkInterface!.PrivateIpAddresses!.map((x) => [x.PrivateIpAddress, x.Primary])).toEqual([
      ['100.64.1.7', true],
      ['100.64.1.9', false],
    ]);
    const c = await ec2.send(
      new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, Ipv6AddressCount: 2, Groups: [SG_POD] }),
    );
    expect(c.NetworkInterface!.Ipv6Addresses!.map((x) => x.Ipv6Address)).toEqual([
      '2600:1f14:abc:de00::10',
      '2600:1f14:abc:de00::11',
    ]);
    expect(c.NetworkInterface!.Ipv6Addresses![0]!.IsPrimaryIpv6).toBe(false);
  });

  it('Attach, ModifyNetworkInterfaceAttribute, Describe(attachment), Detach, Delete', async () => {
    const created = await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }));
    const id = created.NetworkInterface!.NetworkInterfaceId!;
    const att = await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: id,
        InstanceId: NODE,
        DeviceIndex: 2,
        NetworkCardIndex: 0,
      }),
    );
    expect(att.AttachmentId).toMatch(/^eni-attach-0[0-9a-f]{16}$/);
    expect(att.NetworkCardIndex).toBe(0);
    const mod = await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: id,
        Attachment: { AttachmentId: att.AttachmentId!, DeleteOnTermination: true },
      }),
    );
    expect(mod.$metadata.httpStatusCode).toBe(200);
    await ec2.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: id, Groups: [SG_POD] }));
    const d = await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }));
    const n = d.NetworkInterfaces![0]!;
    expect(n.Status).toBe('in-use');
    expect(n.Groups).toEqual([{ GroupId: SG_POD, GroupName: 'pods' }]);
    expect(n.Attachment!.AttachmentId).toBe(att.AttachmentId);
    expect(n.Attachment!.InstanceId).toBe(NODE);
    expect(n.Attachment!.InstanceOwnerId).toBe('123456789012');
    expect(n.Attachment!.DeviceIndex).toBe(2);
    expect(n.Attachment!.NetworkCardIndex).toBe(0);
    expect(n.Attachment!.Status).toBe('attached');
    expect(n.Attachment!.DeleteOnTermination).toBe(true);
    expect(n.Attachment!.AttachTime).toBeInstanceOf(Date);
    expect(d.NextToken).toBeUndefined();
    const det = await ec2.send(
      new DetachNetworkInterfaceCommand({ AttachmentId: att.AttachmentId!, Force: false }),
    );
    expect(det.$metadata.httpStatusCode).toBe(200);
    const after = await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }));
    expect(after.NetworkInterfaces![0]!.Status).toBe('available');
    expect(after.NetworkInterfaces![0]!.Attachment).toBeUndefined();
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    const gone = await errorOf(ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })));
    expect(gone.name).toBe('InvalidNetworkInterfaceID.NotFound');
    expect(gone.message).toBe(`The networkInterface ID '${id}' does not exist`);
    expect(gone.status).toBe(400);
  });

  it('Assign/UnassignPrivateIpAddresses (addresses and prefixes)', async () => {
    const id = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_B }))).NetworkInterface!
      .NetworkInterfaceId!;
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, SecondaryPrivateIpAddressCount: 2 }),
    );
    expect(r.NetworkInterfaceId).toBe(id);
    expect(r.AssignedPrivateIpAddresses!.map((x) => x.PrivateIpAddress)).toHaveLength(2);
    expect(r.AssignedIpv4Prefixes).toEqual([]);
    const p = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, Ipv4PrefixCount: 1 }),
    );
    expect(p.AssignedIpv4Prefixes).toHaveLength(1);
    expect(p.AssignedIpv4Prefixes![0]!.Ipv4Prefix).toMatch(/^100\.64\.\d+\.\d+\/28$/);
    const e = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: id,
        PrivateIpAddresses: ['100.64.2.50', '100.64.2.51'],
        AllowReassignment: false,
      }),
    );
    expect(e.AssignedPrivateIpAddresses).toEqual([
      { PrivateIpAddress: '100.64.2.50' },
      { PrivateIpAddress: '100.64.2.51' },
    ]);
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: id,
        PrivateIpAddresses: ['100.64.2.50'],
        Ipv4Prefixes: [p.AssignedIpv4Prefixes![0]!.Ipv4Prefix!],
      }),
    );
    const d = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(d.Ipv4Prefixes).toEqual([]);
    expect(d.PrivateIpAddresses!.map((x) => x.PrivateIpAddress)).toEqual([
      d.PrivateIpAddress,
      ...r.AssignedPrivateIpAddresses!.map((x) => x.PrivateIpAddress),
      '100.64.2.51',
    ]);
  });

  it('Assign/UnassignIpv6Addresses (addresses and /80 prefixes)', async () => {
    const id = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }))).NetworkInterface!
      .NetworkInterfaceId!;
    const a = await ec2.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: id, Ipv6PrefixCount: 1 }));
    expect(a.NetworkInterfaceId).toBe(id);
    expect(a.AssignedIpv6Prefixes).toEqual(['2600:1f14:abc:de00:1::/80']);
    expect(a.AssignedIpv6Addresses).toEqual([]);
    const b = await ec2.send(
      new AssignIpv6AddressesCommand({ NetworkInterfaceId: id, Ipv6Addresses: ['2600:1f14:abc:de00::abcd'] }),
    );
    expect(b.AssignedIpv6Addresses).toEqual(['2600:1f14:abc:de00::abcd']);
    const d = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(d.Ipv6Prefixes).toEqual([{ Ipv6Prefix: '2600:1f14:abc:de00:1::/80' }]);
    expect(d.Ipv6Addresses!.map((x) => x.Ipv6Address)).toEqual(['2600:1f14:abc:de00::abcd']);
    const u = await ec2.send(
      new UnassignIpv6AddressesCommand({
        NetworkInterfaceId: id,
        Ipv6Addresses: ['2600:1f14:abc:de00::abcd'],
        Ipv6Prefixes: ['2600:1f14:abc:de00:1::/80'],
      }),
    );
    expect(u.NetworkInterfaceId).toBe(id);
    expect(u.UnassignedIpv6Addresses).toEqual(['2600:1f14:abc:de00::abcd']);
    expect(u.UnassignedIpv6Prefixes).toEqual(['2600:1f14:abc:de00:1::/80']);
    const e = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(e.Ipv6Prefixes).toEqual([]);
    expect(e.Ipv6Addresses).toEqual([]);
  });

  it('CreateTags and DeleteTags', async () => {
    const id = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }))).NetworkInterface!
      .NetworkInterfaceId!;
    await ec2.send(
      new CreateTagsCommand({
        Resources: [id],
        Tags: [
          { Key: 'a', Value: '1' },
          { Key: 'b', Value: '' },
          { Key: 'c', Value: '3' },
        ],
      }),
    );
    await ec2.send(
      new DeleteTagsCommand({ Resources: [id], Tags: [{ Key: 'a' }, { Key: 'c', Value: 'not-3' }] }),
    );
    const d = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(d.TagSet).toEqual([
      { Key: 'b', Value: '' },
      { Key: 'c', Value: '3' },
    ]);
  });

  it('DescribeInstances', async () => {
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [NODE] }));
    expect(out.Reservations).toHaveLength(1);
    const r = out.Reservations![0]!;
    expect(r.OwnerId).toBe('123456789012');
    expect(r.ReservationId).toMatch(/^r-/);
    const i = r.Instances![0]!;
    expect(i.InstanceId).toBe(NODE);
    expect(i.InstanceType).toBe('m5.large');
    expect(i.State).toEqual({ Code: 16, Name: 'running' });
    expect(i.Placement!.AvailabilityZone).toBe('us-west-2a');
    expect(i.SubnetId).toBe(SUBNET_A);
    expect(i.VpcId).toBe(VPC);
    expect(i.PrivateIpAddress).toBe('10.0.0.10');
    expect(i.Hypervisor).toBe('nitro');
    expect(i.LaunchTime).toBeInstanceOf(Date);
    expect(i.SecurityGroups).toEqual([{ GroupId: SG_NODE, GroupName: 'node' }]);
    const primary = i.NetworkInterfaces!.find((n) => n.Attachment!.DeviceIndex === 0)!;
    expect(primary.PrivateIpAddress).toBe('10.0.0.10');
    expect(primary.Attachment!.NetworkCardIndex).toBe(0);
    expect(primary.Attachment!.DeleteOnTermination).toBe(true);
    expect(primary.Attachment!.Status).toBe('attached');
    expect(primary.Attachment!.AttachmentId).toMatch(/^eni-attach-/);
    expect(primary.MacAddress).toMatch(/^02:/);
    expect(primary.Status).toBe('in-use');
    expect(primary.SubnetId).toBe(SUBNET_A);
    expect(primary.Groups).toEqual([{ GroupId: SG_NODE, GroupName: 'node' }]);
    expect(primary.PrivateIpAddresses![0]).toEqual({
      Primary: true,
      PrivateIpAddress: '10.0.0.10',
      PrivateDnsName: 'ip-10-0-0-10.ec2.internal',
    });
    expect(primary.InterfaceType).toBe('interface');
    const filtered = await ec2.send(
      new DescribeInstancesCommand({ Filters: [{ Name: 'instance-type', Values: ['p5.*'] }] }),
    );
    expect(filtered.Reservations!.map((x) => x.Instances![0]!.InstanceId)).toEqual([NODE_BIG]);
  });

  it('DescribeInstanceTypes', async () => {
    const out = await ec2.send(
      new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large', 'p5.48xlarge'] }),
    );
    const [m5, p5] = out.InstanceTypes!;
    expect(m5!.InstanceType).toBe('m5.large');
    expect(m5!.Hypervisor).toBe('nitro');
    expect(m5!.BareMetal).toBe(false);
    expect(m5!.NetworkInfo!.MaximumNetworkInterfaces).toBe(3);
    expect(m5!.NetworkInfo!.Ipv4AddressesPerInterface).toBe(10);
    expect(m5!.NetworkInfo!.Ipv6AddressesPerInterface).toBe(10);
    expect(m5!.NetworkInfo!.MaximumNetworkCards).toBe(1);
    expect(m5!.NetworkInfo!.DefaultNetworkCardIndex).toBe(0);
    expect(m5!.NetworkInfo!.NetworkCards).toEqual([
      { NetworkCardIndex: 0, MaximumNetworkInterfaces: 3, NetworkPerformance: 'Up to 10 Gigabit' },
    ]);
    expect(m5!.NetworkInfo!.Ipv6Supported).toBe(true);
    expect(p5!.NetworkInfo!.MaximumNetworkCards).toBe(32);
    expect(p5!.NetworkInfo!.MaximumNetworkInterfaces).toBe(64);
    expect(p5!.NetworkInfo!.NetworkCards).toHaveLength(32);
    expect(p5!.NetworkInfo!.NetworkCards![31]!.NetworkCardIndex).toBe(31);
    const xen = await ec2.send(
      new DescribeInstanceTypesCommand({ Filters: [{ Name: 'hypervisor', Values: ['xen'] }] }),
    );
    expect(xen.InstanceTypes!.map((t) => t.InstanceType).sort()).toEqual(['m4.large', 't2.medium']);
    const bad = await errorOf(
      ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['z9.huge' as _InstanceType] })),
    );
    expect(bad.name).toBe('InvalidInstanceType');
  });

  it('DescribeSubnets', async () => {
    const out = await ec2.send(
      new DescribeSubnetsCommand({ Filters: [{ Name: 'tag:Name', Values: ['primary'] }] }),
    );
    expect(out.Subnets).toHaveLength(1);
    const s = out.Subnets![0]!;
    expect(s.SubnetId).toBe(SUBNET_A);
    expect(s.VpcId).toBe(VPC);
    expect(s.CidrBlock).toBe('10.0.0.0/24');
    expect(s.AvailabilityZone).toBe('us-west-2a');
    expect(s.State).toBe('available');
    expect(s.OwnerId).toBe('123456789012');
    expect(s.SubnetArn).toBe(`arn:aws:ec2:us-west-2:123456789012:subnet/${SUBNET_A}`);
    expect(s.Ipv6CidrBlockAssociationSet![0]!.Ipv6CidrBlock).toBe('2600:1f14:abc:de00::/64');
    expect(s.Ipv6CidrBlockAssociationSet![0]!.Ipv6CidrBlockState!.State).toBe('associated');
    expect(s.Tags).toEqual([
      { Key: 'Name', Value: 'primary' },
      { Key: 'kubernetes.io/role/cni', Value: '1' },
    ]);
    expect(s.DefaultForAz).toBe(false);
    expect(s.AvailableIpAddressCount).toBe(sim.state.subnet(SUBNET_A)!.ipv4.available);
    expect(s.AvailableIpAddressCount).toBeLessThan(251);
  });

  it('DescribeSecurityGroups', async () => {
    const out = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [SG_NODE] }));
    const g = out.SecurityGroups![0]!;
    expect(g.GroupId).toBe(SG_NODE);
    expect(g.GroupName).toBe('node');
    expect(g.Description).toBe('nodes');
    expect(g.VpcId).toBe(VPC);
    expect(g.OwnerId).toBe('123456789012');
    expect(g.IpPermissions).toEqual([]);
    expect(g.IpPermissionsEgress![0]!.IpProtocol).toBe('-1');
    expect(g.IpPermissionsEgress![0]!.IpRanges).toEqual([{ CidrIp: '0.0.0.0/0' }]);
    const byName = await ec2.send(new DescribeSecurityGroupsCommand({ GroupNames: ['default'] }));
    expect(byName.SecurityGroups!.map((x) => x.GroupName)).toEqual(['default']);
  });
});

describe('EC2 error shapes through @aws-sdk/client-ec2', () => {
  let sim: Ec2Simulator;
  let ec2: EC2Client;
  beforeAll(async () => {
    sim = await start();
    ec2 = client(sim);
  });
  afterAll(async () => {
    ec2.destroy();
    await sim.close();
  });

  it('client errors are named, keep their message, are not retried and carry the request id header', async () => {
    let caught: unknown;
    try {
      await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: 'eni-0123456789abcdef0' }));
    } catch (e) {
      caught = e;
    }
    const e = caught as {
      name: string;
      Code?: string;
      $fault: string;
      $metadata: { attempts: number; requestId: string };
    };
    expect(e.name).toBe('InvalidNetworkInterfaceID.NotFound');
    expect(e.Code).toBe('InvalidNetworkInterfaceID.NotFound');
    expect(e.$fault).toBe('client');
    expect(e.$metadata.attempts).toBe(1);
    expect(e.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sim.calls.at(-1)!.requestId).toBe(e.$metadata.requestId);
  });

  it('a malformed id and an unknown parameter are typed client errors', async () => {
    const m = await errorOf(
      ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: 'not-an-eni' })),
    );
    expect(m.name).toBe('InvalidNetworkInterfaceID.Malformed');
    const res = await fetch(sim.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=DeleteNetworkInterface&Version=2016-11-15&NetworkInterfaceId=eni-0123456789abcdef0&Bogus=1',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    const body = await res.text();
    expect(body).toMatch(
      /<Response><Errors><Error><Code>UnknownParameter<\/Code><Message>The parameter Bogus is not recognized<\/Message><\/Error><\/Errors><RequestID>[0-9a-f-]{36}<\/RequestID><\/Response>$/,
    );
  });

  it('an unknown action is InvalidAction and a missing one MissingParameter', async () => {
    const post = (body: string) =>
      fetch(sim.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const a = await post('Action=RunInstances&Version=2016-11-15');
    expect(a.status).toBe(400);
    expect(await a.text()).toContain('<Code>InvalidAction</Code>');
    const b = await post('Version=2016-11-15');
    expect(await b.text()).toContain('<Code>MissingParameter</Code>');
  });

  it('a body over 1 MiB is answered 413, not with a reset connection', async () => {
    const res = await fetch(sim.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `Action=DescribeSubnets&Version=2016-11-15&Pad=${'x'.repeat(2 * 1024 * 1024)}`,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'BODY_TOO_LARGE', message: 'request body over 1 MiB' });
  });

  it('success bodies are namespaced EC2 XML with a requestId element', async () => {
    const res = await fetch(sim.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `Action=DescribeSecurityGroups&Version=2016-11-15&GroupId.1=${SG_NODE}`,
    });
    const text = await res.text();
    expect(res.headers.get('content-type')).toContain('text/xml');
    expect(text).toContain(
      '<DescribeSecurityGroupsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">',
    );
    expect(text).toContain(`<requestId>${res.headers.get('x-amzn-requestid')}</requestId>`);
    expect(text).toContain('<securityGroupInfo><item>');
  });

  it('503 RequestLimitExceeded is retried by the SDK and then succeeds', async () => {
    sim.faults.throttleNext(2, 'DescribeSubnets');
    const out = await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [SUBNET_A] }));
    expect(out.Subnets![0]!.SubnetId).toBe(SUBNET_A);
    expect(out.$metadata.attempts).toBe(3);
    const statuses = sim.calls.filter((c) => c.action === 'DescribeSubnets').map((c) => c.status);
    expect(statuses.slice(-3)).toEqual([503, 503, 200]);
  });

  it('RequestLimitExceeded past the retry budget is a server-fault named error', async () => {
    sim.faults.throttleNext(3, 'DescribeSubnets');
    const e = await errorOf(ec2.send(new DescribeSubnetsCommand({})));
    expect(e.name).toBe('RequestLimitExceeded');
    expect(e.status).toBe(503);
    expect(e.attempts).toBe(3);
  });

  it('UnauthorizedOperation is 403, names the IAM action and is not retried', async () => {
    sim.faults.deny('ec2:CreateNetworkInterface');
    const e = await errorOf(ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A })));
    expect(e.name).toBe('UnauthorizedOperation');
    expect(e.status).toBe(403);
    expect(e.attempts).toBe(1);
    expect(e.message).toContain('ec2:CreateNetworkInterface');
    sim.faults.clear();
  });

  it('DryRun answers DryRunOperation and changes nothing', async () => {
    const before = sim.state.enis().length;
    const e = await errorOf(
      ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, DryRun: true })),
    );
    expect(e.name).toBe('DryRunOperation');
    expect(e.status).toBe(412);
    expect(sim.state.enis().length).toBe(before);
  });
});

describe('more shapes and filters through the SDK', () => {
  let sim: Ec2Simulator;
  let ec2: EC2Client;
  beforeAll(async () => {
    sim = await start();
    ec2 = client(sim);
  });
  afterAll(async () => {
    ec2.destroy();
    await sim.close();
  });

  it('ModifyNetworkInterfaceAttribute: Description and SourceDestCheck', async () => {
    const id = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }))).NetworkInterface!
      .NetworkInterfaceId!;
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: id,
        Description: { Value: 'changed' },
      }),
    );
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: id,
        SourceDestCheck: { Value: false },
      }),
    );
    const n = (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })))
      .NetworkInterfaces![0]!;
    expect(n.Description).toBe('changed');
    expect(n.SourceDestCheck).toBe(false);
    const byDescription = await ec2.send(
      new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'description', Values: ['chang*'] }] }),
    );
    expect(byDescription.NetworkInterfaces!.map((x) => x.NetworkInterfaceId)).toEqual([id]);
  });

  it('tags on subnets and instances are visible to filters; DescribeInstances and DescribeSubnets paginate', async () => {
    await ec2.send(
      new CreateTagsCommand({ Resources: [SUBNET_B, NODE], Tags: [{ Key: 'team', Value: 'net' }] }),
    );
    const subnets = await ec2.send(
      new DescribeSubnetsCommand({ Filters: [{ Name: 'tag:team', Values: ['net'] }] }),
    );
    expect(subnets.Subnets!.map((s) => s.SubnetId)).toEqual([SUBNET_B]);
    const instances = await ec2.send(
      new DescribeInstancesCommand({ Filters: [{ Name: 'tag-key', Values: ['team'] }] }),
    );
    expect(instances.Reservations!.map((r) => r.Instances![0]!.InstanceId)).toEqual([NODE]);
    expect(instances.Reservations![0]!.Instances![0]!.Tags).toEqual([{ Key: 'team', Value: 'net' }]);
    const page1 = await ec2.send(new DescribeSubnetsCommand({ MaxResults: 5 }));
    expect(page1.Subnets).toHaveLength(3);
    expect(page1.NextToken).toBeUndefined();
    const i1 = await ec2.send(new DescribeInstancesCommand({ MaxResults: 5 }));
    expect(i1.Reservations).toHaveLength(2);
    expect(i1.NextToken).toBeUndefined();
    const missing = await errorOf(
      ec2.send(new DescribeSubnetsCommand({ SubnetIds: ['subnet-0fffffffffffffff0'] })),
    );
    expect(missing.name).toBe('InvalidSubnetID.NotFound');
    const unknownInstance = await errorOf(
      ec2.send(new DescribeInstancesCommand({ InstanceIds: ['i-0fffffffffffffff0'] })),
    );
    expect(unknownInstance.name).toBe('InvalidInstanceID.NotFound');
  });
});
