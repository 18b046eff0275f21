/** One network card of an instance type. */
export interface NetworkCardInfo {
  /** Card index. */
  readonly index: number;
  /** Interfaces this card accepts. */
  readonly maximumNetworkInterfaces: number;
}

/** The network limits of an instance type, as DescribeInstanceTypes reports them. */
export interface InstanceTypeInfo {
  /** The type name, e.g. `m5.large`. */
  readonly name: string;
  /** Interfaces across all cards. */
  readonly maximumNetworkInterfaces: number;
  /** IPv4 addresses per interface (primary included; every /28 prefix takes one slot). */
  readonly ipv4AddressesPerInterface: number;
  /** IPv6 addresses per interface. */
  readonly ipv6AddressesPerInterface: number;
  /** Network cards. */
  readonly networkCards: readonly NetworkCardInfo[];
  /** Card that holds the primary interface. */
  readonly defaultNetworkCardIndex: number;
  /** `nitro` or `xen`. */
  readonly hypervisor: 'nitro' | 'xen';
  /** Bare-metal instance. */
  readonly bareMetal: boolean;
  /** Marketing network performance string. */
  readonly networkPerformance: string;
  /** A trunk interface may be attached (security groups for pods). */
  readonly isTrunkingCompatible: boolean;
  /** Branch interfaces one trunk of this type carries (0 when not trunking-compatible). */
  readonly branchInterfaces: number;
}

/** An instance type as a scenario declares it (one network card). */
export interface InstanceTypeSpec {
  /** The type name, e.g. `m6i.large`. */
  readonly name: string;
  /** Interfaces (all on card 0). */
  readonly maximumNetworkInterfaces: number;
  /** IPv4 addresses per interface. */
  readonly ipv4AddressesPerInterface: number;
  /** IPv6 addresses per interface (default: as IPv4). */
  readonly ipv6AddressesPerInterface?: number;
  /** Branch interfaces per trunk; 0 (default) = not trunking-compatible. */
  readonly branchInterfaces?: number;
  /** Hypervisor (default `nitro`). */
  readonly hypervisor?: 'nitro' | 'xen';
  /** Network performance text (default `Up to 10 Gigabit`). */
  readonly networkPerformance?: string;
}

/** The limits of a declared one-card instance type. */
export function instanceType(spec: InstanceTypeSpec): InstanceTypeInfo {
  const t = simple(
    spec.name,
    spec.maximumNetworkInterfaces,
    spec.ipv4AddressesPerInterface,
    spec.hypervisor ?? 'nitro',
    spec.networkPerformance ?? 'Up to 10 Gigabit',
    spec.branchInterfaces ?? 0,
  );
  return { ...t, ipv6AddressesPerInterface: spec.ipv6AddressesPerInterface ?? t.ipv4AddressesPerInterface };
}

/** The built-in table with `declared` types added (a declared name replaces the built-in row). */
export function instanceTypeTable(
  declared: readonly InstanceTypeSpec[] = [],
): ReadonlyMap<string, InstanceTypeInfo> {
  if (declared.length === 0) return INSTANCE_TYPES;
  const table = new Map(INSTANCE_TYPES);
  for (const d of declared) table.set(d.name, instanceType(d));
  return table;
}

function simple(
  name: string,
  enis: number,
  ipv4: number,
  hypervisor: 'nitro' | 'xen',
  networkPerformance: string,
  branchInterfaces = 0,
): InstanceTypeInfo {
  return {
    name,
    maximumNetworkInterfaces: enis,
    ipv4AddressesPerInterface: ipv4,
    ipv6AddressesPerInterface: ipv4,
    networkCards: [{ index: 0, maximumNetworkInterfaces: enis }],
    defaultNetworkCardIndex: 0,
    hypervisor,
    bareMetal: false,
    networkPerformance,
    isTrunkingCompatible: branchInterfaces > 0,
    branchInterfaces,
  };
}

/**
 * Public limits of common instance types (AWS documentation, "IP addresses per network interface per instance
 * type"; trunking compatibility and branch-interface counts as the VPC resource controller's limits table
 * lists them). p5.48xlarge has 32 network cards of 2 interfaces each. The last argument of each row is the
 * branch-interface count (0 = not trunking-compatible); add a row to support another type.
 */
export const INSTANCE_TYPES: ReadonlyMap<string, InstanceTypeInfo> = new Map(
  [
    simple('t3.small', 3, 4, 'nitro', 'Up to 5 Gigabit'),
    simple('t3.medium', 3, 6, 'nitro', 'Up to 5 Gigabit'),
    simple('t3.large', 3, 12, 'nitro', 'Up to 5 Gigabit'),
    simple('m5.large', 3, 10, 'nitro', 'Up to 10 Gigabit', 9),
    simple('m5.xlarge', 4, 15, 'nitro', 'Up to 10 Gigabit', 18),
    simple('m5.2xlarge', 4, 15, 'nitro', 'Up to 10 Gigabit', 38),
    simple('m5.4xlarge', 8, 30, 'nitro', 'Up to 10 Gigabit', 54),
    simple('c5.large', 3, 10, 'nitro', 'Up to 10 Gigabit', 9),
    simple('c5.xlarge', 4, 15, 'nitro', 'Up to 10 Gigabit', 18),
    simple('c5.18xlarge', 15, 50, 'nitro', '25 Gigabit', 107),
    simple('m4.large', 2, 10, 'xen', 'Moderate'),
    simple('t2.medium', 3, 6, 'xen', 'Low to Moderate'),
    {
      name: 'p5.48xlarge',
      maximumNetworkInterfaces: 64,
      ipv4AddressesPerInterface: 50,
      ipv6AddressesPerInterface: 50,
      networkCards: Array.from({ length: 32 }, (_, index) => ({ index, maximumNetworkInterfaces: 2 })),
      defaultNetworkCardIndex: 0,
      hypervisor: 'nitro',
      bareMetal: false,
      networkPerformance: '3200 Gigabit',
      isTrunkingCompatible: true,
      branchInterfaces: 120,
    } satisfies InstanceTypeInfo,
  ].map((t) => [t.name, t]),
);
