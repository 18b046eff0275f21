import type { AddressAllocation } from './address-pool.js';
import type { Clock, RandomSource } from './clock.js';
import type { SimEvent } from './events.js';
import type { InstanceTypeInfo } from './instance-types.js';
import type { InterfaceType } from './model.js';

/** Delays that shape how changes become visible; the fault injector changes them at run time. */
export interface Timing {
  /** A new ENI or address is invisible to Describe* (and IMDS) for this long. */
  eventualConsistencyMs: number;
  /**
   * `reads` (default): only Describe* and IMDS miss a new ENI. `all`: mutating calls naming it also answer
   * `InvalidNetworkInterfaceID.NotFound` until it is visible, as EC2 sometimes does.
   */
  eventualConsistencyScope?: 'reads' | 'all';
  /** An attachment stays `attaching` (and out of IMDS) for this long. */
  attachDelayMs: number;
  /** An attachment stays `detaching` (ENI `in-use`) for this long. */
  detachDelayMs: number;
  /** IMDS reflects attachments and new addresses only after this long. */
  imdsDelayMs: number;
  /** A new trunk association carries traffic only after this long (default 0). */
  associateDelayMs?: number;
}

/** Options of {@link Ec2State}. */
export interface Ec2StateOptions {
  /** Time source. */
  readonly clock: Clock;
  /** Random source for ids, MACs and random address picks. */
  readonly random: RandomSource;
  /** Account id shown as owner. */
  readonly accountId: string;
  /** How free addresses are chosen. */
  readonly addressAllocation: AddressAllocation;
  /** Initial timing. */
  readonly timing?: Partial<Timing>;
  /** The instance types DescribeInstanceTypes knows (default: `INSTANCE_TYPES`). */
  readonly instanceTypes?: ReadonlyMap<string, InstanceTypeInfo>;
  /** Called when an event listener throws. */
  readonly onListenerError?: (error: unknown, event: SimEvent) => void;
}

/** Parameters of {@link Ec2State.createNetworkInterface}, already checked for shape by the action parser. */
export interface CreateEniRequest {
  /** Subnet. */
  readonly subnetId: string;
  /** Description. */
  readonly description?: string | undefined;
  /** Security groups (default: the VPC's default group). */
  readonly groups?: readonly string[] | undefined;
  /** Primary private address. */
  readonly primaryAddress?: string | undefined;
  /** Explicit addresses; at most one marked primary. */
  readonly addresses?: readonly ExplicitAddress[] | undefined;
  /** Number of secondary addresses to pick. */
  readonly secondaryCount?: number | undefined;
  /** Explicit /28 prefixes. */
  readonly ipv4Prefixes?: readonly string[] | undefined;
  /** Number of /28 prefixes to pick. */
  readonly ipv4PrefixCount?: number | undefined;
  /** Explicit IPv6 addresses. */
  readonly ipv6Addresses?: readonly string[] | undefined;
  /** Number of IPv6 addresses to pick. */
  readonly ipv6Count?: number | undefined;
  /** Explicit IPv6 /80 prefixes. */
  readonly ipv6Prefixes?: readonly string[] | undefined;
  /** Number of IPv6 /80 prefixes to pick. */
  readonly ipv6PrefixCount?: number | undefined;
  /** Interface type. */
  readonly interfaceType?: InterfaceType | undefined;
  /** Tags. */
  readonly tags?: readonly (readonly [string, string])[] | undefined;
  /** Idempotency token. */
  readonly clientToken?: string | undefined;
}

/** Parameters of {@link Ec2State.assignPrivateIps}. */
export interface AssignIpv4Request {
  /** Explicit addresses. */
  readonly addresses?: readonly string[] | undefined;
  /** Number of addresses to pick. */
  readonly count?: number | undefined;
  /** Explicit prefixes. */
  readonly prefixes?: readonly string[] | undefined;
  /** Number of prefixes to pick. */
  readonly prefixCount?: number | undefined;
  /** Move addresses held by other ENIs. */
  readonly allowReassignment?: boolean | undefined;
}

/** Parameters of {@link Ec2State.assignIpv6}. */
export interface AssignIpv6Request {
  /** Explicit addresses. */
  readonly addresses?: readonly string[] | undefined;
  /** Number of addresses to pick. */
  readonly count?: number | undefined;
  /** Explicit /80 prefixes. */
  readonly prefixes?: readonly string[] | undefined;
  /** Number of prefixes to pick. */
  readonly prefixCount?: number | undefined;
}

/** One entry of `PrivateIpAddresses.N` in CreateNetworkInterface. */
export interface ExplicitAddress {
  /** The IPv4 address. */
  readonly address: string;
  /** Whether it is the primary address. */
  readonly primary: boolean;
}

/** What an assign call handed out. */
export interface AssignResult {
  /** Addresses assigned. */
  readonly addresses: string[];
  /** Prefixes assigned. */
  readonly prefixes: string[];
}

/** One rule as the Authorize and Revoke security group actions name it (before normalisation). */
export interface RuleRequest {
  /** `tcp`, `udp`, `icmp`, `-1`/`all` or a protocol number. */
  readonly ipProtocol: string;
  /** First port (or ICMP type). */
  readonly fromPort?: number | undefined;
  /** Last port (or ICMP code). */
  readonly toPort?: number | undefined;
  /** Peer CIDR. */
  readonly cidrIpv4?: string | undefined;
  /** Peer security group. */
  readonly referencedGroupId?: string | undefined;
  /** Description. */
  readonly description?: string | undefined;
}

/** Parameters of {@link Ec2State.createSecurityGroup}. */
export interface CreateSecurityGroupRequest {
  /** Name, unique in the VPC; not `default`, not `sg-…`. */
  readonly name: string;
  /** Description (required by EC2). */
  readonly description: string;
  /** VPC. */
  readonly vpcId: string;
  /** Tags. */
  readonly tags?: readonly (readonly [string, string])[] | undefined;
}
