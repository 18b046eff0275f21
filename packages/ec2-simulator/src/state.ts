import type { SimEventListener } from './events.js';
import type { IdGenerator } from './ids.js';
import type { InstanceTypeInfo } from './instance-types.js';
import type {
  Eni,
  Instance,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
  TrunkAssociation,
  Vpc,
} from './model.js';
import { assignIpv6, assignPrivateIps, unassignIpv6, unassignPrivateIps } from './state/addresses.js';
import {
  createNetworkInterface,
  deleteNetworkInterface,
  setAttribute,
  setDeleteOnTermination,
  setGroups,
} from './state/enis.js';
import { addInstance, attach, attachedEnis, detach } from './state/instances.js';
import { addSubnet, addVpc } from './state/network.js';
import {
  addSecurityGroup,
  authorize,
  createSecurityGroup,
  deleteSecurityGroup,
  revoke,
} from './state/security-groups.js';
import { snapshotState } from './state/snapshot.js';
import { StateStore } from './state/store.js';
import { createTags, deleteTags } from './state/tags.js';
import {
  type AssociateTrunkRequest,
  associateTrunk,
  associationsOf,
  disassociateTrunk,
} from './state/trunks.js';
import {
  associateVpcCidr,
  cidrAssociations,
  disassociateVpcCidr,
  type VpcCidrAssociation,
} from './state/vpc-cidrs.js';
import type {
  AssignIpv4Request,
  AssignIpv6Request,
  AssignResult,
  CreateEniRequest,
  CreateSecurityGroupRequest,
  Ec2StateOptions,
  RuleRequest,
  Timing,
} from './state-types.js';

export type { AssociateTrunkRequest } from './state/trunks.js';
export type {
  AssignIpv4Request,
  AssignIpv6Request,
  AssignResult,
  CreateEniRequest,
  Ec2StateOptions,
  Timing,
} from './state-types.js';

/**
 * The simulated EC2 account: VPCs, subnets, security groups, instances and ENIs, with AWS's constraints.
 * Every mutation validates first and throws an {@link Ec2SimError} leaving state unchanged; successful
 * mutations emit {@link SimEvent}s through {@link Ec2State.subscribe}. Each resource's rules live in its own
 * module under `state/`; this class is their one front door.
 */
export class Ec2State {
  readonly #store: StateStore;

  /** @param options - clock, randomness, account and timing */
  constructor(options: Ec2StateOptions) {
    this.#store = new StateStore(options);
  }

  /** Current delays; mutable at run time. */
  get timing(): Timing {
    return this.#store.timing;
  }

  /** Owner account id. */
  get accountId(): string {
    return this.#store.accountId;
  }

  /** The id and MAC generator (also used for request ids). */
  get ids(): IdGenerator {
    return this.#store.ids;
  }

  /** The clock time now. */
  now(): number {
    return this.#store.now();
  }

  /** Subscribes to state events; returns an unsubscribe function. */
  subscribe(listener: SimEventListener): () => void {
    return this.#store.events.subscribe(listener);
  }

  // ---- setup (scenario loading) ----

  /** Adds a VPC. The caller (scenario loader) has validated ids and CIDRs. */
  addVpc(vpc: Vpc): void {
    addVpc(this.#store, vpc);
  }

  /** AssociateVpcCidrBlock: adds an IPv4 block to a VPC (see `state/vpc-cidrs.ts` for the checks). */
  associateVpcCidr(vpcId: string, cidrBlock: string): VpcCidrAssociation {
    return associateVpcCidr(this.#store, vpcId, cidrBlock);
  }

  /** DisassociateVpcCidrBlock: removes a secondary IPv4 block no subnet uses. */
  disassociateVpcCidr(associationId: string): VpcCidrAssociation {
    return disassociateVpcCidr(this.#store, associationId);
  }

  /** A VPC's IPv4 blocks with their association ids, primary first. */
  vpcCidrAssociations(vpcId: string): VpcCidrAssociation[] {
    const vpc = this.#store.vpcs.get(vpcId);
    return vpc ? cidrAssociations(vpc) : [];
  }

  /** Adds a subnet with its pools. */
  addSubnet(s: Omit<Subnet, 'ipv4' | 'ipv6'>): Subnet {
    return addSubnet(this.#store, s);
  }

  /**
   * Adds a security group (scenario loading): egress to everywhere, no ingress; a group named `default` also
   * admits its own members, as EC2's default group does.
   */
  addSecurityGroup(g: Omit<SecurityGroup, 'rules'>): SecurityGroup {
    return addSecurityGroup(this.#store, g);
  }

  /** Launches an instance with its primary ENI (device 0 on the default card). */
  addInstance(spec: {
    id?: string | undefined;
    type: InstanceTypeInfo;
    subnetId: string;
    securityGroupIds: readonly string[];
    privateIpAddress?: string | undefined;
    /** IPv6 addresses for the primary ENI (0 or 1; the subnet needs an IPv6 CIDR). */
    ipv6AddressCount?: number | undefined;
    tags?: Map<string, string> | undefined;
  }): Instance {
    return addInstance(this.#store, spec);
  }

  // ---- reads ----

  /** The instance types this account knows (DescribeInstanceTypes). */
  instanceTypes(): ReadonlyMap<string, InstanceTypeInfo> {
    return this.#store.instanceTypes;
  }

  /** All VPCs. */
  vpcs(): Vpc[] {
    return [...this.#store.vpcs.values()];
  }

  /** All subnets. */
  subnets(): Subnet[] {
    return [...this.#store.subnets.values()];
  }

  /** All security groups. */
  securityGroups(): SecurityGroup[] {
    return [...this.#store.groups.values()];
  }

  /** All instances. */
  instances(): Instance[] {
    this.#store.settle();
    return [...this.#store.instances.values()];
  }

  /** All ENIs in creation order (including ones not yet visible). */
  enis(): Eni[] {
    this.#store.settle();
    return [...this.#store.enis.values()];
  }

  /** One VPC. */
  vpc(id: string): Vpc | undefined {
    return this.#store.vpcs.get(id);
  }

  /** One subnet. */
  subnet(id: string): Subnet | undefined {
    return this.#store.subnets.get(id);
  }

  /** One security group. */
  securityGroup(id: string): SecurityGroup | undefined {
    return this.#store.groups.get(id);
  }

  /** One instance. */
  instance(id: string): Instance | undefined {
    this.#store.settle();
    return this.#store.instances.get(id);
  }

  /** One ENI. */
  eni(id: string): Eni | undefined {
    this.#store.settle();
    return this.#store.enis.get(id);
  }

  /** ENIs attached to an instance (attaching, attached or detaching), by card then device index. */
  attachedEnis(instanceId: string): Eni[] {
    return attachedEnis(this.#store, instanceId);
  }

  /** True when Describe* shows the ENI now. */
  isVisible(eni: Eni): boolean {
    return this.#store.isVisible(eni);
  }

  // ---- mutations ----

  /**
   * CreateNetworkInterface. With a `clientToken` seen before: the same request returns the same ENI, a
   * different one fails with `IdempotentParameterMismatch`.
   */
  createNetworkInterface(req: CreateEniRequest): Eni {
    return createNetworkInterface(this.#store, req);
  }

  /** AttachNetworkInterface: returns the attachment id. */
  attach(
    eniId: string,
    instanceId: string,
    deviceIndex: number,
    networkCardIndex: number | undefined,
  ): string {
    return attach(this.#store, eniId, instanceId, deviceIndex, networkCardIndex);
  }

  /** DetachNetworkInterface. The primary interface (device 0) cannot be detached. */
  detach(attachmentId: string): void {
    detach(this.#store, attachmentId);
  }

  /** DeleteNetworkInterface: only `available` interfaces; frees every address and prefix. */
  deleteNetworkInterface(eniId: string): void {
    deleteNetworkInterface(this.#store, eniId);
  }

  /** ModifyNetworkInterfaceAttribute (Attachment.DeleteOnTermination). */
  setDeleteOnTermination(eniId: string, attachmentId: string, value: boolean): void {
    setDeleteOnTermination(this.#store, eniId, attachmentId, value);
  }

  /** ModifyNetworkInterfaceAttribute (Groups). */
  setGroups(eniId: string, groups: readonly string[]): void {
    setGroups(this.#store, eniId, groups);
  }

  /** ModifyNetworkInterfaceAttribute (Description / SourceDestCheck). */
  setAttribute(eniId: string, attr: { description?: string; sourceDestCheck?: boolean }): void {
    setAttribute(this.#store, eniId, attr);
  }

  /** AssignPrivateIpAddresses: returns the addresses and prefixes assigned. */
  assignPrivateIps(eniId: string, req: AssignIpv4Request): AssignResult {
    return assignPrivateIps(this.#store, eniId, req);
  }

  /** UnassignPrivateIpAddresses. Every address/prefix must be on the ENI; the primary cannot be removed. */
  unassignPrivateIps(eniId: string, addresses: readonly string[], prefixes: readonly string[]): void {
    unassignPrivateIps(this.#store, eniId, addresses, prefixes);
  }

  /** AssignIpv6Addresses. */
  assignIpv6(eniId: string, req: AssignIpv6Request): AssignResult {
    return assignIpv6(this.#store, eniId, req);
  }

  /** UnassignIpv6Addresses. */
  unassignIpv6(eniId: string, addresses: readonly string[], prefixes: readonly string[]): void {
    unassignIpv6(this.#store, eniId, addresses, prefixes);
  }

  /** CreateTags on ENIs, instances, subnets or security groups (all ids checked first). */
  createTags(resourceIds: readonly string[], tags: readonly (readonly [string, string])[]): void {
    createTags(this.#store, resourceIds, tags);
  }

  /** DeleteTags: a tag with a value is deleted only when the value matches; no tags deletes all. */
  deleteTags(resourceIds: readonly string[], tags: readonly (readonly [string, string | undefined])[]): void {
    deleteTags(this.#store, resourceIds, tags);
  }

  /** CreateSecurityGroup: a new group with the default egress-allow rule. */
  createSecurityGroup(req: CreateSecurityGroupRequest): SecurityGroup {
    return createSecurityGroup(this.#store, req);
  }

  /** DeleteSecurityGroup: refused while in use or referenced, and for the default group. */
  deleteSecurityGroup(groupId: string): void {
    deleteSecurityGroup(this.#store, groupId);
  }

  /** AuthorizeSecurityGroupIngress (`egress` false) or AuthorizeSecurityGroupEgress: returns the new rules. */
  authorizeSecurityGroupRules(
    groupId: string,
    egress: boolean,
    rules: readonly RuleRequest[],
  ): SecurityGroupRule[] {
    return authorize(this.#store, groupId, egress, rules);
  }

  /** RevokeSecurityGroupIngress (`egress` false) or RevokeSecurityGroupEgress, by rule or by rule id. */
  revokeSecurityGroupRules(
    groupId: string,
    egress: boolean,
    rules: readonly RuleRequest[],
    ruleIds: readonly string[] = [],
  ): void {
    revoke(this.#store, groupId, egress, rules, ruleIds);
  }

  /** AssociateTrunkInterface: a branch ENI joins a trunk under a VLAN id. */
  associateTrunkInterface(req: AssociateTrunkRequest): TrunkAssociation {
    return associateTrunk(this.#store, req);
  }

  /** DisassociateTrunkInterface: the branch leaves its trunk at once. */
  disassociateTrunkInterface(associationId: string): void {
    disassociateTrunk(this.#store, associationId);
  }

  /** Every trunk association, or those of one trunk ENI. */
  trunkAssociations(trunkEniId?: string): TrunkAssociation[] {
    if (trunkEniId !== undefined) return associationsOf(this.#store, trunkEniId);
    return [...this.#store.associations.values()];
  }

  /** A JSON-friendly dump of everything (for the admin endpoint). */
  snapshot(): unknown {
    return snapshotState(this.#store);
  }
}
