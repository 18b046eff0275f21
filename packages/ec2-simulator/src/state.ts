import { Ipv4Pool, Ipv6Pool } from './address-pool.js';
import {
  type AddressPick,
  allocIpv4,
  allocIpv4Prefixes,
  allocIpv6,
  checkIpv6Modes,
  takeIpv4,
  takeIpv4Prefix,
  Undo,
} from './allocation.js';
import type { Clock } from './clock.js';
import { Ec2SimError } from './errors.js';
import { type AddressChange, EventHub, type SimEvent, type SimEventListener } from './events.js';
import { IdGenerator } from './ids.js';
import type { InstanceTypeInfo } from './instance-types.js';
import {
  formatIpv4,
  formatIpv6,
  formatIpv6Cidr,
  parseIpv4,
  parseIpv4Cidr,
  parseIpv6,
  parseIpv6Cidr,
} from './ip.js';
import type { AssignedAddress, Eni, Instance, SecurityGroup, Subnet, Vpc } from './model.js';
import { snapshotState } from './snapshot.js';
import type {
  AssignIpv4Request,
  AssignIpv6Request,
  AssignResult,
  CreateEniRequest,
  Ec2StateOptions,
  Timing,
} from './state-types.js';

export type {
  AssignIpv4Request,
  AssignIpv6Request,
  AssignResult,
  CreateEniRequest,
  Ec2StateOptions,
  Timing,
} from './state-types.js';

/** Largest per-interface IPv4 count of any instance type: the cap for an unattached ENI. */
const UNATTACHED_IPV4_LIMIT = 50;
const MAX_TAGS = 50;

const values = (list: readonly AssignedAddress[]): string[] => list.map((a) => a.value);
const noChange: AddressChange = { ipv4: [], ipv4Prefixes: [], ipv6: [], ipv6Prefixes: [] };

/**
 * The simulated EC2 account: VPCs, subnets, security groups, instances and ENIs, with AWS's constraints.
 * Every mutation validates first and throws an {@link Ec2SimError} leaving state unchanged; successful
 * mutations emit {@link SimEvent}s through {@link Ec2State.subscribe}.
 */
export class Ec2State {
  /** Current delays; mutable at run time. */
  readonly timing: Timing;
  /** Owner account id. */
  readonly accountId: string;
  readonly #clock: Clock;
  readonly #ids: IdGenerator;
  readonly #events: EventHub;
  readonly #pick: AddressPick;
  readonly #vpcs = new Map<string, Vpc>();
  readonly #subnets = new Map<string, Subnet>();
  readonly #groups = new Map<string, SecurityGroup>();
  readonly #instances = new Map<string, Instance>();
  readonly #enis = new Map<string, Eni>();
  readonly #clientTokens = new Map<string, { fingerprint: string; eniId: string }>();

  /** @param options - clock, randomness, account and timing */
  constructor(options: Ec2StateOptions) {
    this.#clock = options.clock;
    this.#ids = new IdGenerator(options.random);
    this.#events = new EventHub(options.onListenerError);
    this.#pick = { how: options.addressAllocation, random: options.random };
    this.accountId = options.accountId;
    this.timing = {
      eventualConsistencyMs: 0,
      attachDelayMs: 0,
      detachDelayMs: 0,
      imdsDelayMs: 0,
      ...options.timing,
    };
  }

  /** The id and MAC generator (also used for request ids). */
  get ids(): IdGenerator {
    return this.#ids;
  }

  /** The clock time now. */
  now(): number {
    return this.#clock.now();
  }

  /** Subscribes to state events; returns an unsubscribe function. */
  subscribe(listener: SimEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  // ---- setup (scenario loading) ----

  /** Adds a VPC. The caller (scenario loader) has validated ids and CIDRs. */
  addVpc(vpc: Vpc): void {
    this.#ids.reserve(vpc.id);
    this.#vpcs.set(vpc.id, vpc);
  }

  /** Adds a subnet with its pools. */
  addSubnet(s: Omit<Subnet, 'ipv4' | 'ipv6'>): Subnet {
    const cidr = parseIpv4Cidr(s.cidrBlock);
    if (!cidr) throw new Ec2SimError('InvalidParameterValue', `Invalid CIDR ${s.cidrBlock}`);
    const v6 = s.ipv6CidrBlock ? parseIpv6Cidr(s.ipv6CidrBlock) : undefined;
    const subnet: Subnet = { ...s, ipv4: new Ipv4Pool(cidr), ipv6: v6 ? new Ipv6Pool(v6) : undefined };
    this.#ids.reserve(s.id);
    this.#subnets.set(s.id, subnet);
    return subnet;
  }

  /** Adds a security group. */
  addSecurityGroup(g: SecurityGroup): void {
    this.#ids.reserve(g.id);
    this.#groups.set(g.id, g);
  }

  /** Launches an instance with its primary ENI (device 0 on the default card). */
  addInstance(spec: {
    id?: string | undefined;
    type: InstanceTypeInfo;
    subnetId: string;
    securityGroupIds: readonly string[];
    privateIpAddress?: string | undefined;
    tags?: Map<string, string> | undefined;
  }): Instance {
    const subnet = this.#subnet(spec.subnetId);
    const id = spec.id ?? this.#ids.id('i');
    this.#ids.reserve(id);
    const eni = this.createNetworkInterface(
      {
        subnetId: spec.subnetId,
        description: 'Primary network interface',
        groups: spec.securityGroupIds.length > 0 ? spec.securityGroupIds : undefined,
        primaryAddress: spec.privateIpAddress,
      },
      { primary: true },
    );
    const now = this.now();
    const instance: Instance = {
      id,
      type: spec.type,
      subnetId: subnet.id,
      vpcId: subnet.vpcId,
      availabilityZone: subnet.availabilityZone,
      launchTime: now,
      primaryEniId: eni.id,
      tags: spec.tags ?? new Map(),
    };
    this.#instances.set(id, instance);
    eni.attachment = {
      id: this.#ids.id('eni-attach'),
      instanceId: id,
      deviceIndex: 0,
      networkCardIndex: spec.type.defaultNetworkCardIndex,
      attachTime: now,
      attachedAt: now,
      imdsVisibleAt: now,
      detachingUntil: undefined,
      deleteOnTermination: true,
    };
    this.#emit({
      type: 'eni-attached',
      eniId: eni.id,
      instanceId: id,
      attachmentId: eni.attachment.id,
      deviceIndex: 0,
      networkCardIndex: eni.attachment.networkCardIndex,
      mac: eni.mac,
    });
    return instance;
  }

  // ---- reads ----

  /** All VPCs. */
  vpcs(): Vpc[] {
    return [...this.#vpcs.values()];
  }

  /** All subnets. */
  subnets(): Subnet[] {
    return [...this.#subnets.values()];
  }

  /** All security groups. */
  securityGroups(): SecurityGroup[] {
    return [...this.#groups.values()];
  }

  /** All instances. */
  instances(): Instance[] {
    this.#settle();
    return [...this.#instances.values()];
  }

  /** All ENIs in creation order (including ones not yet visible). */
  enis(): Eni[] {
    this.#settle();
    return [...this.#enis.values()];
  }

  /** One VPC. */
  vpc(id: string): Vpc | undefined {
    return this.#vpcs.get(id);
  }

  /** One subnet. */
  subnet(id: string): Subnet | undefined {
    return this.#subnets.get(id);
  }

  /** One security group. */
  securityGroup(id: string): SecurityGroup | undefined {
    return this.#groups.get(id);
  }

  /** One instance. */
  instance(id: string): Instance | undefined {
    this.#settle();
    return this.#instances.get(id);
  }

  /** One ENI. */
  eni(id: string): Eni | undefined {
    this.#settle();
    return this.#enis.get(id);
  }

  /** ENIs attached to an instance (attaching, attached or detaching), by card then device index. */
  attachedEnis(instanceId: string): Eni[] {
    return this.enis()
      .filter((e) => e.attachment?.instanceId === instanceId)
      .sort(
        (a, b) =>
          a.attachment!.networkCardIndex - b.attachment!.networkCardIndex ||
          a.attachment!.deviceIndex - b.attachment!.deviceIndex,
      );
  }

  /** True when Describe* shows the ENI now. */
  isVisible(eni: Eni): boolean {
    return this.now() >= eni.visibleAt;
  }

  // ---- mutations ----

  /**
   * CreateNetworkInterface. With a `clientToken` seen before: the same request returns the same ENI, a
   * different one fails with `IdempotentParameterMismatch`.
   */
  createNetworkInterface(req: CreateEniRequest, internal: { primary?: boolean } = {}): Eni {
    this.#settle();
    const fingerprint = JSON.stringify({ ...req, clientToken: undefined });
    if (req.clientToken !== undefined) {
      const seen = this.#clientTokens.get(req.clientToken);
      if (seen) {
        if (seen.fingerprint !== fingerprint) {
          throw new Ec2SimError(
            'IdempotentParameterMismatch',
            'The client token you have provided is associated with a resource that is already deleted or has different parameters.',
          );
        }
        const existing = this.#enis.get(seen.eniId);
        if (existing) return existing;
      }
    }
    const subnet = this.#subnet(req.subnetId);
    const groups = this.#checkGroups(req.groups, subnet.vpcId);
    const tags = this.#checkTags(req.tags ?? []);
    if (req.description !== undefined && req.description.length > 255) {
      throw new Ec2SimError('InvalidParameterValue', 'Description must be at most 255 characters.');
    }
    const ipv4Modes = [
      req.secondaryCount !== undefined,
      (req.addresses ?? []).some((a) => !a.primary) || (req.addresses?.length ?? 0) > 1,
      req.ipv4Prefixes !== undefined && req.ipv4Prefixes.length > 0,
      req.ipv4PrefixCount !== undefined,
    ].filter(Boolean).length;
    if (ipv4Modes > 1) {
      throw new Ec2SimError(
        'InvalidParameterCombination',
        'Specify only one of SecondaryPrivateIpAddressCount, PrivateIpAddresses, Ipv4Prefixes and Ipv4PrefixCount.',
      );
    }
    checkIpv6Modes(req);
    const explicitPrimary = (req.addresses ?? []).filter((a) => a.primary);
    if (explicitPrimary.length > 1 || (explicitPrimary.length === 1 && req.primaryAddress !== undefined)) {
      if (!(explicitPrimary.length === 1 && explicitPrimary[0]!.address === req.primaryAddress)) {
        throw new Ec2SimError(
          'InvalidParameterValue',
          'Only one primary private IP address can be specified.',
        );
      }
    }
    const primaryText = req.primaryAddress ?? explicitPrimary[0]?.address;
    const secondaryTexts = (req.addresses ?? []).filter((a) => !a.primary).map((a) => a.address);
    const slots =
      1 +
      secondaryTexts.length +
      (req.secondaryCount ?? 0) +
      (req.ipv4Prefixes?.length ?? 0) +
      (req.ipv4PrefixCount ?? 0);
    if (slots > UNATTACHED_IPV4_LIMIT) {
      throw new Ec2SimError(
        'PrivateIpAddressLimitExceeded',
        `Number of private addresses ${slots} exceeds limit of ${UNATTACHED_IPV4_LIMIT}.`,
      );
    }
    const undo = new Undo();
    try {
      const now = this.now();
      const visibleAt = now + this.timing.eventualConsistencyMs;
      const mk = (value: string): AssignedAddress => ({
        value,
        visibleAt,
        imdsVisibleAt: Math.max(visibleAt, now + this.timing.imdsDelayMs),
      });
      const privateIps: AssignedAddress[] = [];
      if (primaryText !== undefined) privateIps.push(mk(takeIpv4(subnet, primaryText, undo)));
      else privateIps.push(mk(formatIpv4(allocIpv4(subnet, 1, this.#pick, undo)[0]!)));
      for (const t of secondaryTexts) privateIps.push(mk(takeIpv4(subnet, t, undo)));
      for (const a of allocIpv4(subnet, req.secondaryCount ?? 0, this.#pick, undo))
        privateIps.push(mk(formatIpv4(a)));
      const ipv4Prefixes = [
        ...(req.ipv4Prefixes ?? []).map((p) => takeIpv4Prefix(subnet, p, undo)),
        ...allocIpv4Prefixes(subnet, req.ipv4PrefixCount ?? 0, undo),
      ].map(mk);
      const v6 = allocIpv6(subnet, req, undo);
      const eni: Eni = {
        id: this.#ids.id('eni'),
        subnetId: subnet.id,
        vpcId: subnet.vpcId,
        availabilityZone: subnet.availabilityZone,
        mac: this.#ids.mac(),
        interfaceType: req.interfaceType ?? 'interface',
        description: req.description ?? '',
        groups,
        tags,
        sourceDestCheck: true,
        privateIps,
        ipv4Prefixes,
        ipv6Addresses: v6.addresses.map(mk),
        ipv6Prefixes: v6.prefixes.map(mk),
        attachment: undefined,
        createdAt: now,
        visibleAt: internal.primary ? now : visibleAt,
        primary: internal.primary ?? false,
      };
      this.#enis.set(eni.id, eni);
      if (req.clientToken !== undefined) {
        this.#clientTokens.set(req.clientToken, { fingerprint, eniId: eni.id });
      }
      this.#emit({
        type: 'eni-created',
        eniId: eni.id,
        subnetId: eni.subnetId,
        vpcId: eni.vpcId,
        mac: eni.mac,
        interfaceType: eni.interfaceType,
        addresses: this.#addressesOf(eni),
      });
      return eni;
    } catch (e) {
      undo.run();
      throw e;
    }
  }

  /** AttachNetworkInterface: returns the attachment id. */
  attach(
    eniId: string,
    instanceId: string,
    deviceIndex: number,
    networkCardIndex: number | undefined,
  ): string {
    const eni = this.#eni(eniId);
    const instance = this.#instance(instanceId);
    const card = networkCardIndex ?? instance.type.defaultNetworkCardIndex;
    const cardInfo = instance.type.networkCards.find((c) => c.index === card);
    if (!cardInfo) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Network card index ${card} is not valid for instance type ${instance.type.name}.`,
      );
    }
    if (eni.attachment) {
      throw new Ec2SimError('InvalidNetworkInterface.InUse', `Interface: [${eni.id}] in use.`);
    }
    if (eni.vpcId !== instance.vpcId) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `The network interface ${eni.id} and instance ${instance.id} are in different VPCs.`,
      );
    }
    if (eni.availabilityZone !== instance.availabilityZone) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `The network interface ${eni.id} and instance ${instance.id} are in different availability zones.`,
      );
    }
    const onInstance = this.attachedEnis(instance.id);
    const onCard = onInstance.filter((e) => e.attachment!.networkCardIndex === card);
    if (onCard.some((e) => e.attachment!.deviceIndex === deviceIndex)) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Instance '${instance.id}' already has an interface attached at device index '${deviceIndex}'.`,
      );
    }
    if (
      onCard.length >= cardInfo.maximumNetworkInterfaces ||
      onInstance.length >= instance.type.maximumNetworkInterfaces
    ) {
      throw new Ec2SimError(
        'AttachmentLimitExceeded',
        `Interface count ${onInstance.length + 1} exceeds the limit for ${instance.type.name}`,
      );
    }
    const ipv4Slots = eni.privateIps.length + eni.ipv4Prefixes.length;
    if (ipv4Slots > instance.type.ipv4AddressesPerInterface) {
      throw new Ec2SimError(
        'PrivateIpAddressLimitExceeded',
        `Number of private addresses ${ipv4Slots} exceeds limit of ${instance.type.ipv4AddressesPerInterface} for ${instance.type.name}.`,
      );
    }
    const now = this.now();
    const attachment = {
      id: this.#ids.id('eni-attach'),
      instanceId: instance.id,
      deviceIndex,
      networkCardIndex: card,
      attachTime: now,
      attachedAt: now + this.timing.attachDelayMs,
      imdsVisibleAt: now + this.timing.attachDelayMs + this.timing.imdsDelayMs,
      detachingUntil: undefined,
      deleteOnTermination: false,
    };
    eni.attachment = attachment;
    this.#emit({
      type: 'eni-attached',
      eniId: eni.id,
      instanceId: instance.id,
      attachmentId: attachment.id,
      deviceIndex,
      networkCardIndex: card,
      mac: eni.mac,
    });
    return attachment.id;
  }

  /** DetachNetworkInterface. The primary interface (device 0) cannot be detached. */
  detach(attachmentId: string): void {
    this.#settle();
    const eni = [...this.#enis.values()].find((e) => e.attachment?.id === attachmentId);
    if (!eni?.attachment) {
      throw new Ec2SimError(
        'InvalidAttachmentID.NotFound',
        `The attachment ID '${attachmentId}' does not exist`,
      );
    }
    if (eni.primary) {
      throw new Ec2SimError(
        'OperationNotPermitted',
        'The network interface at device index 0 cannot be detached.',
      );
    }
    if (eni.attachment.detachingUntil !== undefined) return;
    eni.attachment.detachingUntil = this.now() + this.timing.detachDelayMs;
    this.#settle();
    // Complete a slow detach on time even if nobody calls in between, so subscribers see `eni-detached`.
    if (this.timing.detachDelayMs > 0)
      void this.#clock.sleep(this.timing.detachDelayMs).then(() => this.#settle());
  }

  /** DeleteNetworkInterface: only `available` interfaces; frees every address and prefix. */
  deleteNetworkInterface(eniId: string): void {
    const eni = this.#eni(eniId);
    if (eni.attachment) {
      throw new Ec2SimError(
        'InvalidNetworkInterface.InUse',
        `The network interface ${eni.id} is currently in use.`,
      );
    }
    const subnet = this.#subnet(eni.subnetId);
    for (const a of eni.privateIps) subnet.ipv4.release(parseIpv4(a.value)!);
    for (const p of eni.ipv4Prefixes) subnet.ipv4.releasePrefix(parseIpv4Cidr(p.value)!.base);
    for (const a of eni.ipv6Addresses) subnet.ipv6?.release(parseIpv6(a.value)!);
    for (const p of eni.ipv6Prefixes) subnet.ipv6?.releasePrefix(parseIpv6Cidr(p.value)!.base);
    this.#enis.delete(eni.id);
    this.#emit({ type: 'eni-deleted', eniId: eni.id, mac: eni.mac, addresses: this.#addressesOf(eni) });
  }

  /** ModifyNetworkInterfaceAttribute (Attachment.DeleteOnTermination). */
  setDeleteOnTermination(eniId: string, attachmentId: string, value: boolean): void {
    const eni = this.#eni(eniId);
    if (eni.attachment?.id !== attachmentId) {
      throw new Ec2SimError(
        'InvalidAttachmentID.NotFound',
        `The attachment ID '${attachmentId}' does not exist`,
      );
    }
    eni.attachment.deleteOnTermination = value;
  }

  /** ModifyNetworkInterfaceAttribute (Groups). */
  setGroups(eniId: string, groups: readonly string[]): void {
    const eni = this.#eni(eniId);
    const checked = this.#checkGroups(groups, eni.vpcId);
    eni.groups = checked;
    this.#emit({ type: 'security-groups-changed', eniId: eni.id, groups: checked });
  }

  /** ModifyNetworkInterfaceAttribute (Description / SourceDestCheck). */
  setAttribute(eniId: string, attr: { description?: string; sourceDestCheck?: boolean }): void {
    const eni = this.#eni(eniId);
    if (attr.description !== undefined) {
      if (attr.description.length > 255) {
        throw new Ec2SimError('InvalidParameterValue', 'Description must be at most 255 characters.');
      }
      eni.description = attr.description;
    }
    if (attr.sourceDestCheck !== undefined) eni.sourceDestCheck = attr.sourceDestCheck;
  }

  /** AssignPrivateIpAddresses: returns the addresses and prefixes assigned. */
  assignPrivateIps(eniId: string, req: AssignIpv4Request): AssignResult {
    const eni = this.#eni(eniId);
    const subnet = this.#subnet(eni.subnetId);
    const limit = this.#ipv4Limit(eni);
    const wanted =
      (req.addresses?.length ?? 0) + (req.count ?? 0) + (req.prefixes?.length ?? 0) + (req.prefixCount ?? 0);
    const have = eni.privateIps.length + eni.ipv4Prefixes.length;
    if (have + wanted > limit) {
      throw new Ec2SimError(
        'PrivateIpAddressLimitExceeded',
        `Number of private addresses ${have + wanted} exceeds limit of ${limit} for interface ${eni.id}.`,
      );
    }
    const undo = new Undo();
    const moved: { from: Eni; address: AssignedAddress }[] = [];
    try {
      const addresses: string[] = [];
      for (const text of req.addresses ?? []) {
        const n = parseIpv4(text);
        if (n !== undefined && subnet.ipv4.contains(n) && subnet.ipv4.isUsed(n) && req.allowReassignment) {
          const holder = [...this.#enis.values()].find(
            (e) => e.subnetId === subnet.id && e.privateIps.some((a, i) => i > 0 && a.value === text),
          );
          if (holder && holder !== eni) {
            const address = holder.privateIps.find((a) => a.value === text)!;
            moved.push({ from: holder, address });
            addresses.push(text);
            continue;
          }
        }
        addresses.push(takeIpv4(subnet, text, undo));
      }
      for (const a of allocIpv4(subnet, req.count ?? 0, this.#pick, undo)) addresses.push(formatIpv4(a));
      const prefixes = [
        ...(req.prefixes ?? []).map((p) => takeIpv4Prefix(subnet, p, undo)),
        ...allocIpv4Prefixes(subnet, req.prefixCount ?? 0, undo),
      ];
      for (const m of moved) {
        m.from.privateIps = m.from.privateIps.filter((a) => a !== m.address);
        this.#emit({
          type: 'addresses-unassigned',
          eniId: m.from.id,
          addresses: { ...noChange, ipv4: [m.address.value] },
        });
      }
      const mk = this.#assigned();
      eni.privateIps = [...eni.privateIps, ...addresses.map(mk)];
      eni.ipv4Prefixes = [...eni.ipv4Prefixes, ...prefixes.map(mk)];
      this.#emit({
        type: 'addresses-assigned',
        eniId: eni.id,
        addresses: { ...noChange, ipv4: addresses, ipv4Prefixes: prefixes },
      });
      return { addresses, prefixes };
    } catch (e) {
      undo.run();
      throw e;
    }
  }

  /** UnassignPrivateIpAddresses. Every address/prefix must be on the ENI; the primary cannot be removed. */
  unassignPrivateIps(eniId: string, addresses: readonly string[], prefixes: readonly string[]): void {
    const eni = this.#eni(eniId);
    const subnet = this.#subnet(eni.subnetId);
    for (const a of addresses) {
      const i = eni.privateIps.findIndex((p) => p.value === a);
      if (i < 0) {
        throw new Ec2SimError(
          'InvalidParameterValue',
          `Some of the specified addresses are not assigned to interface ${eni.id}`,
        );
      }
      if (i === 0) {
        throw new Ec2SimError(
          'InvalidParameterValue',
          `The primary private IP address ${a} cannot be unassigned.`,
        );
      }
    }
    for (const p of prefixes) {
      if (!eni.ipv4Prefixes.some((x) => x.value === p)) {
        throw new Ec2SimError(
          'InvalidParameterValue',
          `Some of the specified prefixes are not assigned to interface ${eni.id}`,
        );
      }
    }
    eni.privateIps = eni.privateIps.filter((p) => !addresses.includes(p.value));
    eni.ipv4Prefixes = eni.ipv4Prefixes.filter((p) => !prefixes.includes(p.value));
    for (const a of addresses) subnet.ipv4.release(parseIpv4(a)!);
    for (const p of prefixes) subnet.ipv4.releasePrefix(parseIpv4Cidr(p)!.base);
    this.#emit({
      type: 'addresses-unassigned',
      eniId: eni.id,
      addresses: { ...noChange, ipv4: [...addresses], ipv4Prefixes: [...prefixes] },
    });
  }

  /** AssignIpv6Addresses. */
  assignIpv6(eniId: string, req: AssignIpv6Request): AssignResult {
    const eni = this.#eni(eniId);
    const subnet = this.#subnet(eni.subnetId);
    const limit = this.#ipv6Limit(eni);
    const wanted =
      (req.addresses?.length ?? 0) + (req.count ?? 0) + (req.prefixes?.length ?? 0) + (req.prefixCount ?? 0);
    const have = eni.ipv6Addresses.length + eni.ipv6Prefixes.length;
    if (have + wanted > limit) {
      throw new Ec2SimError(
        'PrivateIpAddressLimitExceeded',
        `Number of IPv6 addresses ${have + wanted} exceeds limit of ${limit} for interface ${eni.id}.`,
      );
    }
    const undo = new Undo();
    try {
      const v6 = allocIpv6(
        subnet,
        {
          ipv6Addresses: req.addresses,
          ipv6Count: req.count,
          ipv6Prefixes: req.prefixes,
          ipv6PrefixCount: req.prefixCount,
        },
        undo,
      );
      const mk = this.#assigned();
      eni.ipv6Addresses = [...eni.ipv6Addresses, ...v6.addresses.map(mk)];
      eni.ipv6Prefixes = [...eni.ipv6Prefixes, ...v6.prefixes.map(mk)];
      this.#emit({
        type: 'addresses-assigned',
        eniId: eni.id,
        addresses: { ...noChange, ipv6: v6.addresses, ipv6Prefixes: v6.prefixes },
      });
      return v6;
    } catch (e) {
      undo.run();
      throw e;
    }
  }

  /** UnassignIpv6Addresses. */
  unassignIpv6(eniId: string, addresses: readonly string[], prefixes: readonly string[]): void {
    const eni = this.#eni(eniId);
    const subnet = this.#subnet(eni.subnetId);
    const canon = (t: string): string => {
      const n = parseIpv6(t);
      if (n === undefined) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 address ${t}`);
      return formatIpv6(n);
    };
    const canonPrefix = (t: string): string => {
      const c = parseIpv6Cidr(t);
      if (!c) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 prefix ${t}`);
      return formatIpv6Cidr(c);
    };
    const addrs = addresses.map(canon);
    const pfx = prefixes.map(canonPrefix);
    if (!addrs.every((a) => eni.ipv6Addresses.some((x) => x.value === a))) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Some of the specified addresses are not assigned to interface ${eni.id}`,
      );
    }
    if (!pfx.every((p) => eni.ipv6Prefixes.some((x) => x.value === p))) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Some of the specified prefixes are not assigned to interface ${eni.id}`,
      );
    }
    eni.ipv6Addresses = eni.ipv6Addresses.filter((x) => !addrs.includes(x.value));
    eni.ipv6Prefixes = eni.ipv6Prefixes.filter((x) => !pfx.includes(x.value));
    for (const a of addrs) subnet.ipv6?.release(parseIpv6(a)!);
    for (const p of pfx) subnet.ipv6?.releasePrefix(parseIpv6Cidr(p)!.base);
    this.#emit({
      type: 'addresses-unassigned',
      eniId: eni.id,
      addresses: { ...noChange, ipv6: addrs, ipv6Prefixes: pfx },
    });
  }

  /** CreateTags on ENIs, instances, subnets or security groups (all ids checked first). */
  createTags(resourceIds: readonly string[], tags: readonly (readonly [string, string])[]): void {
    const targets = resourceIds.map((id) => this.#taggable(id));
    this.#checkTags(tags);
    for (const t of targets) {
      if (t.size + tags.filter(([k]) => !t.has(k)).length > MAX_TAGS) {
        throw new Ec2SimError('TagLimitExceeded', `A resource can have at most ${MAX_TAGS} tags.`);
      }
    }
    for (const [i, t] of targets.entries()) {
      for (const [k, v] of tags) t.set(k, v);
      this.#emit({ type: 'tags-changed', resourceId: resourceIds[i]! });
    }
  }

  /** DeleteTags: a tag with a value is deleted only when the value matches; no tags deletes all. */
  deleteTags(resourceIds: readonly string[], tags: readonly (readonly [string, string | undefined])[]): void {
    const targets = resourceIds.map((id) => this.#taggable(id));
    for (const [i, t] of targets.entries()) {
      if (tags.length === 0) t.clear();
      for (const [k, v] of tags) if (v === undefined || t.get(k) === v) t.delete(k);
      this.#emit({ type: 'tags-changed', resourceId: resourceIds[i]! });
    }
  }

  /** A JSON-friendly dump of everything (for the admin endpoint). */
  snapshot(): unknown {
    return snapshotState(this);
  }

  // ---- internals ----

  #emit(event: SimEvent): void {
    this.#events.emit(event);
  }

  /** Completes detaches whose delay has passed. */
  #settle(): void {
    const now = this.#clock.now();
    for (const eni of this.#enis.values()) {
      const a = eni.attachment;
      if (a?.detachingUntil !== undefined && a.detachingUntil <= now) {
        eni.attachment = undefined;
        this.#emit({
          type: 'eni-detached',
          eniId: eni.id,
          instanceId: a.instanceId,
          attachmentId: a.id,
          mac: eni.mac,
        });
      }
    }
  }

  #assigned(): (value: string) => AssignedAddress {
    const now = this.now();
    const visibleAt = now + this.timing.eventualConsistencyMs;
    const imdsVisibleAt = Math.max(visibleAt, now + this.timing.imdsDelayMs);
    return (value) => ({ value, visibleAt, imdsVisibleAt });
  }

  #addressesOf(eni: Eni): AddressChange {
    return {
      ipv4: values(eni.privateIps),
      ipv4Prefixes: values(eni.ipv4Prefixes),
      ipv6: values(eni.ipv6Addresses),
      ipv6Prefixes: values(eni.ipv6Prefixes),
    };
  }

  #ipv4Limit(eni: Eni): number {
    const inst = eni.attachment ? this.#instances.get(eni.attachment.instanceId) : undefined;
    return inst ? inst.type.ipv4AddressesPerInterface : UNATTACHED_IPV4_LIMIT;
  }

  #ipv6Limit(eni: Eni): number {
    const inst = eni.attachment ? this.#instances.get(eni.attachment.instanceId) : undefined;
    return inst ? inst.type.ipv6AddressesPerInterface : UNATTACHED_IPV4_LIMIT;
  }

  #eni(id: string): Eni {
    this.#settle();
    if (!/^eni-[0-9a-f]{8,17}$/.test(id)) {
      throw new Ec2SimError(
        'InvalidNetworkInterfaceID.Malformed',
        `Invalid id: "${id}" (expecting "eni-...")`,
      );
    }
    const eni = this.#enis.get(id);
    if (!eni || (this.timing.eventualConsistencyScope === 'all' && !this.isVisible(eni))) {
      throw new Ec2SimError(
        'InvalidNetworkInterfaceID.NotFound',
        `The networkInterface ID '${id}' does not exist`,
      );
    }
    return eni;
  }

  #instance(id: string): Instance {
    const inst = this.#instances.get(id);
    if (!inst) {
      if (!/^i-[0-9a-f]{8,17}$/.test(id)) {
        throw new Ec2SimError('InvalidInstanceID.Malformed', `Invalid id: "${id}"`);
      }
      throw new Ec2SimError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    }
    return inst;
  }

  #subnet(id: string): Subnet {
    const s = this.#subnets.get(id);
    if (!s) throw new Ec2SimError('InvalidSubnetID.NotFound', `The subnet ID '${id}' does not exist`);
    return s;
  }

  #taggable(id: string): Map<string, string> {
    if (id.startsWith('eni-')) return this.#eni(id).tags;
    if (id.startsWith('i-')) return this.#instance(id).tags;
    if (id.startsWith('subnet-')) return this.#subnet(id).tags;
    if (id.startsWith('sg-')) {
      const g = this.#groups.get(id);
      if (!g) throw new Ec2SimError('InvalidGroup.NotFound', `The security group '${id}' does not exist`);
      return g.tags;
    }
    throw new Ec2SimError('InvalidID', `The ID '${id}' is not valid`);
  }

  #checkGroups(groups: readonly string[] | undefined, vpcId: string): string[] {
    if (!groups || groups.length === 0) {
      const def = [...this.#groups.values()].find((g) => g.vpcId === vpcId && g.name === 'default');
      return def ? [def.id] : [];
    }
    if (groups.length > 5) {
      throw new Ec2SimError(
        'SecurityGroupsPerInterfaceLimitExceeded',
        'You have exceeded the maximum number of security groups per interface (5).',
      );
    }
    for (const id of groups) {
      const g = this.#groups.get(id);
      if (!g || g.vpcId !== vpcId) {
        throw new Ec2SimError(
          'InvalidGroup.NotFound',
          `The security group '${id}' does not exist in VPC '${vpcId}'`,
        );
      }
    }
    return [...new Set(groups)];
  }

  #checkTags(tags: readonly (readonly [string, string])[]): Map<string, string> {
    const m = new Map<string, string>();
    for (const [k, v] of tags) {
      if (k.length === 0 || k.length > 128) {
        throw new Ec2SimError('InvalidParameterValue', `Tag key '${k}' must be 1 to 128 characters.`);
      }
      if (k.toLowerCase().startsWith('aws:')) {
        throw new Ec2SimError(
          'InvalidParameterValue',
          `Tag keys starting with 'aws:' are reserved for internal use`,
        );
      }
      if (v.length > 256)
        throw new Ec2SimError('InvalidParameterValue', `Tag value for '${k}' exceeds 256 characters.`);
      m.set(k, v);
    }
    if (m.size > MAX_TAGS)
      throw new Ec2SimError('TagLimitExceeded', `A resource can have at most ${MAX_TAGS} tags.`);
    return m;
  }
}
