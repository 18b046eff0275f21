import { type Ec2Simulator, startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import {
  createEc2Api,
  createInstanceLimitsSource,
  type Ec2Actions,
  type Ec2Api,
} from '@vpc-cni-kit/eni-manager';
import { editedEc2Api } from '@vpc-cni-kit/eni-manager/testing';
import { type BranchClusterView, BranchController } from '@vpc-cni-kit/sgp-branch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeInstance, ec2BranchPort, ensureTrunk } from '../src/index.js';

import { CLUSTER, NODE_SG, DB_CLIENT_SG as POD_SG, SUBNET, VPC } from './support/world.js';

// The EC2 side of the world's first node, without the Kubernetes side: the port is driven directly.
const INSTANCE = 'i-0a000000000000001';
const NODE = 'node-1';

// ec2-simulator cannot answer with a malformed reply, so the code under test talks to it through eni-manager's
// `editedEc2Api`: every call goes to the simulator over HTTP through the real SDK, and the parsed output of one
// action is edited before the controller sees it (a hand-written port implementation, not a mock of our modules).
let sim: Ec2Simulator;
let ec2: Ec2Api;

beforeEach(async () => {
  sim = await startEc2Simulator({
    rateLimits: false,
    scenario: {
      vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16'] }],
      subnets: [{ id: SUBNET, cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' }],
      securityGroups: [
        { id: NODE_SG, name: 'node', description: 'nodes' },
        { id: POD_SG, name: 'pod', description: 'pods' },
      ],
      instances: [{ id: INSTANCE, instanceType: 'm5.large', subnetId: SUBNET, securityGroupIds: [NODE_SG] }],
    },
  });
  ec2 = createEc2Api({
    region: sim.region,
    endpoint: sim.endpoint,
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
});

afterEach(async () => {
  ec2.destroy();
  await sim.close();
});

/** What eni-manager's `Ec2InvalidResponse` for `field` of `action` looks like. */
function invalid(action: string, field: string) {
  return {
    code: 'Ec2InvalidResponse',
    action,
    field,
    retryable: false,
    message: expect.stringContaining(field),
  };
}

async function trunk(): Promise<string> {
  const facts = await describeInstance(ec2, INSTANCE);
  return ensureTrunk(ec2, facts, {
    clusterName: CLUSTER,
    nodeName: NODE,
    limits: createInstanceLimitsSource(ec2, { publishedTable: true }),
  });
}

function portOver(api: Ec2Api) {
  return ec2BranchPort(api, { clusterName: CLUSTER, instanceIdOf: () => INSTANCE });
}

const pod = { namespace: 'default', name: 'db-client', uid: 'uid-1' };
const createRequest = { nodeName: NODE, pod, subnetId: SUBNET, groupIds: [POD_SG] };

function branchIds(): string[] {
  return sim.state
    .enis()
    .filter((e) => e.description === 'aws-k8s-branch-eni')
    .map((e) => e.id);
}

type NetworkInterface = NonNullable<Ec2Actions['CreateNetworkInterface'][1]['NetworkInterface']>;

describe('the controller reads EC2 replies through eni-manager’s shape checks', () => {
  const badCreate: [string, string, (ni: NetworkInterface) => void][] = [
    ['a MAC that is not one', 'NetworkInterface.MacAddress', (ni) => (ni.MacAddress = '02:00:00:00:00')],
    ['no MAC', 'NetworkInterface.MacAddress', (ni) => (ni.MacAddress = undefined)],
    ['a subnet id of another kind', 'NetworkInterface.SubnetId', (ni) => (ni.SubnetId = VPC)],
    [
      'a private address out of range',
      'NetworkInterface.PrivateIpAddress',
      (ni) => (ni.PrivateIpAddress = '10.0.0.256'),
    ],
    [
      'an IPv6 address that is not one',
      'NetworkInterface.Ipv6Addresses[0].Ipv6Address',
      (ni) => (ni.Ipv6Addresses = [{ Ipv6Address: '2001:db8::g' }]),
    ],
  ];
  for (const [what, field, edit] of badCreate) {
    it(`CreateNetworkInterface with ${what}: Ec2InvalidResponse, and the branch is deleted`, async () => {
      const port = portOver(
        editedEc2Api(ec2, 'CreateNetworkInterface', (out) => edit(out.NetworkInterface!)),
      );
      await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
        invalid('CreateNetworkInterface', field),
      );
      expect(branchIds()).toEqual([]);
    });
  }

  it('CreateNetworkInterface with an ENI id that is not one: Ec2InvalidResponse (nothing to delete it by)', async () => {
    const port = portOver(
      editedEc2Api(
        ec2,
        'CreateNetworkInterface',
        (out) => (out.NetworkInterface!.NetworkInterfaceId = 'ni-0123abcd'),
      ),
    );
    await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
      invalid('CreateNetworkInterface', 'NetworkInterface.NetworkInterfaceId'),
    );
    // Tagged with its node and pod: the orphan sweep finds it.
    const records = await portOver(ec2).listBranchEnis(NODE);
    expect(records.map((r) => r.podUid)).toEqual([pod.uid]);
  });

  it('a DescribeSubnets reply with a CIDR that has host bits: Ec2InvalidResponse, and the branch is deleted', async () => {
    const port = portOver(
      editedEc2Api(ec2, 'DescribeSubnets', (out) => (out.Subnets![0]!.CidrBlock = '10.0.0.1/24')),
    );
    await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
      invalid('DescribeSubnets', 'Subnets[0].CidrBlock'),
    );
    expect(branchIds()).toEqual([]);
  });

  it('a DescribeSubnets reply without the IPv4 CIDR of an IPv4 branch: Ec2InvalidResponse, branch deleted', async () => {
    const port = portOver(
      editedEc2Api(ec2, 'DescribeSubnets', (out) => (out.Subnets![0]!.CidrBlock = undefined)),
    );
    await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
      invalid('DescribeSubnets', 'Subnets[0].CidrBlock'),
    );
    expect(branchIds()).toEqual([]);
  });

  it('an IPv6 branch in a subnet DescribeSubnets gives no IPv6 block: Ec2InvalidResponse, branch deleted', async () => {
    const port = portOver(
      editedEc2Api(ec2, 'CreateNetworkInterface', (out) => {
        out.NetworkInterface!.Ipv6Addresses = [{ Ipv6Address: '2001:db8::5' }];
      }),
    );
    await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
      invalid('DescribeSubnets', 'Subnets[0].Ipv6CidrBlockAssociationSet'),
    );
    expect(branchIds()).toEqual([]);
  });

  it('a DescribeSubnets reply about another subnet: Ec2InvalidResponse', async () => {
    const port = portOver(
      editedEc2Api(ec2, 'DescribeSubnets', (out) => (out.Subnets![0]!.SubnetId = 'subnet-0f000000000000009')),
    );
    await expect(port.createBranchEni(createRequest)).rejects.toMatchObject(
      invalid('DescribeSubnets', 'Subnets[0].SubnetId'),
    );
    expect(branchIds()).toEqual([]);
  });

  const badAssociate: [
    string,
    string,
    (a: NonNullable<Ec2Actions['AssociateTrunkInterface'][1]['InterfaceAssociation']>) => void,
  ][] = [
    ['an association id of another kind', 'AssociationId', (a) => (a.AssociationId = 'eni-attach-0123abcd')],
    ['no association id', 'AssociationId', (a) => (a.AssociationId = undefined)],
    ['another VLAN than asked for', 'VlanId', (a) => (a.VlanId = 4095)],
    [
      'another branch than asked for',
      'BranchInterfaceId',
      (a) => (a.BranchInterfaceId = 'eni-0f000000000000009'),
    ],
  ];
  for (const [what, field, edit] of badAssociate) {
    it(`AssociateTrunkInterface with ${what}: Ec2InvalidResponse`, async () => {
      const trunkEniId = await trunk();
      const branch = await portOver(ec2).createBranchEni(createRequest);
      const port = portOver(
        editedEc2Api(ec2, 'AssociateTrunkInterface', (out) => edit(out.InterfaceAssociation!)),
      );
      await expect(
        port.associateBranch({ trunkEniId, branchEniId: branch.eniId, vlanId: 1 }),
      ).rejects.toMatchObject(invalid('AssociateTrunkInterface', `InterfaceAssociation.${field}`));
    });
  }

  const badAssociations: [
    string,
    string,
    (
      a: NonNullable<Ec2Actions['DescribeTrunkInterfaceAssociations'][1]['InterfaceAssociations']>[number],
    ) => void,
  ][] = [
    ['VLAN 0', 'VlanId', (a) => (a.VlanId = 0)],
    ['VLAN 4095', 'VlanId', (a) => (a.VlanId = 4095)],
    ['a fractional VLAN', 'VlanId', (a) => (a.VlanId = 1.5)],
    ['no VLAN', 'VlanId', (a) => (a.VlanId = undefined)],
    ['an association id of another kind', 'AssociationId', (a) => (a.AssociationId = 'assoc-0123abcd')],
    ['a branch id of another kind', 'BranchInterfaceId', (a) => (a.BranchInterfaceId = SUBNET)],
  ];
  for (const [what, field, edit] of badAssociations) {
    it(`DescribeTrunkInterfaceAssociations with ${what}: listBranchEnis fails with Ec2InvalidResponse`, async () => {
      const trunkEniId = await trunk();
      const branch = await portOver(ec2).createBranchEni(createRequest);
      await portOver(ec2).associateBranch({ trunkEniId, branchEniId: branch.eniId, vlanId: 7 });
      const port = portOver(
        editedEc2Api(ec2, 'DescribeTrunkInterfaceAssociations', (out) =>
          edit(out.InterfaceAssociations![0]!),
        ),
      );
      await expect(port.listBranchEnis(NODE)).rejects.toMatchObject(
        invalid('DescribeTrunkInterfaceAssociations', `InterfaceAssociations[0].${field}`),
      );
      // The same reply unedited: the record with its association.
      const [record] = await portOver(ec2).listBranchEnis(NODE);
      expect(record).toMatchObject({ eniId: branch.eniId, vlanId: 7, podUid: pod.uid });
      expect(record?.associationId).toMatch(/^trunk-assoc-/);
    });
  }

  it('DescribeNetworkInterfaces listing a branch with a bad MAC: listBranchEnis fails with Ec2InvalidResponse', async () => {
    await portOver(ec2).createBranchEni(createRequest);
    const port = portOver(
      editedEc2Api(
        ec2,
        'DescribeNetworkInterfaces',
        (out) => (out.NetworkInterfaces![0]!.MacAddress = 'zz:00:00:00:00:00'),
      ),
    );
    await expect(port.listBranchEnis(NODE)).rejects.toMatchObject(
      invalid('DescribeNetworkInterfaces', 'NetworkInterfaces[0].MacAddress'),
    );
  });

  it('DescribeInstances with a negative device index or a bad instance type: Ec2InvalidResponse', async () => {
    const negative = editedEc2Api(ec2, 'DescribeInstances', (out) => {
      out.Reservations![0]!.Instances![0]!.NetworkInterfaces![0]!.Attachment!.DeviceIndex = -1;
    });
    await expect(describeInstance(negative, INSTANCE)).rejects.toMatchObject(
      invalid('DescribeInstances', 'Reservations[].Instances[].NetworkInterfaces[0].Attachment.DeviceIndex'),
    );
    const badType = editedEc2Api(ec2, 'DescribeInstances', (out) => {
      out.Reservations![0]!.Instances![0]!.InstanceType = 'M5 Large' as never;
    });
    await expect(describeInstance(badType, INSTANCE)).rejects.toMatchObject(
      invalid('DescribeInstances', 'Reservations[].Instances[].InstanceType'),
    );
  });

  it('AttachNetworkInterface of the trunk with a bad attachment id: Ec2InvalidResponse before it is modified', async () => {
    const facts = await describeInstance(ec2, INSTANCE);
    const api = editedEc2Api(ec2, 'AttachNetworkInterface', (out) => (out.AttachmentId = 'attach-0123abcd'));
    await expect(
      ensureTrunk(api, facts, {
        clusterName: CLUSTER,
        nodeName: NODE,
        limits: createInstanceLimitsSource(ec2, { publishedTable: true }),
      }),
    ).rejects.toMatchObject(invalid('AttachNetworkInterface', 'AttachmentId'));
    // The trunk is attached; the next pass takes it as the node's trunk.
    expect((await describeInstance(ec2, INSTANCE)).trunkEniId).toMatch(/^eni-/);
  });
});

describe('a malformed reply stops the branch controller before it annotates the pod', () => {
  /**
   * One pass of sgp-branch's `BranchController` over this port on `api` (and a hand-written Kubernetes half that
   * records annotations), for one pod selected by a policy on a node with a trunk.
   */
  async function reconcileOver(api: Ec2Api, annotations: string[]) {
    const kube = {
      annotatePod: async (_: unknown, value: string) => {
        annotations.push(value);
      },
      setPodEniCapacity: async () => undefined,
    };
    const controller = new BranchController({ ...portOver(api), ...kube }, { cooldownMs: 0 });
    const view: BranchClusterView = {
      nodes: [
        {
          name: NODE,
          subnetId: SUBNET,
          trunkEniId: await trunk(),
          branchLimit: 9,
          instanceGroupIds: [NODE_SG],
        },
      ],
      pods: [
        {
          ...pod,
          nodeName: NODE,
          labels: { app: 'db-client' },
          serviceAccountLabels: {},
          requestsBranch: true,
        },
      ],
      policies: [
        {
          namespace: 'default',
          name: 'db',
          podSelector: { matchLabels: { app: 'db-client' } },
          groupIds: [POD_SG],
        },
      ],
    };
    const [outcome] = await controller.reconcile(view, 0);
    return outcome;
  }

  it('a bad MAC in CreateNetworkInterface: the pod’s outcome is failed, nothing annotated, no branch left', async () => {
    const annotations: string[] = [];
    const garbled = editedEc2Api(ec2, 'CreateNetworkInterface', (out) => {
      out.NetworkInterface!.MacAddress = 'not-a-mac';
    });
    const outcome = await reconcileOver(garbled, annotations);
    expect(outcome?.status).toBe('failed');
    expect(outcome?.error?.code).toBe('CLOUD');
    expect(outcome?.error?.cause).toMatchObject(
      invalid('CreateNetworkInterface', 'NetworkInterface.MacAddress'),
    );
    expect(annotations).toEqual([]);
    expect(branchIds()).toEqual([]);

    // With EC2 answering properly, a controller gives the pod its branch (the trunk found, not made again).
    const ok = await reconcileOver(ec2, annotations);
    expect(ok?.status, String(ok?.error)).toBe('annotated');
    expect(annotations).toHaveLength(1);
    expect(JSON.parse(annotations[0]!)[0]).toMatchObject({ vlanId: 1, subnetCidr: '10.0.0.0/24' });
  });

  it('a bad association id in AssociateTrunkInterface: failed, nothing annotated, the branch deleted', async () => {
    const annotations: string[] = [];
    const garbled = editedEc2Api(ec2, 'AssociateTrunkInterface', (out) => {
      out.InterfaceAssociation!.AssociationId = 'trunk-assoc-XYZ';
    });
    const outcome = await reconcileOver(garbled, annotations);
    expect(outcome?.status).toBe('failed');
    expect(outcome?.error?.cause).toMatchObject(
      invalid('AssociateTrunkInterface', 'InterfaceAssociation.AssociationId'),
    );
    expect(annotations).toEqual([]);
    // The controller's own undo (disassociate by the listed association, delete) leaves nothing behind.
    expect(branchIds()).toEqual([]);
    expect(sim.state.trunkAssociations()).toEqual([]);
  });
});
