import { randomUUID } from 'node:crypto';
import {
  type Ec2Actions,
  type Ec2Api,
  Ec2Fields,
  invalidEc2Response,
  isEniManagerError,
  shapes,
} from '@vpc-cni-kit/eni-manager';
import {
  type BranchControllerPort,
  type BranchEniRecord,
  type CreatedBranchEni,
  MAX_VLAN_ID,
  vlanIdOf,
} from '@vpc-cni-kit/sgp-branch';
import {
  BRANCH_DESCRIPTION,
  clusterTagKey,
  NODE_NAME_TAG,
  ownedTags,
  POD_TAG,
  POD_UID_TAG,
  tagValue,
} from './tags.js';

/** The EC2 half of {@link BranchControllerPort}. */
export type Ec2BranchPort = Pick<
  BranchControllerPort,
  'createBranchEni' | 'associateBranch' | 'disassociateBranch' | 'deleteBranchEni' | 'listBranchEnis'
>;

/** Options of {@link ec2BranchPort}. */
export interface Ec2BranchPortOptions {
  /** The cluster name (the `kubernetes.io/cluster/<name>` tag every branch carries, and `listBranchEnis` requires). */
  readonly clusterName: string;
  /** The EC2 instance id of a node (for the reference's instance tag), when known. */
  readonly instanceIdOf: (nodeName: string) => string | undefined;
}

type SdkEni = NonNullable<Ec2Actions['DescribeNetworkInterfaces'][1]['NetworkInterfaces']>[number];

/** Largest page DescribeNetworkInterfaces returns. */
const PAGE = 1000;
/** Branch ids per DescribeTrunkInterfaceAssociations filter (its filter values are capped at 200). */
const ASSOCIATION_BATCH = 200;

/**
 * The EC2 side of the branch controller over eni-manager's {@link Ec2Api} (the real `@aws-sdk/client-ec2`, with
 * its rate limits, retries and typed errors). A branch ENI is created as the reference creates one (description
 * `aws-k8s-branch-eni`, its owner, cluster and instance tags) plus the node-name and pod-UID tags that
 * `listBranchEnis` finds it by; creates and associations carry a `ClientToken`, so a retried call whose answer
 * was lost does not act twice. An association or ENI already gone counts as done.
 *
 * Every field read from a reply (ENI, subnet and association ids, MAC, addresses, subnet CIDRs, VLAN ids) passes
 * eni-manager's shape checks through its `Ec2Fields`, so a missing or malformed one is an `Ec2InvalidResponse`
 * naming the action and the field before anything is recorded or annotated; a branch ENI whose create reply
 * (or whose subnet's reply) is malformed is deleted, as eni-manager deletes an ENI it cannot trust.
 */
export function ec2BranchPort(ec2: Ec2Api, options: Ec2BranchPortOptions): Ec2BranchPort {
  const subnets = new Map<string, Promise<SubnetCidrs>>();

  function subnetCidrs(subnetId: string): Promise<SubnetCidrs> {
    let entry = subnets.get(subnetId);
    if (entry === undefined) {
      entry = ec2.call('DescribeSubnets', { SubnetIds: [subnetId] }).then((out) => {
        const f = new Ec2Fields('DescribeSubnets');
        const subnet = f.present('Subnets[0]', out.Subnets?.[0]);
        const sf = f.at('Subnets[0]');
        sf.required(
          'SubnetId',
          subnet.SubnetId,
          (v) => (v === subnetId ? v : undefined),
          `subnet ${subnetId}`,
        );
        const v6 = sf.list('Ipv6CidrBlockAssociationSet', subnet.Ipv6CidrBlockAssociationSet, (a, af) =>
          a.Ipv6CidrBlockState?.State === 'associated'
            ? af.required('Ipv6CidrBlock', a.Ipv6CidrBlock, shapes.ipv6Cidr, 'an IPv6 CIDR')
            : undefined,
        );
        return {
          v4: sf.optional('CidrBlock', subnet.CidrBlock, shapes.ipv4Cidr, 'an IPv4 CIDR'),
          v6: v6.find((c) => c !== undefined),
        };
      });
      subnets.set(subnetId, entry);
      entry.catch(() => subnets.delete(subnetId));
    }
    return entry;
  }

  /** The branch as `action`'s reply describes it at `path`, every field read checked (see above). */
  async function created(eni: SdkEni, action: string, path: string): Promise<CreatedBranchEni> {
    const f = new Ec2Fields(action, path);
    const eniId = f.required('NetworkInterfaceId', eni.NetworkInterfaceId, eniIdOf, 'an ENI id');
    const mac = f.required('MacAddress', eni.MacAddress?.toLowerCase(), shapes.mac, 'a MAC address');
    const subnetId = f.required('SubnetId', eni.SubnetId, (v) => shapes.awsId('subnet', v), 'a subnet id');
    const ipv4 = f.optional('PrivateIpAddress', eni.PrivateIpAddress, shapes.ipv4, 'an IPv4 address');
    const ipv6 = f.list('Ipv6Addresses', eni.Ipv6Addresses, (a, af) =>
      af.required('Ipv6Address', a.Ipv6Address, shapes.ipv6, 'an IPv6 address'),
    )[0];
    const cidrs = await subnetCidrs(subnetId);
    // The pod's annotation needs the subnet of each address it carries.
    if (ipv4 !== undefined && cidrs.v4 === undefined)
      throw invalidEc2Response(
        'DescribeSubnets',
        'Subnets[0].CidrBlock',
        `no Subnets[0].CidrBlock for ${subnetId}, whose branch has an IPv4 address`,
      );
    if (ipv6 !== undefined && cidrs.v6 === undefined)
      throw invalidEc2Response(
        'DescribeSubnets',
        'Subnets[0].Ipv6CidrBlockAssociationSet',
        `no associated block in Subnets[0].Ipv6CidrBlockAssociationSet for ${subnetId}, whose branch has an IPv6 address`,
      );
    return {
      eniId,
      mac,
      ...(ipv4 !== undefined ? { ipv4, subnetCidr: cidrs.v4 } : {}),
      ...(ipv6 !== undefined ? { ipv6, subnetV6Cidr: cidrs.v6 } : {}),
    };
  }

  return {
    async createBranchEni({ nodeName, pod, subnetId, groupIds }) {
      const instanceId = options.instanceIdOf(nodeName) ?? '';
      const out = await ec2.call('CreateNetworkInterface', {
        SubnetId: subnetId,
        Groups: [...groupIds],
        Description: BRANCH_DESCRIPTION,
        TagSpecifications: [
          {
            ResourceType: 'network-interface',
            Tags: [
              ...ownedTags(options.clusterName, instanceId, nodeName),
              { Key: POD_UID_TAG, Value: pod.uid },
              { Key: POD_TAG, Value: `${pod.namespace}/${pod.name}` },
            ],
          },
        ],
        // One token per create, the same across eni-manager's retries of it: a lost answer returns the same ENI.
        ClientToken: randomUUID(),
      });
      const eni = new Ec2Fields('CreateNetworkInterface').present('NetworkInterface', out.NetworkInterface);
      try {
        return await created(eni, 'CreateNetworkInterface', 'NetworkInterface');
      } catch (error) {
        // EC2 made a branch that cannot be recorded as it is described: delete it when its id is usable (else
        // the orphan sweep finds it by its node and pod tags), and report the failure.
        const eniId = eni.NetworkInterfaceId;
        if (eniId !== undefined && eniIdOf(eniId) !== undefined)
          await ec2.call('DeleteNetworkInterface', { NetworkInterfaceId: eniId }).catch(() => undefined);
        throw error;
      }
    },

    async associateBranch({ trunkEniId, branchEniId, vlanId }) {
      const out = await ec2.call('AssociateTrunkInterface', {
        TrunkInterfaceId: trunkEniId,
        BranchInterfaceId: branchEniId,
        VlanId: vlanId,
        ClientToken: randomUUID(),
      });
      const f = new Ec2Fields('AssociateTrunkInterface').at('InterfaceAssociation');
      const associationId = f.required(
        'AssociationId',
        out.InterfaceAssociation?.AssociationId,
        associationIdOf,
        'a trunk association id',
      );
      // Whatever else the reply names must be what was asked for (the controller records these, not EC2's).
      const association = out.InterfaceAssociation;
      f.optional('BranchInterfaceId', association?.BranchInterfaceId, same(branchEniId), branchEniId);
      f.optional('TrunkInterfaceId', association?.TrunkInterfaceId, same(trunkEniId), trunkEniId);
      f.optional('VlanId', association?.VlanId, same(vlanId), `VLAN ${vlanId}`);
      return { associationId };
    },

    async disassociateBranch(associationId) {
      try {
        await ec2.call('DisassociateTrunkInterface', {
          AssociationId: associationId,
          ClientToken: randomUUID(),
        });
      } catch (e) {
        if (isEniManagerError(e) && e.awsCode === 'InvalidAssociationID.NotFound') return;
        throw e;
      }
    },

    async deleteBranchEni(eniId) {
      try {
        await ec2.call('DeleteNetworkInterface', { NetworkInterfaceId: eniId });
      } catch (e) {
        if (isEniManagerError(e, 'InvalidNetworkInterfaceID.NotFound')) return;
        throw e;
      }
    },

    async listBranchEnis(nodeName) {
      const enis: SdkEni[] = [];
      let NextToken: string | undefined;
      do {
        const out = await ec2.call('DescribeNetworkInterfaces', {
          Filters: [
            { Name: `tag:${NODE_NAME_TAG}`, Values: [nodeName] },
            { Name: `tag:${clusterTagKey(options.clusterName)}`, Values: ['owned'] },
            { Name: 'description', Values: [BRANCH_DESCRIPTION] },
          ],
          MaxResults: PAGE,
          ...(NextToken === undefined ? {} : { NextToken }),
        });
        enis.push(...(out.NetworkInterfaces ?? []));
        NextToken = out.NextToken;
      } while (NextToken !== undefined);
      // Each ENI's id is checked before it goes into a filter; the rest of it when its record is read.
      const described = new Ec2Fields('DescribeNetworkInterfaces');
      const ids = described.list('NetworkInterfaces', enis, (e, f) =>
        f.required('NetworkInterfaceId', e.NetworkInterfaceId, eniIdOf, 'an ENI id'),
      );
      const associations = new Map<string, { associationId: string; vlanId: number }>();
      for (let i = 0; i < ids.length; i += ASSOCIATION_BATCH) {
        let token: string | undefined;
        do {
          const out = await ec2.call('DescribeTrunkInterfaceAssociations', {
            Filters: [
              {
                Name: 'trunk-interface-association.branch-interface-id',
                Values: ids.slice(i, i + ASSOCIATION_BATCH),
              },
            ],
            MaxResults: 255,
            ...(token === undefined ? {} : { NextToken: token }),
          });
          const read = new Ec2Fields('DescribeTrunkInterfaceAssociations').list(
            'InterfaceAssociations',
            out.InterfaceAssociations,
            (a, f) => ({
              branchEniId: f.required('BranchInterfaceId', a.BranchInterfaceId, eniIdOf, 'an ENI id'),
              associationId: f.required(
                'AssociationId',
                a.AssociationId,
                associationIdOf,
                'a trunk association id',
              ),
              vlanId: f.required('VlanId', a.VlanId, vlanIdOf, `a VLAN id 1..${MAX_VLAN_ID}`),
            }),
          );
          for (const a of read) associations.set(a.branchEniId, a);
          token = out.NextToken;
        } while (token !== undefined);
      }
      const records: BranchEniRecord[] = [];
      for (const [i, eni] of enis.entries()) {
        const podUid = tagValue(eni.TagSet, POD_UID_TAG);
        if (podUid === undefined) continue;
        const a = associations.get(ids[i]!);
        records.push({
          ...(await created(eni, 'DescribeNetworkInterfaces', `NetworkInterfaces[${i}]`)),
          podUid,
          nodeName,
          ...(a === undefined ? {} : { associationId: a.associationId, vlanId: a.vlanId }),
        });
      }
      return records;
    },
  };
}

/** The IPv4 and (associated) IPv6 CIDRs of a subnet, as DescribeSubnets reports them. */
interface SubnetCidrs {
  readonly v4: string | undefined;
  readonly v6: string | undefined;
}

function eniIdOf(value: string): string | undefined {
  return shapes.awsId('eni', value);
}

function associationIdOf(value: string): string | undefined {
  return shapes.awsId('trunk-assoc', value);
}

/** A check accepting only `expected`. */
function same<T>(expected: T): (value: T) => T | undefined {
  return (value) => (value === expected ? value : undefined);
}
