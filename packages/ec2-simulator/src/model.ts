import type { Ipv4Pool, Ipv6Pool } from './address-pool.js';
import type { InstanceTypeInfo } from './instance-types.js';

/** A VPC. */
export interface Vpc {
  /** `vpc-…` */
  readonly id: string;
  /** IPv4 CIDR blocks, primary first. */
  readonly cidrBlocks: readonly string[];
  /** Optional IPv6 block (/56). */
  readonly ipv6CidrBlock: string | undefined;
}

/** A subnet with its address pools. */
export interface Subnet {
  /** `subnet-…` */
  readonly id: string;
  /** Owning VPC. */
  readonly vpcId: string;
  /** IPv4 CIDR. */
  readonly cidrBlock: string;
  /** Optional IPv6 CIDR (/64). */
  readonly ipv6CidrBlock: string | undefined;
  /** Availability zone, e.g. `us-west-2a`. */
  readonly availabilityZone: string;
  /** Tags. */
  readonly tags: Map<string, string>;
  /** IPv4 allocation state. */
  readonly ipv4: Ipv4Pool;
  /** IPv6 allocation state (when the subnet has an IPv6 CIDR). */
  readonly ipv6: Ipv6Pool | undefined;
}

/** A security group. */
export interface SecurityGroup {
  /** `sg-…` */
  readonly id: string;
  /** Group name. */
  readonly name: string;
  /** Description. */
  readonly description: string;
  /** Owning VPC. */
  readonly vpcId: string;
  /** Tags. */
  readonly tags: Map<string, string>;
  /** Ingress and egress rules, in the order they were authorized. */
  rules: SecurityGroupRule[];
}

/**
 * One security group rule, normalised: protocol `-1` (all), `tcp`, `udp`, `icmp` or a protocol number; ports
 * `-1` when the protocol has none (for `icmp`: `fromPort` is the ICMP type, `toPort` the code, `-1` = any).
 * Exactly one of `cidrIpv4` and `referencedGroupId` names the peer.
 */
export interface SecurityGroupRule {
  /** `sgr-…` */
  readonly id: string;
  /** The group it belongs to. */
  readonly groupId: string;
  /** Egress (outbound) rather than ingress (inbound). */
  readonly isEgress: boolean;
  /** `-1`, `tcp`, `udp`, `icmp` or a protocol number as text. */
  readonly ipProtocol: string;
  /** First port (or ICMP type); `-1` when not applicable. */
  readonly fromPort: number;
  /** Last port (or ICMP code); `-1` when not applicable. */
  readonly toPort: number;
  /** The peer as an IPv4 CIDR. */
  readonly cidrIpv4: string | undefined;
  /** The peer as a security group: every address of every interface in that group. */
  readonly referencedGroupId: string | undefined;
  /** Description. */
  readonly description: string;
}

/** A branch ENI associated with a trunk ENI under a VLAN id. */
export interface TrunkAssociation {
  /** `trunk-assoc-…` */
  readonly id: string;
  /** The branch interface. */
  readonly branchEniId: string;
  /** The trunk interface. */
  readonly trunkEniId: string;
  /** VLAN id, 1–4094, unique on its trunk. */
  readonly vlanId: number;
  /** Creation time (ms). */
  readonly createdAt: number;
  /** The branch carries traffic from this time (a slow-association fault delays it). */
  readonly readyAt: number;
  /** Tags. */
  readonly tags: Map<string, string>;
}

/** A running instance. */
export interface Instance {
  /** `i-…` */
  readonly id: string;
  /** Type and its limits. */
  readonly type: InstanceTypeInfo;
  /** Subnet of the primary interface. */
  readonly subnetId: string;
  /** VPC. */
  readonly vpcId: string;
  /** AZ. */
  readonly availabilityZone: string;
  /** Launch time (ms). */
  readonly launchTime: number;
  /** The primary interface (device 0). */
  readonly primaryEniId: string;
  /** Tags. */
  readonly tags: Map<string, string>;
}

/** An address (or prefix) on an ENI, with the times it becomes visible. */
export interface AssignedAddress {
  /** Address or CIDR text. */
  readonly value: string;
  /** When Describe* starts showing it (eventual consistency). */
  readonly visibleAt: number;
  /** When IMDS starts showing it. */
  readonly imdsVisibleAt: number;
}

/** An ENI attachment. */
export interface Attachment {
  /** `eni-attach-…` */
  readonly id: string;
  /** Instance. */
  readonly instanceId: string;
  /** Device index on its card. */
  readonly deviceIndex: number;
  /** Network card index. */
  readonly networkCardIndex: number;
  /** Attach time (ms). */
  readonly attachTime: number;
  /** Status is `attaching` until this time. */
  readonly attachedAt: number;
  /** IMDS lists the interface from this time. */
  readonly imdsVisibleAt: number;
  /** Set while detaching: the time the detach completes. */
  detachingUntil: number | undefined;
  /** Delete the ENI when the instance terminates. */
  deleteOnTermination: boolean;
}

/** The interface types EC2 knows. */
export type InterfaceType = 'interface' | 'efa' | 'efa-only' | 'trunk' | 'branch';

/** A network interface. */
export interface Eni {
  /** `eni-…` */
  readonly id: string;
  /** Subnet. */
  readonly subnetId: string;
  /** VPC. */
  readonly vpcId: string;
  /** AZ. */
  readonly availabilityZone: string;
  /** MAC, lower-case colon form. */
  readonly mac: string;
  /** Interface type (`branch` while associated with a trunk). */
  interfaceType: InterfaceType;
  /** Description. */
  description: string;
  /** Security group ids. */
  groups: string[];
  /** Tags. */
  readonly tags: Map<string, string>;
  /** Source/destination check. */
  sourceDestCheck: boolean;
  /** Private IPv4 addresses, primary first. */
  privateIps: AssignedAddress[];
  /** IPv4 /28 prefixes. */
  ipv4Prefixes: AssignedAddress[];
  /** IPv6 addresses. */
  ipv6Addresses: AssignedAddress[];
  /** IPv6 /80 prefixes. */
  ipv6Prefixes: AssignedAddress[];
  /** Current attachment. */
  attachment: Attachment | undefined;
  /** Creation time (ms). */
  readonly createdAt: number;
  /** When Describe* starts showing the ENI. */
  readonly visibleAt: number;
  /** Created with an instance (the primary interface). */
  readonly primary: boolean;
}
