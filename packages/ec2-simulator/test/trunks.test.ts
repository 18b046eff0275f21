import {
  AssociateTrunkInterfaceCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DeleteNetworkInterfaceCommand,
  DescribeInstanceTypesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeTrunkInterfaceAssociationsCommand,
  DisassociateTrunkInterfaceCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { INSTANCE_TYPES, ManualClock, type SimEvent } from '../src/index.js';
import { errorOf, NODE, SUBNET_A, useSimulator } from './helpers.js';

const boot = useSimulator();

const eni = async (c: EC2Client, type?: 'trunk') =>
  (await c.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A, InterfaceType: type })))
    .NetworkInterface!.NetworkInterfaceId!;

async function trunkOn(c: EC2Client, instanceId = NODE): Promise<string> {
  const t = await eni(c, 'trunk');
  await c.send(
    new AttachNetworkInterfaceCommand({ NetworkInterfaceId: t, InstanceId: instanceId, DeviceIndex: 1 }),
  );
  return t;
}

const associate = (c: EC2Client, branch: string, trunk: string, vlan: number) =>
  c.send(
    new AssociateTrunkInterfaceCommand({ BranchInterfaceId: branch, TrunkInterfaceId: trunk, VlanId: vlan }),
  );

describe('trunk and branch interfaces through the real SDK', () => {
  it('carries the limits table: trunking compatibility and branch counts per type', () => {
    expect(INSTANCE_TYPES.get('m5.large')).toMatchObject({ isTrunkingCompatible: true, branchInterfaces: 9 });
    expect(INSTANCE_TYPES.get('c5.xlarge')).toMatchObject({
      isTrunkingCompatible: true,
      branchInterfaces: 18,
    });
    expect(INSTANCE_TYPES.get('t3.medium')).toMatchObject({
      isTrunkingCompatible: false,
      branchInterfaces: 0,
    });
  });

  it('associates a branch under a VLAN id, shows it as a branch, describes, filters and disassociates it', async () => {
    const { ec2 } = await boot();
    const trunk = await trunkOn(ec2);
    const branch = await eni(ec2);
    const out = await associate(ec2, branch, trunk, 3);
    expect(out.InterfaceAssociation).toMatchObject({
      BranchInterfaceId: branch,
      TrunkInterfaceId: trunk,
      InterfaceProtocol: 'VLAN',
      VlanId: 3,
    });
    const id = out.InterfaceAssociation!.AssociationId!;
    const d = await ec2.send(
      new DescribeTrunkInterfaceAssociationsCommand({
        Filters: [{ Name: 'trunk-interface-association.trunk-interface-id', Values: [trunk] }],
      }),
    );
    expect(d.InterfaceAssociations!.map((a) => a.AssociationId)).toEqual([id]);
    const shown = await ec2.send(
      new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [branch, trunk] }),
    );
    expect(shown.NetworkInterfaces!.map((n) => n.InterfaceType).sort()).toEqual(['branch', 'trunk']);
    await ec2.send(new DisassociateTrunkInterfaceCommand({ AssociationId: id }));
    expect((await ec2.send(new DescribeTrunkInterfaceAssociationsCommand({}))).InterfaceAssociations).toEqual(
      [],
    );
    expect((await errorOf(ec2.send(new DisassociateTrunkInterfaceCommand({ AssociationId: id })))).name).toBe(
      'InvalidAssociationID.NotFound',
    );
  });

  it('answers the AWS error for each misuse and changes nothing', async () => {
    const { sim, ec2 } = await boot();
    // t3.medium cannot carry a trunk.
    const small = sim.state.addInstance({
      type: INSTANCE_TYPES.get('t3.medium')!,
      subnetId: SUBNET_A,
      securityGroupIds: [],
    });
    const t0 = await eni(ec2, 'trunk');
    const incompatible = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: t0, InstanceId: small.id, DeviceIndex: 1 }),
      ),
    );
    expect(incompatible.name).toBe('UnsupportedOperation');
    const trunk = await trunkOn(ec2);
    // A second trunk on the same instance.
    const second = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: t0, InstanceId: NODE, DeviceIndex: 2 }),
      ),
    );
    expect(second.name).toBe('InvalidParameterValue');
    const b1 = await eni(ec2);
    const b2 = await eni(ec2);
    const plain = await eni(ec2);
    await associate(ec2, b1, trunk, 7);
    expect((await errorOf(associate(ec2, b2, trunk, 7))).name).toBe('InvalidParameterValue'); // VLAN in use
    expect((await errorOf(associate(ec2, b1, trunk, 8))).name).toBe('InvalidNetworkInterface.InUse');
    expect((await errorOf(associate(ec2, b2, plain, 8))).name).toBe('InvalidParameterValue'); // not a trunk
    expect((await errorOf(associate(ec2, b2, t0, 8))).name).toBe('IncorrectState'); // trunk not attached
    expect((await errorOf(associate(ec2, b2, trunk, 4095))).name).toBe('InvalidParameterValue');
    expect(
      (
        await errorOf(
          ec2.send(new AssociateTrunkInterfaceCommand({ BranchInterfaceId: b2, TrunkInterfaceId: trunk })),
        )
      ).name,
    ).toBe('MissingParameter');
    expect((await errorOf(associate(ec2, 'eni-0fffffffffffffff1', trunk, 9))).name).toBe(
      'InvalidNetworkInterfaceID.NotFound',
    );
    // A branch cannot be attached; a trunk with branches cannot be deleted.
    const attachBranch = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({ NetworkInterfaceId: b1, InstanceId: NODE, DeviceIndex: 2 }),
      ),
    );
    expect(attachBranch.name).toBe('InvalidNetworkInterface.InUse');
    expect(sim.state.trunkAssociations(trunk).map((a) => a.vlanId)).toEqual([7]);
  });

  it('enforces the per-type branch limit (m5.large: 9) with AttachmentLimitExceeded; the trunk counts as an ENI', async () => {
    const { sim, ec2 } = await boot();
    const trunk = await trunkOn(ec2);
    for (let v = 1; v <= 9; v++) await associate(ec2, await eni(ec2), trunk, v);
    const over = await errorOf(associate(ec2, await eni(ec2), trunk, 10));
    expect(over.name).toBe('AttachmentLimitExceeded');
    // m5.large has 3 ENIs: primary + trunk + one more.
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: await eni(ec2),
        InstanceId: NODE,
        DeviceIndex: 2,
      }),
    );
    const full = await errorOf(
      ec2.send(
        new AttachNetworkInterfaceCommand({
          NetworkInterfaceId: await eni(ec2),
          InstanceId: NODE,
          DeviceIndex: 3,
        }),
      ),
    );
    expect(full.name).toBe('AttachmentLimitExceeded');
    expect(sim.state.attachedEnis(NODE)).toHaveLength(3);
  });

  it('deleting a branch ends its association at once (event); DescribeInstanceTypes is unchanged', async () => {
    const { sim, ec2 } = await boot();
    const trunk = await trunkOn(ec2);
    const branch = await eni(ec2);
    const id = (await associate(ec2, branch, trunk, 5)).InterfaceAssociation!.AssociationId!;
    const seen: SimEvent[] = [];
    sim.state.subscribe((e) => seen.push(e));
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: branch }));
    expect(seen[0]).toEqual({
      type: 'trunk-disassociated',
      associationId: id,
      branchEniId: branch,
      trunkEniId: trunk,
    });
    expect(sim.state.trunkAssociations()).toEqual([]);
    const types = await ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }));
    expect(types.InstanceTypes![0]!.NetworkInfo!.MaximumNetworkInterfaces).toBe(3);
  });

  it('faults: a throttled associate is retried; a lost response is absorbed by the ClientToken; a slow association comes late', async () => {
    const clock = new ManualClock();
    const { sim, ec2 } = await boot({ clock });
    const trunk = await trunkOn(ec2);
    sim.faults.throttleNext(1, 'AssociateTrunkInterface');
    const b1 = await eni(ec2);
    const r1 = await associate(ec2, b1, trunk, 1);
    expect(r1.$metadata.attempts).toBe(2);
    sim.faults.failNext('AssociateTrunkInterface', 'InternalError', { afterApply: true });
    const b2 = await eni(ec2);
    const r2 = await associate(ec2, b2, trunk, 2);
    expect(r2.$metadata.attempts).toBe(2);
    expect(sim.state.trunkAssociations(trunk)).toHaveLength(2);
    sim.faults.add({ kind: 'slow-associate', ms: 2000 });
    const seen: SimEvent[] = [];
    sim.state.subscribe((e) => seen.push(e));
    const b3 = await eni(ec2);
    await associate(ec2, b3, trunk, 3);
    expect(seen.filter((e) => e.type === 'trunk-associated')).toEqual([]);
    await clock.advance(2000);
    expect(
      seen.filter((e) => e.type === 'trunk-associated').map((e) => (e as { vlanId: number }).vlanId),
    ).toEqual([3]);
  });
});
