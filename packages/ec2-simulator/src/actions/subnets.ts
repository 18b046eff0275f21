import { Ec2SimError } from '../errors.js';
import type { Subnet } from '../model.js';
import {
  type ActionHandler,
  applyFilters,
  dryRun,
  dryRunSucceeded,
  paginate,
  rejectIdsWithMaxResults,
  selectByKey,
  tagSet,
} from './common.js';

const SUBNET_FILTERS = [
  'subnet-id',
  'vpc-id',
  'availability-zone',
  'cidr-block',
  'cidr',
  'cidrBlock',
  'state',
  'default-for-az',
  'owner-id',
  'available-ip-address-count',
];

/** DescribeSubnets: `SubnetId.N`, filters (incl. `tag:K`), MaxResults 5–1000. */
export const describeSubnets: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('SubnetId');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'SubnetIds');
  const subnets = selectByKey(
    state.subnets(),
    ids,
    (s) => s.id,
    (missing) => new Ec2SimError('InvalidSubnetID.NotFound', `The subnet ID '${missing[0]}' does not exist`),
  );
  const fields = (s: Subnet, name: string): string[] => {
    switch (name) {
      case 'subnet-id':
        return [s.id];
      case 'vpc-id':
        return [s.vpcId];
      case 'availability-zone':
        return [s.availabilityZone];
      case 'cidr-block':
      case 'cidr':
      case 'cidrBlock':
        return [s.cidrBlock];
      case 'state':
        return ['available'];
      case 'default-for-az':
        return ['false'];
      case 'owner-id':
        return [state.accountId];
      case 'available-ip-address-count':
        return [String(s.ipv4.available)];
      default:
        return [];
    }
  };
  const matched = applyFilters(subnets, filters, SUBNET_FILTERS, fields, (s) => s.tags);
  const { page, nextToken } = paginate(matched, params, { min: 5, max: 1000, action: 'DescribeSubnets' });
  params.finish();
  if (dry) dryRunSucceeded();
  return {
    subnetSet: page.map((s) => ({
      subnetId: s.id,
      subnetArn: `arn:aws:ec2:${s.availabilityZone.slice(0, -1)}:${state.accountId}:subnet/${s.id}`,
      state: 'available',
      ownerId: state.accountId,
      vpcId: s.vpcId,
      cidrBlock: s.cidrBlock,
      ipv6CidrBlockAssociationSet: s.ipv6CidrBlock
        ? [
            {
              associationId: `subnet-cidr-assoc-${s.id.slice(7)}`,
              ipv6CidrBlock: s.ipv6CidrBlock,
              ipv6CidrBlockState: { state: 'associated' },
            },
          ]
        : [],
      availableIpAddressCount: s.ipv4.available,
      availabilityZone: s.availabilityZone,
      defaultForAz: false,
      mapPublicIpOnLaunch: false,
      assignIpv6AddressOnCreation: false,
      tagSet: tagSet(s.tags),
    })),
    nextToken,
  };
};
