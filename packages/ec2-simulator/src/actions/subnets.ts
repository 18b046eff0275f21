import { Ec2SimError } from '../errors.js';
import type { SecurityGroup, Subnet } from '../model.js';
import {
  type ActionHandler,
  applyFilters,
  dryRun,
  dryRunSucceeded,
  paginate,
  rejectIdsWithMaxResults,
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
  let subnets = state.subnets();
  if (ids.length > 0) {
    for (const id of ids) {
      if (!subnets.some((s) => s.id === id)) {
        throw new Ec2SimError('InvalidSubnetID.NotFound', `The subnet ID '${id}' does not exist`);
      }
    }
    subnets = subnets.filter((s) => ids.includes(s.id));
  }
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

const GROUP_FILTERS = ['group-id', 'group-name', 'vpc-id', 'description', 'owner-id'];

/** DescribeSecurityGroups: `GroupId.N`, `GroupName.N`, filters, MaxResults 5–1000. */
export const describeSecurityGroups: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('GroupId');
  const names = params.list('GroupName');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'GroupIds');
  let groups = state.securityGroups();
  for (const id of ids) {
    if (!groups.some((g) => g.id === id)) {
      throw new Ec2SimError('InvalidGroup.NotFound', `The security group '${id}' does not exist`);
    }
  }
  for (const n of names) {
    if (!groups.some((g) => g.name === n)) {
      throw new Ec2SimError('InvalidGroup.NotFound', `The security group '${n}' does not exist`);
    }
  }
  if (ids.length > 0) groups = groups.filter((g) => ids.includes(g.id));
  if (names.length > 0) groups = groups.filter((g) => names.includes(g.name));
  const fields = (g: SecurityGroup, name: string): string[] => {
    switch (name) {
      case 'group-id':
        return [g.id];
      case 'group-name':
        return [g.name];
      case 'vpc-id':
        return [g.vpcId];
      case 'description':
        return [g.description];
      case 'owner-id':
        return [state.accountId];
      default:
        return [];
    }
  };
  const matched = applyFilters(groups, filters, GROUP_FILTERS, fields, (g) => g.tags);
  const { page, nextToken } = paginate(matched, params, {
    min: 5,
    max: 1000,
    action: 'DescribeSecurityGroups',
  });
  params.finish();
  if (dry) dryRunSucceeded();
  return {
    securityGroupInfo: page.map((g) => ({
      ownerId: state.accountId,
      groupId: g.id,
      groupName: g.name,
      groupDescription: g.description,
      vpcId: g.vpcId,
      ipPermissions: [],
      ipPermissionsEgress: [
        {
          ipProtocol: '-1',
          groups: [],
          ipRanges: [{ cidrIp: '0.0.0.0/0' }],
          ipv6Ranges: [],
          prefixListIds: [],
        },
      ],
      tagSet: tagSet(g.tags),
    })),
    nextToken,
  };
};
