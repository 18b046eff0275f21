import { randomUUID } from 'node:crypto';
import { type Ec2Actions, type Ec2Api, isEniManagerError } from '@vpc-cni-kit/eni-manager';
import type { BranchControllerPort, BranchEniRecord, CreatedBranchEni } from '@vpc-cni-kit/sgp-branch';
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
 */
export function ec2BranchPort(ec2: Ec2Api, options: Ec2BranchPortOptions): Ec2BranchPort {
  const subnets = new Map<string, Promise<{ v4?: string | undefined; v6?: string | undefined }>>();

  function subnetCidrs(subnetId: string) {
    let entry = subnets.get(subnetId);
    if (entry === undefined) {
      entry = ec2.call('DescribeSubnets', { SubnetIds: [subnetId] }).then((out) => {
        const s = out.Subnets?.[0];
        return {
          v4: s?.CidrBlock,
          v6: s?.Ipv6CidrBlockAssociationSet?.find((a) => a.Ipv6CidrBlockState?.State === 'associated')
            ?.Ipv6CidrBlock,
        };
      });
      subnets.set(subnetId, entry);
      entry.catch(() => subnets.delete(subnetId));
    }
    return entry;
  }

  async function created(eni: SdkEni): Promise<CreatedBranchEni> {
    if (eni.NetworkInterfaceId === undefined || eni.MacAddress === undefined || eni.SubnetId === undefined)
      throw new TypeError('EC2 described a network interface without id, MAC or subnet');
    const cidrs = await subnetCidrs(eni.SubnetId);
    const ipv6 = eni.Ipv6Addresses?.[0]?.Ipv6Address;
    return {
      eniId: eni.NetworkInterfaceId,
      mac: eni.MacAddress,
      ...(eni.PrivateIpAddress !== undefined ? { ipv4: eni.PrivateIpAddress, subnetCidr: cidrs.v4 } : {}),
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
      if (out.NetworkInterface === undefined)
        throw new TypeError('CreateNetworkInterface returned no interface');
      return created(out.NetworkInterface);
    },

    async associateBranch({ trunkEniId, branchEniId, vlanId }) {
      const out = await ec2.call('AssociateTrunkInterface', {
        TrunkInterfaceId: trunkEniId,
        BranchInterfaceId: branchEniId,
        VlanId: vlanId,
        ClientToken: randomUUID(),
      });
      const associationId = out.InterfaceAssociation?.AssociationId;
      if (associationId === undefined)
        throw new TypeError('AssociateTrunkInterface returned no association id');
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
      const associations = new Map<string, { associationId: string; vlanId: number }>();
      for (let i = 0; i < enis.length; i += ASSOCIATION_BATCH) {
        const ids = enis.slice(i, i + ASSOCIATION_BATCH).map((e) => e.NetworkInterfaceId ?? '');
        let token: string | undefined;
        do {
          const out = await ec2.call('DescribeTrunkInterfaceAssociations', {
            Filters: [{ Name: 'trunk-interface-association.branch-interface-id', Values: ids }],
            MaxResults: 255,
            ...(token === undefined ? {} : { NextToken: token }),
          });
          for (const a of out.InterfaceAssociations ?? [])
            if (a.BranchInterfaceId && a.AssociationId && a.VlanId !== undefined)
              associations.set(a.BranchInterfaceId, { associationId: a.AssociationId, vlanId: a.VlanId });
          token = out.NextToken;
        } while (token !== undefined);
      }
      const records: BranchEniRecord[] = [];
      for (const eni of enis) {
        const podUid = tagValue(eni.TagSet, POD_UID_TAG);
        if (podUid === undefined || eni.NetworkInterfaceId === undefined) continue;
        const a = associations.get(eni.NetworkInterfaceId);
        records.push({
          ...(await created(eni)),
          podUid,
          nodeName,
          ...(a === undefined ? {} : { associationId: a.associationId, vlanId: a.vlanId }),
        });
      }
      return records;
    },
  };
}
