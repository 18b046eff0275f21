import type { AddressPick } from '../allocation.js';
import type { Clock } from '../clock.js';
import { Ec2SimError } from '../errors.js';
import { type AddressChange, EventHub, type SimEvent } from '../events.js';
import { IdGenerator } from '../ids.js';
import { INSTANCE_TYPES, type InstanceTypeInfo } from '../instance-types.js';
import type {
  AssignedAddress,
  Eni,
  Instance,
  SecurityGroup,
  Subnet,
  TrunkAssociation,
  Vpc,
} from '../model.js';
import type { Ec2StateOptions, Timing } from '../state-types.js';
import { ClientTokens } from './client-tokens.js';

/** Largest per-interface IPv4 count of any instance type: the cap for an unattached ENI. */
export const UNATTACHED_IPV4_LIMIT = 50;
/** Tags per resource. */
export const MAX_TAGS = 50;

const values = (list: readonly AssignedAddress[]): string[] => list.map((a) => a.value);

/** An address change with nothing in it (spread and fill one field). */
export const NO_CHANGE: AddressChange = { ipv4: [], ipv4Prefixes: [], ipv6: [], ipv6Prefixes: [] };

/**
 * The resources of one simulated account and what every resource module shares: clock, ids, events, timing
 * and the checked lookups that answer AWS's NotFound/Malformed errors. Internal to the package: the resource
 * modules (`network`, `instances`, `enis`, `addresses`, `tags`, …) mutate it, {@link Ec2State} fronts it.
 */
export class StateStore {
  /** Current delays; mutable at run time. */
  readonly timing: Timing;
  /** Owner account id. */
  readonly accountId: string;
  /** Time source. */
  readonly clock: Clock;
  /** Id and MAC generator. */
  readonly ids: IdGenerator;
  /** How free addresses are picked. */
  readonly pick: AddressPick;
  /** The instance types this account knows. */
  readonly instanceTypes: ReadonlyMap<string, InstanceTypeInfo>;
  /** VPCs by id. */
  readonly vpcs = new Map<string, Vpc>();
  /** Subnets by id. */
  readonly subnets = new Map<string, Subnet>();
  /** Security groups by id. */
  readonly groups = new Map<string, SecurityGroup>();
  /** Instances by id. */
  readonly instances = new Map<string, Instance>();
  /** ENIs by id, in creation order. */
  readonly enis = new Map<string, Eni>();
  /** CreateNetworkInterface client tokens. */
  readonly clientTokens = new ClientTokens();
  /** Trunk associations by id. */
  readonly associations = new Map<string, TrunkAssociation>();
  /** AssociateTrunkInterface client tokens. */
  readonly associationTokens = new ClientTokens();
  readonly #events: EventHub;

  /** @param options - clock, randomness, account and timing */
  constructor(options: Ec2StateOptions) {
    this.clock = options.clock;
    this.ids = new IdGenerator(options.random);
    this.#events = new EventHub(options.onListenerError);
    this.pick = { how: options.addressAllocation, random: options.random };
    this.accountId = options.accountId;
    this.instanceTypes = options.instanceTypes ?? INSTANCE_TYPES;
    this.timing = {
      eventualConsistencyMs: 0,
      attachDelayMs: 0,
      detachDelayMs: 0,
      imdsDelayMs: 0,
      ...options.timing,
    };
  }

  /** The event hub state changes are announced on. */
  get events(): EventHub {
    return this.#events;
  }

  /** The clock time now. */
  now(): number {
    return this.clock.now();
  }

  /** Announces a change. */
  emit(event: SimEvent): void {
    this.#events.emit(event);
  }

  /** Completes detaches whose delay has passed. */
  settle(): void {
    const now = this.clock.now();
    for (const eni of this.enis.values()) {
      const a = eni.attachment;
      if (a?.detachingUntil !== undefined && a.detachingUntil <= now) {
        eni.attachment = undefined;
        this.emit({
          type: 'eni-detached',
          eniId: eni.id,
          instanceId: a.instanceId,
          attachmentId: a.id,
          mac: eni.mac,
        });
      }
    }
  }

  /** A maker of addresses assigned now (visible after the current eventual-consistency and IMDS delays). */
  assigned(): (value: string) => AssignedAddress {
    const now = this.now();
    const visibleAt = now + this.timing.eventualConsistencyMs;
    const imdsVisibleAt = Math.max(visibleAt, now + this.timing.imdsDelayMs);
    return (value) => ({ value, visibleAt, imdsVisibleAt });
  }

  /** Every address and prefix of an ENI. */
  addressesOf(eni: Eni): AddressChange {
    return {
      ipv4: values(eni.privateIps),
      ipv4Prefixes: values(eni.ipv4Prefixes),
      ipv6: values(eni.ipv6Addresses),
      ipv6Prefixes: values(eni.ipv6Prefixes),
    };
  }

  /** The instance an ENI is attached to, if any. */
  instanceOf(eni: Eni): Instance | undefined {
    return eni.attachment ? this.instances.get(eni.attachment.instanceId) : undefined;
  }

  /** True when Describe* shows the ENI now. */
  isVisible(eni: Eni): boolean {
    return this.now() >= eni.visibleAt;
  }

  /** An ENI named by a caller: `InvalidNetworkInterfaceID.Malformed` / `.NotFound` otherwise. */
  requireEni(id: string): Eni {
    this.settle();
    if (!/^eni-[0-9a-f]{8,17}$/.test(id)) {
      throw new Ec2SimError(
        'InvalidNetworkInterfaceID.Malformed',
        `Invalid id: "${id}" (expecting "eni-...")`,
      );
    }
    const eni = this.enis.get(id);
    if (!eni || (this.timing.eventualConsistencyScope === 'all' && !this.isVisible(eni))) {
      throw new Ec2SimError(
        'InvalidNetworkInterfaceID.NotFound',
        `The networkInterface ID '${id}' does not exist`,
      );
    }
    return eni;
  }

  /** An instance named by a caller: `InvalidInstanceID.Malformed` / `.NotFound` otherwise. */
  requireInstance(id: string): Instance {
    const inst = this.instances.get(id);
    if (!inst) {
      if (!/^i-[0-9a-f]{8,17}$/.test(id)) {
        throw new Ec2SimError('InvalidInstanceID.Malformed', `Invalid id: "${id}"`);
      }
      throw new Ec2SimError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    }
    return inst;
  }

  /** A subnet named by a caller: `InvalidSubnetID.NotFound` otherwise. */
  requireSubnet(id: string): Subnet {
    const s = this.subnets.get(id);
    if (!s) throw new Ec2SimError('InvalidSubnetID.NotFound', `The subnet ID '${id}' does not exist`);
    return s;
  }

  /** A security group named by a caller: `InvalidGroup.NotFound` otherwise. */
  requireGroup(id: string): SecurityGroup {
    const g = this.groups.get(id);
    if (!g) throw new Ec2SimError('InvalidGroup.NotFound', `The security group '${id}' does not exist`);
    return g;
  }

  /**
   * The groups for an interface in `vpcId`: the VPC's `default` group when none are given, at most 5,
   * each in that VPC; duplicates collapse.
   */
  checkGroups(groups: readonly string[] | undefined, vpcId: string): string[] {
    if (!groups || groups.length === 0) {
      const def = [...this.groups.values()].find((g) => g.vpcId === vpcId && g.name === 'default');
      return def ? [def.id] : [];
    }
    if (groups.length > 5) {
      throw new Ec2SimError(
        'SecurityGroupsPerInterfaceLimitExceeded',
        'You have exceeded the maximum number of security groups per interface (5).',
      );
    }
    for (const id of groups) {
      const g = this.groups.get(id);
      if (!g || g.vpcId !== vpcId) {
        throw new Ec2SimError(
          'InvalidGroup.NotFound',
          `The security group '${id}' does not exist in VPC '${vpcId}'`,
        );
      }
    }
    return [...new Set(groups)];
  }

  /** Validates tag pairs (key length, `aws:` prefix, value length, count) into a map. */
  checkTags(tags: readonly (readonly [string, string])[]): Map<string, string> {
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
