import { Ec2SimError } from '../errors.js';
import type { SecurityGroup, SecurityGroupRule } from '../model.js';
import type { QueryParams } from '../query.js';
import type { Ec2State } from '../state.js';
import type { RuleRequest } from '../state-types.js';
import type { XmlObject } from '../xml.js';
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
import { readTagSpecifications } from './network-interfaces.js';

/** Renders a rule as EC2's `SecurityGroupRule`. */
function renderRule(state: Ec2State, r: SecurityGroupRule): XmlObject {
  const ports = r.ipProtocol === '-1' ? {} : { fromPort: r.fromPort, toPort: r.toPort };
  return {
    securityGroupRuleId: r.id,
    groupId: r.groupId,
    groupOwnerId: state.accountId,
    isEgress: r.isEgress,
    ipProtocol: r.ipProtocol,
    ...ports,
    cidrIpv4: r.cidrIpv4,
    referencedGroupInfo: r.referencedGroupId
      ? { groupId: r.referencedGroupId, userId: state.accountId }
      : undefined,
    description: r.description || undefined,
    tagSet: [],
  };
}

/** Renders a group's rules of one direction as EC2's `IpPermission` list (one entry per rule). */
function permissions(state: Ec2State, g: SecurityGroup, egress: boolean): XmlObject[] {
  return g.rules
    .filter((r) => r.isEgress === egress)
    .map((r) => ({
      ipProtocol: r.ipProtocol,
      ...(r.ipProtocol === '-1' ? {} : { fromPort: r.fromPort, toPort: r.toPort }),
      groups: r.referencedGroupId
        ? [
            {
              groupId: r.referencedGroupId,
              userId: state.accountId,
              description: r.description || undefined,
            },
          ]
        : [],
      ipRanges: r.cidrIpv4 ? [{ cidrIp: r.cidrIpv4, description: r.description || undefined }] : [],
      ipv6Ranges: [],
      prefixListIds: [],
    }));
}

/**
 * Reads `IpPermissions.N` into flat rules (one per CIDR range or group pair). IPv6 ranges and prefix lists
 * are not simulated and are refused with `InvalidParameterValue`.
 */
function readPermissions(params: QueryParams): RuleRequest[] {
  const out: RuleRequest[] = [];
  for (const perm of params.structs('IpPermissions', (p) => ({
    ipProtocol: params.required(`${p}IpProtocol`),
    fromPort: params.int(`${p}FromPort`, -1, 65535),
    toPort: params.int(`${p}ToPort`, -1, 65535),
    ranges: params.structs(`${p}IpRanges`, (r) => ({
      cidr: params.required(`${r}CidrIp`),
      description: params.string(`${r}Description`),
    })),
    groups: params.structs(`${p}Groups`, (g) => ({
      groupId: params.required(`${g}GroupId`),
      description: params.string(`${g}Description`),
      userId: params.string(`${g}UserId`),
    })),
    v6: params.indices(`${p}Ipv6Ranges`).length + params.indices(`${p}PrefixListIds`).length,
  }))) {
    if (perm.v6 > 0) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        'IPv6 ranges and prefix lists are not supported by the simulator.',
      );
    }
    const base = { ipProtocol: perm.ipProtocol, fromPort: perm.fromPort, toPort: perm.toPort };
    if (perm.ranges.length === 0 && perm.groups.length === 0) {
      throw new Ec2SimError(
        'InvalidPermission.Malformed',
        'Each IP permission needs at least one CIDR range or security group.',
      );
    }
    for (const r of perm.ranges) out.push({ ...base, cidrIpv4: r.cidr, description: r.description });
    for (const g of perm.groups) {
      out.push({ ...base, referencedGroupId: g.groupId, description: g.description });
    }
  }
  return out;
}

/** CreateSecurityGroup: GroupName, GroupDescription, VpcId, TagSpecification. */
export const createSecurityGroup: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const name = params.required('GroupName');
  const description = params.required('GroupDescription');
  const vpcId = params.required('VpcId');
  const tags = readTagSpecifications(params, 'security-group');
  params.finish();
  if (dry) dryRunSucceeded();
  const g = state.createSecurityGroup({ name, description, vpcId, tags });
  return {
    return: true,
    groupId: g.id,
    securityGroupArn: `arn:aws:ec2:${state.accountId}:security-group/${g.id}`,
    tagSet: tagSet(g.tags),
  };
};

/** DeleteSecurityGroup: GroupId. */
export const deleteSecurityGroup: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const id = params.required('GroupId');
  params.finish();
  if (dry) dryRunSucceeded();
  state.deleteSecurityGroup(id);
  return { return: true, groupId: id };
};

function authorizeAction(egress: boolean): ActionHandler {
  return ({ state }, params) => {
    const dry = dryRun(params);
    const groupId = params.required('GroupId');
    const rules = readPermissions(params);
    readTagSpecifications(params, 'security-group-rule');
    params.finish();
    if (dry) dryRunSucceeded();
    const added = state.authorizeSecurityGroupRules(groupId, egress, rules);
    return { return: true, securityGroupRuleSet: added.map((r) => renderRule(state, r)) };
  };
}

function revokeAction(egress: boolean): ActionHandler {
  return ({ state }, params) => {
    const dry = dryRun(params);
    const groupId = params.required('GroupId');
    const rules = readPermissions(params);
    const ruleIds = params.list('SecurityGroupRuleId');
    params.finish();
    if (dry) dryRunSucceeded();
    state.revokeSecurityGroupRules(groupId, egress, rules, ruleIds);
    return { return: true };
  };
}

/** AuthorizeSecurityGroupIngress: GroupId and IpPermissions (CIDR ranges and group pairs). */
export const authorizeSecurityGroupIngress = authorizeAction(false);
/** AuthorizeSecurityGroupEgress: GroupId and IpPermissions. */
export const authorizeSecurityGroupEgress = authorizeAction(true);
/** RevokeSecurityGroupIngress: GroupId and IpPermissions or SecurityGroupRuleId.N. */
export const revokeSecurityGroupIngress = revokeAction(false);
/** RevokeSecurityGroupEgress: GroupId and IpPermissions or SecurityGroupRuleId.N. */
export const revokeSecurityGroupEgress = revokeAction(true);

const GROUP_FILTERS = ['group-id', 'group-name', 'vpc-id', 'description', 'owner-id'];

/** DescribeSecurityGroups: `GroupId.N`, `GroupName.N`, filters, MaxResults 5–1000. */
export const describeSecurityGroups: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('GroupId');
  const names = params.list('GroupName');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'GroupIds');
  const all = state.securityGroups();
  const notFound = (missing: string[]) =>
    new Ec2SimError('InvalidGroup.NotFound', `The security group '${missing[0]}' does not exist`);
  const byId = selectByKey(all, ids, (g) => g.id, notFound);
  const byName = selectByKey(all, names, (g) => g.name, notFound);
  const groups = byId.filter((g) => byName.includes(g));
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
      ipPermissions: permissions(state, g, false),
      ipPermissionsEgress: permissions(state, g, true),
      tagSet: tagSet(g.tags),
    })),
    nextToken,
  };
};

const RULE_FILTERS = ['group-id', 'security-group-rule-id'];

/** DescribeSecurityGroupRules: `SecurityGroupRuleId.N`, filters `group-id` / `security-group-rule-id`, MaxResults 5–1000. */
export const describeSecurityGroupRules: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('SecurityGroupRuleId');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'SecurityGroupRuleIds');
  let rules = state.securityGroups().flatMap((g) => g.rules);
  for (const id of ids) {
    if (!rules.some((r) => r.id === id)) {
      throw new Ec2SimError(
        'InvalidSecurityGroupRuleId.NotFound',
        `The security group rule ID '${id}' does not exist`,
      );
    }
  }
  if (ids.length > 0) rules = rules.filter((r) => ids.includes(r.id));
  const matched = applyFilters(rules, filters, RULE_FILTERS, (r, name) =>
    name === 'group-id' ? [r.groupId] : name === 'security-group-rule-id' ? [r.id] : [],
  );
  const { page, nextToken } = paginate(matched, params, {
    min: 5,
    max: 1000,
    action: 'DescribeSecurityGroupRules',
  });
  params.finish();
  if (dry) dryRunSucceeded();
  return { securityGroupRuleSet: page.map((r) => renderRule(state, r)), nextToken };
};
