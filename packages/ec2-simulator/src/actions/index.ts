import {
  assignIpv6Addresses,
  assignPrivateIpAddresses,
  unassignIpv6Addresses,
  unassignPrivateIpAddresses,
} from './addresses.js';
import { attachNetworkInterface, detachNetworkInterface } from './attachments.js';
import type { ActionSpec } from './common.js';
import { describeInstances, describeInstanceTypes } from './instances.js';
import {
  createNetworkInterface,
  deleteNetworkInterface,
  describeNetworkInterfaces,
  modifyNetworkInterfaceAttribute,
} from './network-interfaces.js';
import {
  authorizeSecurityGroupEgress,
  authorizeSecurityGroupIngress,
  createSecurityGroup,
  deleteSecurityGroup,
  describeSecurityGroupRules,
  describeSecurityGroups,
  revokeSecurityGroupEgress,
  revokeSecurityGroupIngress,
} from './security-groups.js';
import { describeSubnets } from './subnets.js';
import { createTags, deleteTags } from './tags.js';
import {
  associateTrunkInterface,
  describeTrunkInterfaceAssociations,
  disassociateTrunkInterface,
} from './trunks.js';
import { associateVpcCidrBlock, describeVpcs, disassociateVpcCidrBlock } from './vpcs.js';

/** Every action the simulator implements, with its throttling family. */
export const ACTIONS: ReadonlyMap<string, ActionSpec> = new Map<string, ActionSpec>([
  ['DescribeInstances', { handler: describeInstances, family: 'describe', unboundedDescribe: true }],
  ['DescribeInstanceTypes', { handler: describeInstanceTypes, family: 'describe' }],
  [
    'DescribeNetworkInterfaces',
    { handler: describeNetworkInterfaces, family: 'describe', unboundedDescribe: true },
  ],
  ['DescribeSubnets', { handler: describeSubnets, family: 'describe' }],
  [
    'DescribeSecurityGroups',
    { handler: describeSecurityGroups, family: 'describe', unboundedDescribe: true },
  ],
  ['CreateNetworkInterface', { handler: createNetworkInterface, family: 'eni-lifecycle' }],
  ['DeleteNetworkInterface', { handler: deleteNetworkInterface, family: 'eni-lifecycle' }],
  ['AttachNetworkInterface', { handler: attachNetworkInterface, family: 'mutating' }],
  ['DetachNetworkInterface', { handler: detachNetworkInterface, family: 'mutating' }],
  ['ModifyNetworkInterfaceAttribute', { handler: modifyNetworkInterfaceAttribute, family: 'modify-eni' }],
  ['AssignPrivateIpAddresses', { handler: assignPrivateIpAddresses, family: 'ipv4-assign' }],
  ['UnassignPrivateIpAddresses', { handler: unassignPrivateIpAddresses, family: 'ipv4-assign' }],
  ['AssignIpv6Addresses', { handler: assignIpv6Addresses, family: 'ipv6-assign' }],
  ['UnassignIpv6Addresses', { handler: unassignIpv6Addresses, family: 'ipv6-assign' }],
  ['DescribeSecurityGroupRules', { handler: describeSecurityGroupRules, family: 'describe' }],
  ['CreateSecurityGroup', { handler: createSecurityGroup, family: 'mutating' }],
  ['DeleteSecurityGroup', { handler: deleteSecurityGroup, family: 'mutating' }],
  ['AuthorizeSecurityGroupIngress', { handler: authorizeSecurityGroupIngress, family: 'mutating' }],
  ['AuthorizeSecurityGroupEgress', { handler: authorizeSecurityGroupEgress, family: 'mutating' }],
  ['RevokeSecurityGroupIngress', { handler: revokeSecurityGroupIngress, family: 'mutating' }],
  ['RevokeSecurityGroupEgress', { handler: revokeSecurityGroupEgress, family: 'mutating' }],
  ['AssociateTrunkInterface', { handler: associateTrunkInterface, family: 'mutating' }],
  ['DisassociateTrunkInterface', { handler: disassociateTrunkInterface, family: 'mutating' }],
  ['DescribeTrunkInterfaceAssociations', { handler: describeTrunkInterfaceAssociations, family: 'describe' }],
  ['DescribeVpcs', { handler: describeVpcs, family: 'describe' }],
  ['AssociateVpcCidrBlock', { handler: associateVpcCidrBlock, family: 'mutating' }],
  ['DisassociateVpcCidrBlock', { handler: disassociateVpcCidrBlock, family: 'mutating' }],
  ['CreateTags', { handler: createTags, family: 'tags' }],
  ['DeleteTags', { handler: deleteTags, family: 'tags' }],
]);

export type { ActionContext, ActionFamily, ActionHandler, ActionSpec } from './common.js';
