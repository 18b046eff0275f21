import {
  AssociateVpcCidrBlockCommand,
  DescribeVpcsCommand,
  DisassociateVpcCidrBlockCommand,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { SimEvent } from '../src/index.js';
import { errorOf, NODE, useSimulator, VPC } from './helpers.js';

const boot = useSimulator();

async function imdsCidrs(base: string, mac: string): Promise<string[]> {
  const token = await (
    await fetch(`${base}/latest/api/token`, {
      method: 'PUT',
      headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '60' },
    })
  ).text();
  const r = await fetch(`${base}/latest/meta-data/network/interfaces/macs/${mac}/vpc-ipv4-cidr-blocks`, {
    headers: { 'x-aws-ec2-metadata-token': token },
  });
  return (await r.text()).split('\n');
}

describe('VPC CIDR blocks through the real SDK', () => {
  it('associates a block: the reply, DescribeVpcs, IMDS and the event all show it; disassociating undoes it', async () => {
    const { sim, ec2 } = await boot();
    const seen: SimEvent[] = [];
    sim.state.subscribe((e) => seen.push(e));
    const out = await ec2.send(new AssociateVpcCidrBlockCommand({ VpcId: VPC, CidrBlock: '100.65.0.0/16' }));
    expect(out.VpcId).toBe(VPC);
    expect(out.CidrBlockAssociation).toMatchObject({
      CidrBlock: '100.65.0.0/16',
      CidrBlockState: { State: 'associating' },
    });
    const assoc = out.CidrBlockAssociation!.AssociationId!;
    expect(assoc).toMatch(/^vpc-cidr-assoc-0[0-9a-f]{16}$/);
    expect(seen).toContainEqual({
      type: 'vpc-cidr-associated',
      vpcId: VPC,
      cidrBlock: '100.65.0.0/16',
      associationId: assoc,
    });

    const d = await ec2.send(new DescribeVpcsCommand({ VpcIds: [VPC] }));
    const vpc = d.Vpcs![0]!;
    expect(vpc.CidrBlock).toBe('10.0.0.0/16');
    expect(vpc.CidrBlockAssociationSet!.map((a) => [a.CidrBlock, a.CidrBlockState?.State])).toEqual([
      ['10.0.0.0/16', 'associated'],
      ['100.64.0.0/16', 'associated'],
      ['100.65.0.0/16', 'associated'],
    ]);
    const byFilter = await ec2.send(
      new DescribeVpcsCommand({
        Filters: [{ Name: 'cidr-block-association.association-id', Values: [assoc] }],
      }),
    );
    expect(byFilter.Vpcs!.map((v) => v.VpcId)).toEqual([VPC]);

    const mac = sim.state.eni(sim.state.instance(NODE)!.primaryEniId)!.mac;
    expect(await imdsCidrs(sim.imdsEndpoint(NODE), mac)).toEqual([
      '10.0.0.0/16',
      '100.64.0.0/16',
      '100.65.0.0/16',
    ]);

    const gone = await ec2.send(new DisassociateVpcCidrBlockCommand({ AssociationId: assoc }));
    expect(gone.CidrBlockAssociation).toMatchObject({
      CidrBlock: '100.65.0.0/16',
      CidrBlockState: { State: 'disassociating' },
    });
    expect(seen.at(-1)).toMatchObject({ type: 'vpc-cidr-disassociated', cidrBlock: '100.65.0.0/16' });
    expect(await imdsCidrs(sim.imdsEndpoint(NODE), mac)).toEqual(['10.0.0.0/16', '100.64.0.0/16']);
  });

  it('refuses overlaps, bad sizes, a sixth block, unknown VPCs and associations, the primary block and blocks in use, changing nothing', async () => {
    const { sim, ec2 } = await boot();
    const assoc = (CidrBlock: string, VpcId = VPC) =>
      errorOf(ec2.send(new AssociateVpcCidrBlockCommand({ VpcId, CidrBlock })));
    expect((await assoc('10.0.128.0/17')).name).toBe('CidrConflict');
    expect((await assoc('100.66.0.0/15')).name).toBe('InvalidVpc.Range');
    expect((await assoc('100.66.0.0/29')).name).toBe('InvalidVpc.Range');
    expect((await assoc('nonsense')).name).toBe('InvalidParameterValue');
    expect((await assoc('100.66.0.0/16', 'vpc-0ffffffffffffffff')).name).toBe('InvalidVpcID.NotFound');
    for (const b of ['100.66.0.0/16', '100.67.0.0/16', '100.68.0.0/16']) {
      await ec2.send(new AssociateVpcCidrBlockCommand({ VpcId: VPC, CidrBlock: b }));
    }
    expect((await assoc('100.69.0.0/16')).name).toBe('CidrLimitExceeded');
    expect(sim.state.vpc(VPC)!.cidrBlocks).toHaveLength(5);

    const blocks = sim.state.vpcCidrAssociations(VPC);
    const dis = (AssociationId: string) =>
      errorOf(ec2.send(new DisassociateVpcCidrBlockCommand({ AssociationId })));
    expect((await dis(blocks[0]!.associationId)).name).toBe('OperationNotPermitted');
    // 100.64.0.0/16 holds a subnet of the scenario.
    expect((await dis(blocks[1]!.associationId)).name).toBe('DependencyViolation');
    expect((await dis('vpc-cidr-assoc-0ffffffffffffffff')).name).toBe('InvalidAssociationID.NotFound');
    expect(sim.state.vpc(VPC)!.cidrBlocks).toHaveLength(5);
  });
});
