import type { AddressFamily } from './address.js';

/**
 * Identifies one pod interface, as the CNI runtime names it: `{networkName, containerID, ifName}`
 * (the reference's `IPAMKey`). Assignment is idempotent per key.
 */
export interface PodKey {
  /** CNI network name, e.g. `aws-cni`. */
  readonly networkName: string;
  /** Sandbox (container) id. */
  readonly containerID: string;
  /** Interface name inside the pod, e.g. `eth0`. */
  readonly ifName: string;
}

/** Kubernetes facts about the pod that owns an address (the reference's `IPAMMetadata`). */
export interface PodMetadata {
  /** Pod namespace (`k8sPodNamespace` in the checkpoint). */
  readonly namespace?: string;
  /** Pod name (`k8sPodName` in the checkpoint). */
  readonly name?: string;
  /** How many interfaces (addresses) the pod has across network cards; 0 or absent means 1. */
  readonly interfacesCount?: number;
}

/** What the datastore needs to know about an ENI when it is added. */
export interface EniSpec {
  /** ENI id, e.g. `eni-0123456789abcdef0`. */
  readonly id: string;
  /** Device index on the instance (0 is the primary ENI). */
  readonly deviceNumber: number;
  /** Routing table for pods on this ENI (the reference uses 254/main for the primary, device + 1 otherwise). */
  readonly routeTableId: number;
  /** Subnet the ENI lives in. */
  readonly subnetId: string;
  /** EC2 network card index (default 0). */
  readonly networkCard?: number;
  /** The instance's primary ENI: never freed. */
  readonly isPrimary?: boolean;
  /** A trunk ENI (security groups for pods): never used for pod addresses, never freed. */
  readonly isTrunk?: boolean;
  /** An EFA ENI: never freed. */
  readonly isEfa?: boolean;
  /** Excluded for pod IPs (e.g. tagged `no_manage` by an operator): kept, never assigned from. */
  readonly excluded?: boolean;
  /** When the ENI was attached, ms since epoch; defaults to the clock's now. */
  readonly createdAt?: number;
}

/** The result of a successful assign: what the plugin needs to plumb the pod. */
export interface AssignResult {
  /** The pod's address (canonical text). */
  readonly address: string;
  /** The ENI it lives on. */
  readonly eniId: string;
  /** That ENI's device number. */
  readonly deviceNumber: number;
  /** That ENI's route table id. */
  readonly routeTableId: number;
  /** The CIDR (secondary /32 or prefix) the address came from. */
  readonly cidr: string;
}

/** One current assignment: a pod key holding an address. */
export interface Assignment {
  /** The owner. */
  readonly key: PodKey;
  /** Pod metadata recorded at assign time. */
  readonly metadata: PodMetadata;
  /** The address. */
  readonly address: string;
  /** Address family of `address`. */
  readonly family: AddressFamily;
  /** The ENI it lives on. */
  readonly eniId: string;
  /** The CIDR it came from. */
  readonly cidr: string;
  /** When it was assigned, ms since epoch. */
  readonly assignedAt: number;
}

/** An address a pod held and gave back, still in the datastore (the reference's `UnassignedTime` history). */
export interface ReleasedAddress {
  /** The address. */
  readonly address: string;
  /** The ENI it lives on. */
  readonly eniId: string;
  /** The CIDR it comes from. */
  readonly cidr: string;
  /** When it was last assigned, ms since epoch. */
  readonly assignedAt: number;
  /** When it was released, ms since epoch. */
  readonly unassignedAt: number;
}

/** The result of unassigning a pod: the released address and where it lived. */
export interface UnassignResult extends AssignResult {
  /** The pod's interface count; 0 is reported as 1, as the reference does. */
  readonly interfacesCount: number;
  /** The pod key actually found: the one asked for, or the legacy key it fell back to. */
  readonly key: PodKey;
}

/** Per-CIDR counters in {@link DatastoreStats}. */
export interface CidrStats {
  /** Canonical CIDR text. */
  readonly cidr: string;
  /** True for a /28 or /80 prefix, false for a /32 secondary address. */
  readonly isPrefix: boolean;
  /** Address family. */
  readonly family: AddressFamily;
  /** Number of addresses in the CIDR (1, 16, or 2^48). */
  readonly size: number;
  /** Addresses currently assigned to pods. */
  readonly assigned: number;
  /** Unassigned addresses still inside the cooldown period. */
  readonly cooldown: number;
}

/** Per-ENI counters in {@link DatastoreStats}. */
export interface EniStats {
  /** ENI id. */
  readonly id: string;
  /** Device number. */
  readonly deviceNumber: number;
  /** Network card index. */
  readonly networkCard: number;
  /** The route table of its pods' from-pod rules (254 for the primary ENI). */
  readonly routeTableId: number;
  /** Its subnet. */
  readonly subnetId: string;
  /** Primary ENI flag. */
  readonly isPrimary: boolean;
  /** Trunk ENI flag. */
  readonly isTrunk: boolean;
  /** EFA ENI flag. */
  readonly isEfa: boolean;
  /** Excluded-for-pod-IPs flag. */
  readonly excluded: boolean;
  /** When the ENI was attached, ms since epoch. */
  readonly createdAt: number;
  /** Addresses in this ENI's CIDRs of the current mode and family. */
  readonly totalIPs: number;
  /** Assigned addresses on this ENI (all CIDRs). */
  readonly assignedIPs: number;
  /** Cooling addresses on this ENI (all CIDRs). */
  readonly cooldownIPs: number;
  /** Every CIDR on the ENI, in address order. */
  readonly cidrs: readonly CidrStats[];
}

/**
 * Datastore counters, computed the way the reference's `GetIPStats` does: totals skip excluded ENIs and count
 * only the CIDRs of the current mode (prefixes with prefix delegation, /32s otherwise) and family;
 * `availableIPs = totalIPs − assignedIPs`, so cooling addresses count as available for pool maths.
 * `totalPrefixes` counts prefixes on every ENI. The shape is what `@vpc-cni-kit/warm-pool` takes as input.
 */
export interface DatastoreStats {
  /** Sum of CIDR sizes (current mode, non-excluded ENIs). */
  readonly totalIPs: number;
  /** Assigned addresses (current mode, non-excluded ENIs). */
  readonly assignedIPs: number;
  /** Cooling addresses (current mode, non-excluded ENIs). */
  readonly cooldownIPs: number;
  /** `totalIPs − assignedIPs`. */
  readonly availableIPs: number;
  /** Prefixes of the datastore's family on all ENIs. */
  readonly totalPrefixes: number;
  /** Every ENI, in device-number order. */
  readonly enis: readonly EniStats[];
}

/** What a pool shrink may release: CIDRs and ENIs holding no assigned and no cooling address. */
export interface Releasable {
  /** Empty CIDRs of the current mode on non-excluded ENIs, least-used ENI first. */
  readonly cidrs: readonly { readonly eniId: string; readonly cidr: string }[];
  /** Empty ENIs that are not primary, trunk, EFA or excluded. */
  readonly enis: readonly string[];
}

/** An assignment dropped by a forced ENI or CIDR removal. */
export interface DroppedAssignment {
  /** The pod that lost its address. */
  readonly key: PodKey;
  /** Its metadata. */
  readonly metadata: PodMetadata;
  /** The address. */
  readonly address: string;
  /** The CIDR it was in. */
  readonly cidr: string;
}
