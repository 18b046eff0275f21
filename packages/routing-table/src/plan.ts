import { familyBits } from '@vpc-cni-kit/ip-address';
import { invalidArgument } from './errors.js';
import {
  canonicalIp,
  type Family,
  familyOf,
  formatPrefix,
  parsePrefix,
  prefixContains,
  subnetGateway,
} from './ip.js';
import { routeTableId, validateIfName, validateVethPrefix } from './naming.js';
import { type AddressSpec, MAIN_TABLE, onLinkScope, type RouteSpec, type RuleSpec } from './objects.js';

/** The reference's rule priorities (`ip rule` preferences). */
export const PRIORITY = {
  /** Branch-ENI (SGP strict) iif rules. */
  vlan: 10,
  /** The `local` table rule when moved in SGP strict mode. */
  localStrict: 20,
  /** `to <podIP> lookup main`. */
  toPod: 512,
  /** `fwmark <m>/<m> lookup main` (connmarked traffic leaves through the primary ENI). */
  fwmark: 1024,
  /** `to <external service CIDR> lookup main`. */
  externalService: 1535,
  /** `from <podIP> lookup <ENI table>`. */
  fromPod: 1536,
  /** `from <ENI primary IP> lookup <ENI table>`. */
  fromEni: 32765,
} as const;

/** A link this plan wants up, with an MTU when given. */
export interface LinkPlan {
  /** Interface name. */
  readonly name: string;
  /** MTU to set, when given. */
  readonly mtu?: number | undefined;
}

/**
 * What this plan owns, so a reconcile can delete stale objects: rules at these priorities, every route in
 * these tables, main-table routes through interfaces starting with these prefixes, and global addresses of
 * these devices. Anything else on the node is never touched.
 */
export interface RoutingScope {
  /** Rule priorities owned. */
  readonly rulePriorities: readonly number[];
  /** Tables whose routes are all owned. */
  readonly routeTables: readonly number[];
  /** Owned main-table routes go through links whose names start with one of these. */
  readonly mainRouteDevPrefixes: readonly string[];
  /** Devices whose addresses of the plan's family are owned. */
  readonly addressDevs: readonly string[];
}

/** Desired routing state (pure data): apply with {@link reconcileRouting}, check with {@link verifyRouting}. */
export interface RoutingPlan {
  /** 4 or 6. */
  readonly family: Family;
  /** Links to bring up (and set MTU of). */
  readonly links: readonly LinkPlan[];
  /** Addresses that must exist. */
  readonly addresses: readonly AddressSpec[];
  /** Routes that must exist. */
  readonly routes: readonly RouteSpec[];
  /** Routes that must not exist (e.g. the kernel's subnet route of a secondary ENI in main). */
  readonly absentRoutes: readonly RouteSpec[];
  /** Rules that must exist. */
  readonly rules: readonly RuleSpec[];
  /** What stale objects a reconcile may delete. */
  readonly scope: RoutingScope;
}

/** A secondary ENI as routing needs it. */
export interface EniInput {
  /** Its interface name on the node (e.g. `eth1`, `ens6`). */
  readonly interfaceName: string;
  /** EC2 device number (0 = primary on card 0). */
  readonly deviceNumber: number;
  /** EC2 network card index. @defaultValue `0` */
  readonly networkCard?: number | undefined;
  /** ENI primary IP. */
  readonly primaryIp: string;
  /** Its subnet CIDR (the address gets this mask; the gateway is the subnet base + 1, or `fe80:ec2::1`). */
  readonly subnetCidr: string;
  /** MTU to set. */
  readonly mtu?: number | undefined;
  /** Trunk ENIs get no `from <ENI IP>` rule. */
  readonly trunk?: boolean | undefined;
}

/** The host side of one pod address. */
export interface PodRouteInput {
  /** Pod IP (IPv4 or IPv6, matching the plan's family). */
  readonly podIp: string;
  /** Host veth name. */
  readonly hostVeth: string;
  /** Route table of the ENI owning the address (`254`/main for the primary ENI). */
  readonly table: number;
}

/** Everything node-level routing depends on. */
export interface NodeRoutingInput {
  /** @defaultValue `4` */
  readonly family?: Family | undefined;
  /** ENIs; the primary (card 0, device 0) is skipped, as the reference never sets it up here. */
  readonly enis?: readonly EniInput[] | undefined;
  /** Pod addresses. */
  readonly pods?: readonly PodRouteInput[] | undefined;
  /**
   * The connmark bit for the `fwmark m/m lookup main` rule at 1024; absent → no rule (the reference adds it
   * iff node-port support or not external SNAT).
   */
  readonly fwmark?: number | undefined;
  /** `AWS_EXTERNAL_SERVICE_CIDRS`: rules `to <cidr> lookup main` at 1535. */
  readonly externalServiceCidrs?: readonly string[] | undefined;
  /** Host veth prefix (owned main-table pod routes). @defaultValue `'eni'` */
  readonly vethPrefix?: string | undefined;
}

function wholePrefix(family: Family): string {
  return family === 4 ? '0.0.0.0/0' : '::/0';
}

function hostPrefix(ip: string): string {
  return `${ip}/${familyBits(familyOf(ip))}`;
}

function mtuOf(mtu: number | undefined, op: string): number | undefined {
  if (mtu === undefined) return undefined;
  if (!Number.isInteger(mtu) || mtu < 68 || mtu > 65535) throw invalidArgument(op, `bad MTU: ${mtu}`);
  return mtu;
}

/**
 * Plans one secondary ENI: MTU and up, its primary address with the subnet's mask, `gw/32 scope link` and
 * `default via gw` in its table, the kernel subnet route removed from main and `from <ENI IP> lookup T` at
 * 32765 (not for trunks). The primary ENI (card 0, device 0) uses main and yields an empty plan.
 */
export function planEni(eni: EniInput, family: Family = 4): RoutingPlan {
  const op = 'planEni';
  const dev = validateIfName(eni.interfaceName, `${op}.interfaceName`);
  const table = routeTableId(eni.deviceNumber, eni.networkCard ?? 0);
  const ip = canonicalIp(eni.primaryIp, `${op}.primaryIp`, family);
  const subnet = parsePrefix(eni.subnetCidr, `${op}.subnetCidr`);
  if (subnet.family !== family || !prefixContains(subnet, ip)) {
    throw invalidArgument(op, `${ip} is not inside ${formatPrefix(subnet)}`);
  }
  const mtu = mtuOf(eni.mtu, op);
  if (table === MAIN_TABLE) return emptyPlan(family);
  const gw = family === 4 ? subnetGateway(subnet) : 'fe80:ec2::1';
  return {
    family,
    links: [{ name: dev, mtu }],
    addresses: [{ kind: 'address', family, dev, cidr: `${ip}/${subnet.length}` }],
    routes: [
      { kind: 'route', family, table, dst: hostPrefix(gw), dev, scope: onLinkScope(family) },
      { kind: 'route', family, table, dst: wholePrefix(family), dev, gateway: gw, scope: 'universe' },
    ],
    absentRoutes: [
      family === 4
        ? { kind: 'route', family, table: MAIN_TABLE, dst: formatPrefix(subnet), dev, scope: 'link', src: ip }
        : { kind: 'route', family, table: MAIN_TABLE, dst: formatPrefix(subnet), dev, scope: 'universe' },
    ],
    rules: eni.trunk
      ? []
      : [{ kind: 'rule', family, priority: PRIORITY.fromEni, table, from: hostPrefix(ip) }],
    scope: { rulePriorities: [], routeTables: [table], mainRouteDevPrefixes: [], addressDevs: [dev] },
  };
}

/**
 * Plans the host side of one pod address: `<podIP>/32 dev <hostVeth> scope link` in main, `to <podIP> lookup
 * main` at 512 and, for a secondary-ENI address, `from <podIP> lookup <table>` at 1536.
 */
export function planPodHost(pod: PodRouteInput, family?: Family): RoutingPlan {
  const op = 'planPodHost';
  const ip = canonicalIp(pod.podIp, `${op}.podIp`, family);
  const f = familyOf(ip);
  const dev = validateIfName(pod.hostVeth, `${op}.hostVeth`);
  if (!Number.isInteger(pod.table) || pod.table < 1 || pod.table > 0xffffffff) {
    throw invalidArgument(op, `bad table: ${pod.table}`);
  }
  const rules: RuleSpec[] = [
    { kind: 'rule', family: f, priority: PRIORITY.toPod, table: MAIN_TABLE, to: hostPrefix(ip) },
  ];
  // The reference's legacy RouteTableId 1 also means main.
  if (pod.table !== MAIN_TABLE && pod.table !== 1) {
    rules.push({
      kind: 'rule',
      family: f,
      priority: PRIORITY.fromPod,
      table: pod.table,
      from: hostPrefix(ip),
    });
  }
  return {
    ...emptyPlan(f),
    routes: [
      { kind: 'route', family: f, table: MAIN_TABLE, dst: hostPrefix(ip), dev, scope: onLinkScope(f) },
    ],
    rules,
  };
}

/**
 * Plans node-wide routing: every ENI, every pod's host side, the fwmark rule at 1024 and external-service
 * rules at 1535, with a scope that lets a reconcile delete stale pod routes/rules and stale ENI rules.
 */
export function planNodeRouting(input: NodeRoutingInput): RoutingPlan {
  const family = input.family ?? 4;
  if (family !== 4 && family !== 6) throw invalidArgument('planNodeRouting', 'family must be 4 or 6');
  const prefix = validateVethPrefix(input.vethPrefix ?? 'eni');
  const parts: RoutingPlan[] = [];
  for (const eni of input.enis ?? []) parts.push(planEni(eni, family));
  for (const pod of input.pods ?? []) parts.push(planPodHost(pod, family));
  const rules: RuleSpec[] = [];
  if (input.fwmark !== undefined) {
    const m = input.fwmark;
    if (!Number.isInteger(m) || m <= 0 || m > 0xffffffff)
      throw invalidArgument('planNodeRouting', `bad fwmark: ${m}`);
    rules.push({ kind: 'rule', family, priority: PRIORITY.fwmark, table: MAIN_TABLE, fwmark: m, fwmask: m });
  }
  for (const [i, cidr] of (input.externalServiceCidrs ?? []).entries()) {
    const p = parsePrefix(cidr, `planNodeRouting.externalServiceCidrs[${i}]`);
    if (p.family !== family)
      throw invalidArgument('planNodeRouting', `externalServiceCidrs[${i}] is not IPv${family}`);
    const to = formatPrefix(p);
    if (!rules.some((r) => r.to === to && r.priority === PRIORITY.externalService)) {
      rules.push({ kind: 'rule', family, priority: PRIORITY.externalService, table: MAIN_TABLE, to });
    }
  }
  const merged = mergePlans(family, [...parts, { ...emptyPlan(family), rules }]);
  return {
    ...merged,
    scope: {
      ...merged.scope,
      rulePriorities: [
        PRIORITY.toPod,
        PRIORITY.fwmark,
        PRIORITY.externalService,
        PRIORITY.fromPod,
        PRIORITY.fromEni,
      ],
      mainRouteDevPrefixes: [prefix],
    },
  };
}

/**
 * The mark for the node's `fwmark m/m lookup main` rule, as the reference decides it: present iff node-port
 * support is on or external SNAT is off (`AWS_VPC_CNI_NODE_PORT_SUPPORT`, `AWS_VPC_K8S_CNI_EXTERNALSNAT`,
 * `AWS_VPC_K8S_CNI_CONNMARK`); pass the result as {@link NodeRoutingInput.fwmark}.
 */
export function nodeFwmark(o: {
  nodePortSupport: boolean;
  externalSnat: boolean;
  connmark?: number | undefined;
}): number | undefined {
  return o.nodePortSupport || !o.externalSnat ? (o.connmark ?? 0x80) : undefined;
}

/** A plan with nothing in it. */
export function emptyPlan(family: Family = 4): RoutingPlan {
  return {
    family,
    links: [],
    addresses: [],
    routes: [],
    absentRoutes: [],
    rules: [],
    scope: { rulePriorities: [], routeTables: [], mainRouteDevPrefixes: [], addressDevs: [] },
  };
}

/** Concatenates plans of one family (scopes are unioned). Throws `INVALID_ARGUMENT` on mixed families. */
export function mergePlans(family: Family, plans: readonly RoutingPlan[]): RoutingPlan {
  const union = <T>(pick: (s: RoutingScope) => readonly T[]) => [
    ...new Set(plans.flatMap((p) => pick(p.scope))),
  ];
  for (const p of plans)
    if (p.family !== family) throw invalidArgument('mergePlans', 'plans of different families');
  return {
    family,
    links: plans.flatMap((p) => p.links),
    addresses: plans.flatMap((p) => p.addresses),
    routes: plans.flatMap((p) => p.routes),
    absentRoutes: plans.flatMap((p) => p.absentRoutes),
    rules: plans.flatMap((p) => p.rules),
    scope: {
      rulePriorities: union((s) => s.rulePriorities),
      routeTables: union((s) => s.routeTables),
      mainRouteDevPrefixes: union((s) => s.mainRouteDevPrefixes),
      addressDevs: union((s) => s.addressDevs),
    },
  };
}
