/**
 * One CIDR as the policy sees it. `@vpc-cni-kit/datastore`'s `CidrStats` has this shape (and more).
 */
export interface PoolCidr {
  /** Canonical CIDR text. */
  readonly cidr: string;
  /** True for a /28 prefix, false for a /32 secondary address. */
  readonly isPrefix: boolean;
  /** Addresses in the CIDR (1 or 16). */
  readonly size: number;
  /** Addresses assigned to pods. */
  readonly assigned: number;
  /** Unassigned addresses still cooling down. */
  readonly cooldown: number;
  /** Address family; IPv6 CIDRs are ignored (the reference runs no pool loop for IPv6). Default 4. */
  readonly family?: 4 | 6;
}

/** One ENI as the policy sees it. `@vpc-cni-kit/datastore`'s `EniStats` has this shape (and more). */
export interface PoolEni {
  /** ENI id. */
  readonly id: string;
  /** Device number (0 = primary). */
  readonly deviceNumber: number;
  /** The instance's primary ENI. */
  readonly isPrimary: boolean;
  /** A trunk ENI (security groups for pods). */
  readonly isTrunk: boolean;
  /** An EFA ENI. */
  readonly isEfa: boolean;
  /** Excluded for pod IPs: its CIDRs don't count and it is never filled or freed. */
  readonly excluded: boolean;
  /** When the ENI was attached, ms since epoch (its age is `timing.now − createdAt`). */
  readonly createdAt: number;
  /** Addresses assigned to pods on this ENI. */
  readonly assignedIPs: number;
  /** Addresses cooling down on this ENI. */
  readonly cooldownIPs: number;
  /** The ENI's CIDRs. */
  readonly cidrs: readonly PoolCidr[];
}

/**
 * The datastore's state, as the policy needs it. `Datastore.stats()` from `@vpc-cni-kit/datastore` returns
 * a value of this shape, so it can be passed straight in.
 */
export interface PoolStats {
  /** Every ENI in the datastore (excluded ones too: they count against the ENI limit). */
  readonly enis: readonly PoolEni[];
}

/**
 * The reference's warm-pool knobs, already parsed (the reference's rules: `WARM_ENI_TARGET` missing,
 * invalid or negative → 1; the others → 0). 0 means "not set".
 */
export interface PoolTargets {
  /** `WARM_ENI_TARGET`: free ENIs' worth of addresses to keep (ignored when IP targets are set, or with PD). */
  readonly warmEniTarget: number;
  /** `WARM_IP_TARGET`: free addresses to keep; with `minimumIpTarget`, takes precedence over the others. */
  readonly warmIpTarget: number;
  /** `MINIMUM_IP_TARGET`: floor on total addresses. */
  readonly minimumIpTarget: number;
  /** `WARM_PREFIX_TARGET`: free /28 prefixes to keep (prefix delegation only). */
  readonly warmPrefixTarget: number;
  /** `ENABLE_PREFIX_DELEGATION`: allocate /28 prefixes instead of /32 secondary addresses. */
  readonly prefixDelegation: boolean;
}

/** The reference's defaults: WARM_ENI_TARGET=1, everything else unset, no prefix delegation. */
export const DEFAULT_TARGETS: PoolTargets = {
  warmEniTarget: 1,
  warmIpTarget: 0,
  minimumIpTarget: 0,
  warmPrefixTarget: 0,
  prefixDelegation: false,
};

/** Instance and node limits. */
export interface PoolLimits {
  /** ENIs the instance (network card) supports, e.g. 3 on m5.large. */
  readonly maxEnis: number;
  /** IPv4 addresses per ENI including the ENI's primary address, e.g. 10 on m5.large. */
  readonly ipv4PerEni: number;
  /** `MAX_ENI`; values < 1 are ignored. */
  readonly maxEniSetting?: number;
  /** The node's max pods: no growth once the pool holds this many addresses. */
  readonly maxPods: number;
  /** ENIs kept free for a trunk ENI (1 with security groups for pods and no trunk yet, else 0). */
  readonly trunkReserve?: number;
  /** Attached ENIs the daemon does not manage (they count against the limit). */
  readonly unmanagedEnis?: number;
  /** Custom networking (ENIConfig): the primary ENI is not filled with pod addresses. */
  readonly customNetworking?: boolean;
}

/** Time, as data: the policy never reads a clock. All values are ms since epoch. */
export interface PoolTiming {
  /** Now. */
  readonly now: number;
  /** When CIDRs were last released (shrinks happen at most every 30 s). */
  readonly lastShrinkAt?: number;
  /**
   * When EC2 last answered `InsufficientCidrBlocks` or `InsufficientFreeAddressesInSubnet`: no growth for
   * 120 s after.
   */
  readonly lastInsufficientAddressesAt?: number;
}

/** Everything {@link decide} looks at. */
export interface PoolInput {
  /** Datastore state. */
  readonly stats: PoolStats;
  /** The knobs. */
  readonly targets: PoolTargets;
  /** The limits. */
  readonly limits: PoolLimits;
  /** The time facts. */
  readonly timing: PoolTiming;
}

/** Why a decision was made: a stable code and a human sentence with the numbers. */
export interface DecisionReason {
  /** Stable code; see {@link ReasonCode}. */
  readonly code: ReasonCode;
  /** Human-readable explanation with the numbers that led to it. */
  readonly message: string;
}

/**
 * Reason codes.
 * - `within-targets`: the pool is neither too low nor too high, and no ENI is extra.
 * - `at-max-pods`: the pool is short, but already holds max-pods addresses.
 * - `subnet-backoff`: short, but within 120 s of a subnet-full error.
 * - `no-room`: short, but every ENI is full and no more ENIs may be attached.
 * - `shrink-too-soon`: too high, but the last shrink was under 30 s ago.
 * - `nothing-releasable`: too high, but every excess CIDR holds assigned or cooling addresses.
 * - `below-warm-ip-target` / `below-minimum-ip-target`: short of WARM_IP_TARGET / MINIMUM_IP_TARGET.
 * - `below-warm-prefix-target`: fewer free prefixes than WARM_PREFIX_TARGET (PD).
 * - `below-warm-eni-target`: fewer free addresses than WARM_ENI_TARGET ENIs' worth.
 * - `above-ip-targets`: more free addresses than WARM_IP_TARGET/MINIMUM_IP_TARGET need.
 * - `above-warm-prefix-target`: more free prefixes than WARM_PREFIX_TARGET (PD).
 * - `extra-eni`: an empty, old-enough ENI that no target needs.
 * - `eni-headroom`: (adaptive) attach an ENI with one address so a burst is an assign away, not an attach.
 */
export type ReasonCode =
  | 'within-targets'
  | 'at-max-pods'
  | 'subnet-backoff'
  | 'no-room'
  | 'shrink-too-soon'
  | 'nothing-releasable'
  | 'below-warm-ip-target'
  | 'below-minimum-ip-target'
  | 'below-warm-prefix-target'
  | 'below-warm-eni-target'
  | 'above-ip-targets'
  | 'above-warm-prefix-target'
  | 'extra-eni'
  | 'eni-headroom';

/** What to allocate: /32 secondary addresses or /28 prefixes. */
export type AllocationUnit = 'ip' | 'prefix';

/**
 * The one thing to do now.
 * - `none`: nothing.
 * - `assign`: add `count` IPs or prefixes to ENI `eniId` (EC2 `AssignPrivateIpAddresses`).
 * - `create-eni`: create and attach an ENI with `count` IPs or prefixes.
 * - `release`: release these empty CIDRs (EC2 `UnassignPrivateIpAddresses`), then record the shrink time.
 * - `free-eni`: detach and delete ENI `eniId`.
 */
export type PoolDecision =
  | { readonly kind: 'none'; readonly reason: DecisionReason }
  | {
      readonly kind: 'assign';
      readonly eniId: string;
      readonly unit: AllocationUnit;
      readonly count: number;
      readonly reason: DecisionReason;
    }
  | {
      readonly kind: 'create-eni';
      readonly unit: AllocationUnit;
      readonly count: number;
      readonly reason: DecisionReason;
    }
  | {
      readonly kind: 'release';
      readonly cidrs: readonly { readonly eniId: string; readonly cidr: string }[];
      readonly reason: DecisionReason;
    }
  | { readonly kind: 'free-eni'; readonly eniId: string; readonly reason: DecisionReason };
