import { Ec2SimError } from '../errors.js';
import { formatIpv4Cidr, parseIpv4Cidr } from '../ip.js';
import type { SecurityGroup, SecurityGroupRule } from '../model.js';
import type { CreateSecurityGroupRequest, RuleRequest } from '../state-types.js';
import type { StateStore } from './store.js';

/** Rules per direction per group (EC2's default quota). */
export const RULES_PER_DIRECTION = 60;

const NAMED: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '1': 'icmp', all: '-1' };

type RuleShape = Omit<SecurityGroupRule, 'id' | 'groupId' | 'description'>;

const sameRule = (a: RuleShape, b: RuleShape): boolean =>
  a.isEgress === b.isEgress &&
  a.ipProtocol === b.ipProtocol &&
  a.fromPort === b.fromPort &&
  a.toPort === b.toPort &&
  a.cidrIpv4 === b.cidrIpv4 &&
  a.referencedGroupId === b.referencedGroupId;

function port(v: number | undefined, min: number, what: string): number {
  if (v === undefined || !Number.isInteger(v) || v < min || v > 65535) {
    throw new Ec2SimError('InvalidParameterValue', `Invalid ${what} ${String(v)}.`);
  }
  return v;
}

/** Checks and normalises one rule of `group` (protocol names, ports, peer). Throws before any change. */
export function normaliseRule(
  store: StateStore,
  group: SecurityGroup,
  isEgress: boolean,
  req: RuleRequest,
): RuleShape & { description: string } {
  const raw = req.ipProtocol.toLowerCase();
  const ipProtocol = NAMED[raw] ?? raw;
  let fromPort = -1;
  let toPort = -1;
  if (ipProtocol === 'tcp' || ipProtocol === 'udp') {
    if (req.fromPort === undefined || req.toPort === undefined) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        'Invalid value. Must specify both from and to ports with TCP/UDP.',
      );
    }
    fromPort = port(req.fromPort, 0, 'from port');
    toPort = port(req.toPort, 0, 'to port');
    if (fromPort > toPort) {
      throw new Ec2SimError('InvalidParameterValue', `Invalid port range ${fromPort}-${toPort}.`);
    }
  } else if (ipProtocol === 'icmp') {
    fromPort = req.fromPort ?? -1;
    toPort = req.toPort ?? -1;
    if (![fromPort, toPort].every((v) => Number.isInteger(v) && v >= -1 && v <= 255)) {
      throw new Ec2SimError('InvalidParameterValue', `Invalid ICMP type/code ${fromPort}/${toPort}.`);
    }
  } else if (ipProtocol !== '-1' && !(/^\d{1,3}$/.test(ipProtocol) && Number(ipProtocol) <= 255)) {
    throw new Ec2SimError('InvalidParameterValue', `Invalid IP protocol '${req.ipProtocol}'.`);
  }
  const peers = [req.cidrIpv4, req.referencedGroupId].filter((p) => p !== undefined).length;
  if (peers !== 1) {
    throw new Ec2SimError(
      'InvalidPermission.Malformed',
      'Each rule names exactly one peer: a CIDR range or a security group.',
    );
  }
  let cidrIpv4: string | undefined;
  if (req.cidrIpv4 !== undefined) {
    const c = parseIpv4Cidr(req.cidrIpv4);
    if (!c || formatIpv4Cidr(c) !== req.cidrIpv4) {
      throw new Ec2SimError('InvalidParameterValue', `CIDR block ${req.cidrIpv4} is malformed`);
    }
    cidrIpv4 = req.cidrIpv4;
  }
  if (req.referencedGroupId !== undefined) {
    const ref = store.requireGroup(req.referencedGroupId);
    if (ref.vpcId !== group.vpcId) {
      throw new Ec2SimError(
        'InvalidGroup.NotFound',
        `The security group '${ref.id}' does not exist in VPC '${group.vpcId}'`,
      );
    }
  }
  const description = req.description ?? '';
  if (description.length > 255) {
    throw new Ec2SimError('InvalidParameterValue', 'Rule description must be at most 255 characters.');
  }
  return {
    isEgress,
    ipProtocol,
    fromPort,
    toPort,
    cidrIpv4,
    referencedGroupId: req.referencedGroupId,
    description,
  };
}

/**
 * Adds a group as a scenario declares it: no ingress, egress to everywhere (the VPC's `default` group also
 * lets its own members in, as EC2's does).
 */
export function addSecurityGroup(store: StateStore, g: Omit<SecurityGroup, 'rules'>): SecurityGroup {
  store.ids.reserve(g.id);
  const group: SecurityGroup = { ...g, rules: [] };
  store.groups.set(g.id, group);
  const defaults: RuleRequest[] = [{ ipProtocol: '-1', cidrIpv4: '0.0.0.0/0' }];
  authorize(store, g.id, true, defaults, false);
  if (g.name === 'default')
    authorize(store, g.id, false, [{ ipProtocol: '-1', referencedGroupId: g.id }], false);
  return group;
}

/** CreateSecurityGroup: a new group with the default egress-allow rule and no ingress. */
export function createSecurityGroup(store: StateStore, req: CreateSecurityGroupRequest): SecurityGroup {
  if (!store.vpcs.has(req.vpcId)) {
    throw new Ec2SimError('InvalidVpcID.NotFound', `The vpc ID '${req.vpcId}' does not exist`);
  }
  if (req.name.length === 0 || req.name.length > 255) {
    throw new Ec2SimError('InvalidParameterValue', 'Group name must be 1 to 255 characters.');
  }
  if (req.name.toLowerCase().startsWith('sg-')) {
    throw new Ec2SimError('InvalidParameterValue', "Group names may not be in the format 'sg-*'.");
  }
  if (req.name === 'default') {
    throw new Ec2SimError('InvalidGroup.Reserved', "The security group 'default' is reserved.");
  }
  if (req.description.length > 255) {
    throw new Ec2SimError('InvalidParameterValue', 'Group description must be at most 255 characters.');
  }
  if ([...store.groups.values()].some((g) => g.vpcId === req.vpcId && g.name === req.name)) {
    throw new Ec2SimError(
      'InvalidGroup.Duplicate',
      `The security group '${req.name}' already exists for VPC '${req.vpcId}'`,
    );
  }
  const tags = store.checkTags(req.tags ?? []);
  const group = addSecurityGroup(store, {
    id: store.ids.id('sg'),
    name: req.name,
    description: req.description,
    vpcId: req.vpcId,
    tags,
  });
  store.emit({ type: 'security-group-rules-changed', groupId: group.id, change: 'created' });
  return group;
}

/**
 * DeleteSecurityGroup: not the VPC's `default` group (`CannotDelete`), not while an interface uses it or
 * another group's rule names it (`DependencyViolation`).
 */
export function deleteSecurityGroup(store: StateStore, groupId: string): void {
  const g = store.requireGroup(groupId);
  if (g.name === 'default') {
    throw new Ec2SimError('CannotDelete', `The default security group '${g.id}' cannot be deleted.`);
  }
  store.settle();
  const user = [...store.enis.values()].find((e) => e.groups.includes(g.id));
  if (user) {
    throw new Ec2SimError(
      'DependencyViolation',
      `resource ${g.id} has a dependent object (network interface ${user.id})`,
    );
  }
  const referrer = [...store.groups.values()].find(
    (o) => o.id !== g.id && o.rules.some((r) => r.referencedGroupId === g.id),
  );
  if (referrer) {
    throw new Ec2SimError(
      'DependencyViolation',
      `resource ${g.id} has a dependent object (a rule of security group ${referrer.id})`,
    );
  }
  store.groups.delete(g.id);
  store.emit({ type: 'security-group-rules-changed', groupId: g.id, change: 'deleted' });
}

/**
 * AuthorizeSecurityGroupIngress/Egress: every rule is checked (duplicates, the per-direction quota) before
 * any is added; returns the new rules.
 */
export function authorize(
  store: StateStore,
  groupId: string,
  isEgress: boolean,
  rules: readonly RuleRequest[],
  announce = true,
): SecurityGroupRule[] {
  const g = store.requireGroup(groupId);
  if (rules.length === 0) {
    throw new Ec2SimError('MissingParameter', 'The request must contain the parameter IpPermissions.');
  }
  const shaped = rules.map((r) => normaliseRule(store, g, isEgress, r));
  const all: RuleShape[] = [...g.rules];
  for (const r of shaped) {
    if (all.some((x) => sameRule(x, r))) {
      throw new Ec2SimError(
        'InvalidPermission.Duplicate',
        `The specified rule already exists in security group ${g.id}.`,
      );
    }
    all.push(r);
  }
  if (all.filter((r) => r.isEgress === isEgress).length > RULES_PER_DIRECTION) {
    throw new Ec2SimError(
      'RulesPerSecurityGroupLimitExceeded',
      `The maximum number of rules per security group (${RULES_PER_DIRECTION} per direction) has been reached.`,
    );
  }
  const added = shaped.map((r) => ({ ...r, id: store.ids.id('sgr'), groupId: g.id }));
  g.rules = [...g.rules, ...added];
  if (announce) store.emit({ type: 'security-group-rules-changed', groupId: g.id, change: 'rules' });
  return added;
}

/**
 * RevokeSecurityGroupIngress/Egress, by rule description or by rule id; every named rule must exist
 * (`InvalidPermission.NotFound`, `InvalidSecurityGroupRuleId.NotFound`) before any is removed.
 */
export function revoke(
  store: StateStore,
  groupId: string,
  isEgress: boolean,
  rules: readonly RuleRequest[],
  ruleIds: readonly string[],
): void {
  const g = store.requireGroup(groupId);
  if (rules.length === 0 && ruleIds.length === 0) {
    throw new Ec2SimError(
      'MissingParameter',
      'The request must contain the parameter IpPermissions or SecurityGroupRuleIds.',
    );
  }
  const gone = new Set<SecurityGroupRule>();
  for (const req of rules) {
    const shape = normaliseRule(store, g, isEgress, req);
    const hit = g.rules.find((x) => sameRule(x, shape));
    if (!hit) {
      throw new Ec2SimError(
        'InvalidPermission.NotFound',
        `The specified rule does not exist in security group ${g.id}.`,
      );
    }
    gone.add(hit);
  }
  for (const id of ruleIds) {
    const hit = g.rules.find((x) => x.id === id && x.isEgress === isEgress);
    if (!hit) {
      throw new Ec2SimError(
        'InvalidSecurityGroupRuleId.NotFound',
        `The security group rule ID '${id}' does not exist in group ${g.id}.`,
      );
    }
    gone.add(hit);
  }
  g.rules = g.rules.filter((r) => !gone.has(r));
  store.emit({ type: 'security-group-rules-changed', groupId: g.id, change: 'rules' });
}
