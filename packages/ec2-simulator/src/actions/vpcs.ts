import { Ec2SimError } from '../errors.js';
import type { VpcCidrAssociation } from '../state/vpc-cidrs.js';
import type { XmlObject } from '../xml.js';
import {
  type ActionHandler,
  applyFilters,
  dryRun,
  dryRunSucceeded,
  paginate,
  selectByKey,
} from './common.js';

const VPC_FILTERS = [
  'vpc-id',
  'cidr',
  'cidr-block-association.cidr-block',
  'cidr-block-association.association-id',
  'cidr-block-association.state',
  'state',
  'owner-id',
  'is-default',
];

function renderAssociation(a: VpcCidrAssociation, state: string): XmlObject {
  return { associationId: a.associationId, cidrBlock: a.cidrBlock, cidrBlockState: { state } };
}

/** DescribeVpcs: `VpcId.N`, filters, MaxResults 5–1000; each VPC with its `cidrBlockAssociationSet`. */
export const describeVpcs: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('VpcId');
  const filters = params.filters();
  const vpcs = selectByKey(
    state.vpcs(),
    ids,
    (v) => v.id,
    (missing) => new Ec2SimError('InvalidVpcID.NotFound', `The vpc ID '${missing[0]}' does not exist`),
  );
  const matched = applyFilters(
    vpcs,
    filters,
    VPC_FILTERS,
    (v, name) => {
      const assoc = state.vpcCidrAssociations(v.id);
      switch (name) {
        case 'vpc-id':
          return [v.id];
        case 'cidr':
          return [v.cidrBlocks[0]!];
        case 'cidr-block-association.cidr-block':
          return assoc.map((a) => a.cidrBlock);
        case 'cidr-block-association.association-id':
          return assoc.map((a) => a.associationId);
        case 'cidr-block-association.state':
        case 'state':
          return [name === 'state' ? 'available' : 'associated'];
        case 'owner-id':
          return [state.accountId];
        case 'is-default':
          return ['false'];
        default:
          return [];
      }
    },
    () => new Map(),
  );
  const { page, nextToken } = paginate(matched, params, { min: 5, max: 1000, action: 'DescribeVpcs' });
  params.finish();
  if (dry) dryRunSucceeded();
  return {
    vpcSet: page.map((v) => ({
      vpcId: v.id,
      ownerId: state.accountId,
      state: 'available',
      cidrBlock: v.cidrBlocks[0]!,
      cidrBlockAssociationSet: state.vpcCidrAssociations(v.id).map((a) => renderAssociation(a, 'associated')),
      instanceTenancy: 'default',
      isDefault: false,
      tagSet: [],
    })),
    nextToken,
  };
};

/**
 * AssociateVpcCidrBlock: `VpcId`, `CidrBlock` (IPv4 only; IPAM pools and IPv6 blocks are not simulated). The
 * block is usable as soon as the call returns (the data plane routes it); the reply says `associating`, as EC2's does.
 */
export const associateVpcCidrBlock: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const vpcId = params.required('VpcId');
  const cidrBlock = params.string('CidrBlock');
  const ipv6 = params.bool('AmazonProvidedIpv6CidrBlock');
  params.finish();
  if (ipv6 === true) {
    throw new Ec2SimError('UnsupportedOperation', 'Associating IPv6 blocks is not simulated');
  }
  if (cidrBlock === undefined) {
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter CidrBlock');
  }
  if (dry) dryRunSucceeded();
  const a = state.associateVpcCidr(vpcId, cidrBlock);
  return { vpcId: a.vpcId, cidrBlockAssociation: renderAssociation(a, 'associating') };
};

/** DisassociateVpcCidrBlock: `AssociationId` of a secondary IPv4 block that no subnet uses. */
export const disassociateVpcCidrBlock: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const associationId = params.required('AssociationId');
  params.finish();
  if (dry) dryRunSucceeded();
  const a = state.disassociateVpcCidr(associationId);
  return { vpcId: a.vpcId, cidrBlockAssociation: renderAssociation(a, 'disassociating') };
};
