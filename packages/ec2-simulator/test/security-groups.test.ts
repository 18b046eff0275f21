import {
  AuthorizeSecurityGroupEgressCommand,
  AuthorizeSecurityGroupIngressCommand,
  CreateNetworkInterfaceCommand,
  CreateSecurityGroupCommand,
  DeleteNetworkInterfaceCommand,
  DeleteSecurityGroupCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
  type EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  RevokeSecurityGroupEgressCommand,
  RevokeSecurityGroupIngressCommand,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { SimEvent } from '../src/index.js';
import { errorOf, SG_NODE, SUBNET_A, useSimulator, VPC } from './helpers.js';

const boot = useSimulator();

const createGroup = async (c: EC2Client, name: string) =>
  (await c.send(new CreateSecurityGroupCommand({ GroupName: name, Description: name, VpcId: VPC }))).GroupId!;

const pg = (from: string) => ({
  IpProtocol: 'tcp',
  FromPort: 5432,
  ToPort: 5432,
  UserIdGroupPairs: [{ GroupId: from, Description: 'clients' }],
});

describe('security groups through the real SDK', () => {
  it('creates a group with the default egress-allow rule and no ingress', async () => {
    const { ec2 } = await boot();
    const id = await createGroup(ec2, 'db');
    const g = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [id] }))).SecurityGroups![0]!;
    expect(g).toMatchObject({ GroupName: 'db', VpcId: VPC, IpPermissions: [] });
    expect(g.IpPermissionsEgress).toEqual([
      expect.objectContaining({ IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] }),
    ]);
  });

  it('refuses duplicate, reserved and sg-* names and an unknown VPC', async () => {
    const { ec2 } = await boot();
    await createGroup(ec2, 'db');
    expect((await errorOf(createGroup(ec2, 'db'))).name).toBe('InvalidGroup.Duplicate');
    expect((await errorOf(createGroup(ec2, 'default'))).name).toBe('InvalidGroup.Reserved');
    expect((await errorOf(createGroup(ec2, 'sg-x'))).name).toBe('InvalidParameterValue');
    const e = await errorOf(
      ec2.send(new CreateSecurityGroupCommand({ GroupName: 'x', Description: 'x', VpcId: 'vpc-0ffffffff' })),
    );
    expect(e.name).toBe('InvalidVpcID.NotFound');
  });

  it('authorizes rules by group and by CIDR, shows them in DescribeSecurityGroupRules, and revokes by rule or id', async () => {
    const { ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    const clients = await createGroup(ec2, 'clients');
    const out = await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: db,
        IpPermissions: [
          pg(clients),
          { IpProtocol: 'udp', FromPort: 53, ToPort: 54, IpRanges: [{ CidrIp: '10.0.0.0/16' }] },
          { IpProtocol: 'icmp', FromPort: 8, ToPort: -1, IpRanges: [{ CidrIp: '10.0.0.0/24' }] },
        ],
      }),
    );
    expect(out.SecurityGroupRules).toHaveLength(3);
    expect(out.SecurityGroupRules![0]).toMatchObject({
      GroupId: db,
      IsEgress: false,
      IpProtocol: 'tcp',
      FromPort: 5432,
      ToPort: 5432,
      ReferencedGroupInfo: { GroupId: clients },
    });
    const rules = (
      await ec2.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: 'group-id', Values: [db] }] }))
    ).SecurityGroupRules!;
    expect(rules.filter((r) => !r.IsEgress).map((r) => r.CidrIpv4 ?? r.ReferencedGroupInfo?.GroupId)).toEqual(
      [clients, '10.0.0.0/16', '10.0.0.0/24'],
    );
    const g = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [db] }))).SecurityGroups![0]!;
    expect(g.IpPermissions).toHaveLength(3);
    await ec2.send(new RevokeSecurityGroupIngressCommand({ GroupId: db, IpPermissions: [pg(clients)] }));
    const udp = rules.find((r) => r.IpProtocol === 'udp')!.SecurityGroupRuleId!;
    await ec2.send(new RevokeSecurityGroupIngressCommand({ GroupId: db, SecurityGroupRuleIds: [udp] }));
    const left = (
      await ec2.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: 'group-id', Values: [db] }] }))
    ).SecurityGroupRules!;
    expect(left.filter((r) => !r.IsEgress).map((r) => r.IpProtocol)).toEqual(['icmp']);
  });

  it('answers AWS error codes for bad rules and changes nothing', async () => {
    const { sim, ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    const before = JSON.stringify(sim.state.securityGroup(db)!.rules);
    const ingress = (p: object) =>
      errorOf(ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: db, IpPermissions: [p] })));
    expect((await ingress({ IpProtocol: 'tcp', IpRanges: [{ CidrIp: '10.0.0.0/16' }] })).name).toBe(
      'InvalidParameterValue',
    );
    expect(
      (await ingress({ IpProtocol: 'tcp', FromPort: 90, ToPort: 80, IpRanges: [{ CidrIp: '10.0.0.0/16' }] }))
        .name,
    ).toBe('InvalidParameterValue');
    expect((await ingress({ IpProtocol: 'gre', IpRanges: [{ CidrIp: '10.0.0.0/16' }] })).name).toBe(
      'InvalidParameterValue',
    );
    expect((await ingress({ IpProtocol: '-1', IpRanges: [{ CidrIp: '10.0.0.1/16' }] })).name).toBe(
      'InvalidParameterValue',
    );
    expect((await ingress(pg('sg-0fffffffffffffff1'))).name).toBe('InvalidGroup.NotFound');
    expect((await ingress({ IpProtocol: 'tcp', FromPort: 1, ToPort: 2 })).name).toBe(
      'InvalidPermission.Malformed',
    );
    // Egress 0.0.0.0/0 exists already: a duplicate.
    const dup = await errorOf(
      ec2.send(
        new AuthorizeSecurityGroupEgressCommand({
          GroupId: db,
          IpPermissions: [{ IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] }],
        }),
      ),
    );
    expect(dup.name).toBe('InvalidPermission.Duplicate');
    const missing = await errorOf(
      ec2.send(
        new RevokeSecurityGroupIngressCommand({
          GroupId: db,
          IpPermissions: [
            { IpProtocol: 'tcp', FromPort: 1, ToPort: 1, IpRanges: [{ CidrIp: '10.0.0.0/8' }] },
          ],
        }),
      ),
    );
    expect(missing.name).toBe('InvalidPermission.NotFound');
    const badId = await errorOf(
      ec2.send(
        new RevokeSecurityGroupEgressCommand({
          GroupId: db,
          SecurityGroupRuleIds: ['sgr-0fffffffffffffff1'],
        }),
      ),
    );
    expect(badId.name).toBe('InvalidSecurityGroupRuleId.NotFound');
    expect(JSON.stringify(sim.state.securityGroup(db)!.rules)).toBe(before);
  });

  it('caps rules at 60 per direction (RulesPerSecurityGroupLimitExceeded)', async () => {
    const { ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    const many = Array.from({ length: 61 }, (_, i) => ({
      IpProtocol: 'tcp',
      FromPort: 1000 + i,
      ToPort: 1000 + i,
      IpRanges: [{ CidrIp: '10.0.0.0/16' }],
    }));
    const e = await errorOf(
      ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: db, IpPermissions: many })),
    );
    expect(e.name).toBe('RulesPerSecurityGroupLimitExceeded');
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({ GroupId: db, IpPermissions: many.slice(0, 60) }),
    );
  });

  it('refuses to delete a group in use, referenced, or the default group; deletes an unused one', async () => {
    const { sim, ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    const clients = await createGroup(ec2, 'clients');
    await ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: db, IpPermissions: [pg(clients)] }));
    expect((await errorOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: clients })))).name).toBe(
      'DependencyViolation',
    );
    const eni = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, Groups: [db] })))
      .NetworkInterface!.NetworkInterfaceId!;
    expect((await errorOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: db })))).name).toBe(
      'DependencyViolation',
    );
    const def = sim.state.securityGroups().find((g) => g.name === 'default')!.id;
    expect((await errorOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: def })))).name).toBe(
      'CannotDelete',
    );
    expect(
      (await errorOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: 'sg-0fffffffffffffff1' })))).name,
    ).toBe('InvalidGroup.NotFound');
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni }));
    await ec2.send(new DeleteSecurityGroupCommand({ GroupId: db }));
    await ec2.send(new DeleteSecurityGroupCommand({ GroupId: clients }));
    expect(sim.state.securityGroup(db)).toBeUndefined();
  });

  it('ModifyNetworkInterfaceAttribute Groups changes an ENI live and announces it', async () => {
    const { sim, ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    const eni = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, Groups: [SG_NODE] })))
      .NetworkInterface!.NetworkInterfaceId!;
    const seen: SimEvent[] = [];
    sim.state.subscribe((e) => seen.push(e));
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eni, Groups: [db, SG_NODE] }),
    );
    expect(sim.state.eni(eni)!.groups).toEqual([db, SG_NODE]);
    expect(seen).toContainEqual({ type: 'security-groups-changed', eniId: eni, groups: [db, SG_NODE] });
  });

  it('faults: throttled and lost-response rule calls; the SDK retries a throttle; a lost Authorize is a Duplicate on retry', async () => {
    const { sim, ec2 } = await boot();
    const db = await createGroup(ec2, 'db');
    sim.faults.throttleNext(1, 'AuthorizeSecurityGroupIngress');
    const first = await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: db,
        IpPermissions: [{ IpProtocol: 'tcp', FromPort: 1, ToPort: 1, IpRanges: [{ CidrIp: '10.0.0.0/8' }] }],
      }),
    );
    expect(first.$metadata.attempts).toBe(2);
    sim.faults.failNext('AuthorizeSecurityGroupIngress', 'InternalError', { afterApply: true });
    const lost = await errorOf(
      ec2.send(
        new AuthorizeSecurityGroupIngressCommand({
          GroupId: db,
          IpPermissions: [
            { IpProtocol: 'tcp', FromPort: 2, ToPort: 2, IpRanges: [{ CidrIp: '10.0.0.0/8' }] },
          ],
        }),
      ),
    );
    // The first attempt was applied and its answer lost; the retry finds the rule already there.
    expect(lost.name).toBe('InvalidPermission.Duplicate');
    expect(sim.state.securityGroup(db)!.rules.filter((r) => !r.isEgress)).toHaveLength(2);
    sim.faults.failNext('CreateSecurityGroup', 'Unavailable', { count: 5 });
    expect((await errorOf(createGroup(ec2, 'later'))).name).toBe('Unavailable');
  });
});
