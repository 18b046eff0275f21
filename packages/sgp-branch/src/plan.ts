import { familyBits, formatIp, parseIp } from '@vpc-cni-kit/ip-address';
import {
  type BranchPodPlan,
  emptyPlan,
  LOCAL_TABLE,
  PRIORITY,
  planBranchPod,
  type RoutingPlan,
  type RuleSpec,
} from '@vpc-cni-kit/routing-table';
import type { BranchEni } from './annotation.js';
import { invalidArgument, SgpError } from './errors.js';

/** `POD_SECURITY_GROUP_ENFORCING_MODE`: `strict` sends all pod traffic through the branch ENI, `standard` only off-node traffic. */
export type EnforcingMode = 'strict' | 'standard';

/**
 * The kind of link that carries a branch on its trunk: `vlan` (an 802.1Q sub-interface, production) or
 * `macvlan` (untagged frames told apart by the branch MAC: the virtual VPC on kernels without 802.1Q, ADR 0006).
 */
export type BranchLinkKind = 'vlan' | 'macvlan';

/** Interface-name pattern of every branch link (`vlan.eth.<id>`): the SNAT rule skips `-o vlan+`, CONNMARK restores on `-i vlan+`. */
export const BRANCH_LINK_PATTERN = 'vlan+';

/** The link a branch rides on, stacked on the trunk. */
export interface BranchLinkSpec {
  /** `vlan` in production, `macvlan` in the virtual VPC. */
  readonly kind: BranchLinkKind;
  /** `vlan.eth.<vlanId>`, whatever the kind. */
  readonly name: string;
  /** The trunk ENI's interface on the host. */
  readonly parent: string;
  /** VLAN id (the 802.1Q tag for `vlan`; only the name and the table for `macvlan`). */
  readonly vlanId: number;
  /** The branch ENI's MAC (the link's address). */
  readonly mac: string;
  /** For `macvlan`: its mode. `vepa` sends every frame to the wire, as a VLAN link does. */
  readonly macvlanMode?: 'vepa' | 'bridge' | 'private' | undefined;
}

/** Input of {@link planBranchNetwork}. */
export interface BranchNetworkInput {
  /** The pod's branch ENI (from {@link parsePodEniAnnotation}). */
  readonly branch: BranchEni;
  /** Host interface of the trunk ENI (found by the trunk's MAC). */
  readonly trunkInterface: string;
  /** Host veth of the pod (see `branchHostVethName`: prefix `vlan` in strict mode). */
  readonly hostVeth: string;
  /** Enforcing mode. */
  readonly mode: EnforcingMode;
  /** Address family the node runs. @defaultValue `4` */
  readonly family?: 4 | 6 | undefined;
  /** Branch link kind. @defaultValue `'vlan'` */
  readonly linkKind?: BranchLinkKind | undefined;
  /** Mode of a `macvlan` branch link. @defaultValue `'vepa'` */
  readonly macvlanMode?: 'vepa' | 'bridge' | 'private' | undefined;
}

/** Host-side desired state of one branch pod: the branch link, then routing-table's objects. */
export interface BranchNetworkPlan {
  /** Enforcing mode the plan was made for. */
  readonly mode: EnforcingMode;
  /** 4 or 6. */
  readonly family: 4 | 6;
  /** The pod address. */
  readonly podIp: string;
  /** The host veth. */
  readonly hostVeth: string;
  /** The branch link on the trunk. */
  readonly link: BranchLinkSpec;
  /** Table `vlanId + 100`. */
  readonly table: number;
  /** Sysctls on the branch link (`accept_ra=0`, `accept_redirects=1`, `forwarding=0`). */
  readonly linkSysctls: readonly (readonly [key: string, value: string])[];
  /** Routes and rules (strict: prio-10 `iif` rules, pod route in the table; standard: 512/1536 rules, main route). */
  readonly routing: RoutingPlan;
}

const OP = 'planBranchNetwork';

/**
 * Plans the host side of a branch-ENI pod from its annotation (pure): the reference's
 * `SetupBranchENIPodNetwork` shapes (routing-table's {@link planBranchPod}) plus the branch-link kind. The pod side
 * (veth, address, gateway `169.254.1.1`) is that of any pod (routing-table's `setupPodNetwork`).
 * Throws {@link SgpError} `INVALID_ARGUMENT` (nothing planned) on bad input.
 */
export function planBranchNetwork(input: BranchNetworkInput): BranchNetworkPlan {
  const family = input.family ?? 4;
  if (family !== 4 && family !== 6) throw invalidArgument(OP, `bad family: ${String(family)}`);
  const kind = input.linkKind ?? 'vlan';
  if (kind !== 'vlan' && kind !== 'macvlan') throw invalidArgument(OP, `bad link kind: ${String(kind)}`);
  const macvlanMode = input.macvlanMode ?? 'vepa';
  if (!['vepa', 'bridge', 'private'].includes(macvlanMode))
    throw invalidArgument(OP, `bad macvlan mode: ${String(macvlanMode)}`);
  const podIp = family === 4 ? input.branch?.ipv4 : input.branch?.ipv6;
  const subnetCidr = family === 4 ? input.branch?.subnetCidr : input.branch?.subnetV6Cidr;
  if (podIp === undefined || subnetCidr === undefined)
    throw invalidArgument(OP, `the branch has no IPv${family} address and subnet`);
  let pod: BranchPodPlan;
  try {
    pod = planBranchPod({
      vlanId: input.branch.vlanId,
      trunkInterface: input.trunkInterface,
      branchMac: input.branch.mac,
      podIp,
      subnetCidr,
      hostVeth: input.hostVeth,
      mode: input.mode,
    });
  } catch (error) {
    throw new SgpError({ code: 'INVALID_ARGUMENT', op: OP, detail: (error as Error).message, cause: error });
  }
  return {
    mode: input.mode,
    family,
    podIp,
    hostVeth: pod.clearIifRulesOf,
    link: {
      kind,
      name: pod.vlanLink.name,
      parent: pod.vlanLink.parent,
      vlanId: pod.vlanLink.vlanId,
      mac: pod.vlanLink.mac,
      ...(kind === 'macvlan' ? { macvlanMode } : {}),
    },
    table: pod.table,
    linkSysctls: pod.sysctls,
    routing: { ...emptyPlan(family), routes: pod.routes, rules: pod.rules },
  };
}

/**
 * What {@link teardownBranchNetwork} needs: a {@link BranchNetworkPlan} has it all, and {@link planBranchTeardown}
 * rebuilds it from what a CNI prevResult records (no branch MAC, trunk or subnet needed).
 */
export interface BranchTeardownPlan {
  /** 4 or 6. */
  readonly family: 4 | 6;
  /** The host veth. */
  readonly hostVeth: string;
  /** The branch link, by name. */
  readonly link: Pick<BranchLinkSpec, 'name'>;
  /** Table `vlanId + 100`. */
  readonly table: number;
  /** Routes and rules to remove besides the prio-10 rules into {@link BranchTeardownPlan.table}. */
  readonly routing: RoutingPlan;
}

/** Input of {@link planBranchTeardown}: what the pod's CNI result records. */
export interface BranchTeardownInput {
  /** VLAN id (the result's dummy interface carries it). */
  readonly vlanId: number;
  /** The pod address. */
  readonly podIp: string;
  /** The host veth. */
  readonly hostVeth: string;
}

/**
 * Plans the reference's mode-agnostic branch teardown (`TeardownBranchENIPodNetwork`) from what a CNI prevResult
 * records: the branch link `vlan.eth.<id>` (its table routes go with it), every prio-10 rule into table
 * `vlanId+100` and the pod route in that table (strict mode), and the IP-based objects of standard mode (the main route to the pod, the
 * to-pod rule at 512, the from-pod rule at 1536). Removing what a pod in the other mode never had is a no-op.
 * Throws {@link SgpError} `INVALID_ARGUMENT` on bad input.
 */
export function planBranchTeardown(input: BranchTeardownInput): BranchTeardownPlan {
  const op = 'planBranchTeardown';
  const ip = parseIp(typeof input?.podIp === 'string' ? input.podIp : '');
  if (ip === undefined) throw invalidArgument(op, `not an IP address: ${JSON.stringify(input?.podIp)}`);
  const subnet = `${formatIp(ip)}/${familyBits(ip.family)}`;
  // A host-sized subnet and a placeholder MAC and trunk: the teardown never looks at them.
  const plan = planBranchNetwork({
    branch: {
      eniId: 'eni-0',
      mac: '02:00:00:00:00:00',
      vlanId: input.vlanId,
      ...(ip.family === 4
        ? { ipv4: formatIp(ip), subnetCidr: subnet }
        : { ipv6: formatIp(ip), subnetV6Cidr: subnet }),
    },
    trunkInterface: 'trunk0',
    hostVeth: input.hostVeth,
    mode: 'standard',
    family: ip.family,
  });
  // The table's gateway routes go with the link; strict mode's pod route in the table (via the host veth)
  // would otherwise stay until the veth goes with the pod's namespace.
  const podRoute = plan.routing.routes.find((r) => r.dst === subnet);
  const routes = plan.routing.routes.filter((r) => r.table !== plan.table);
  if (podRoute !== undefined) routes.push({ ...podRoute, table: plan.table });
  const routing = { ...plan.routing, routes };
  return {
    family: plan.family,
    hostVeth: plan.hostVeth,
    link: { name: plan.link.name },
    table: plan.table,
    routing,
  };
}

/** Node-wide settings for branch pods, set once at start (the reference's `SetupHostNetwork` and init container). */
export interface BranchNodePlan {
  /** `net/ipv4/tcp_early_demux`: `0` when disabled (kubelet TCP probes to strict-mode pods), else `1`. */
  readonly sysctls: readonly (readonly [key: string, value: string])[];
  /** Out-interface pattern the SNAT rule must skip (`! -o vlan+`): branch traffic leaves unSNATed. */
  readonly snatSkipOutInterface: string;
  /** Rules that must exist: strict → `lookup local` at 20; standard → `lookup local` at 0 (the kernel default). */
  readonly rules: readonly RuleSpec[];
  /** Rules that must not: strict → `lookup local` at 0 (so the prio-10 branch rules win); standard → the one at 20. */
  readonly absentRules: readonly RuleSpec[];
}

/** Options of {@link planBranchNode}. */
export interface BranchNodeOptions {
  /** `DISABLE_TCP_EARLY_DEMUX`. */
  readonly disableTcpEarlyDemux: boolean;
  /** `POD_SECURITY_GROUP_ENFORCING_MODE`. @defaultValue `'strict'` */
  readonly mode?: EnforcingMode | undefined;
  /** Address family the node runs. @defaultValue `4` */
  readonly family?: 4 | 6 | undefined;
}

/**
 * Plans the node-wide settings of branch pods: `tcp_early_demux` from `DISABLE_TCP_EARLY_DEMUX`, and in strict mode
 * the `local` table rule moved from priority 0 to 20 so the prio-10 `iif` rules of branch pods come first (node-local
 * traffic of a strict pod then crosses its branch too); standard mode keeps (or puts back) the rule at 0. The SNAT
 * exception (`! -o vlan+`) is already in `@vpc-cni-kit/iptables-snat`'s plan. Not planned: the reference's IPv6
 * strict-mode `from fe80:ec2::1 ipproto icmpv6 lookup local` rule at 0 (routing-table has no `ipproto` selector yet).
 */
export function planBranchNode(options: BranchNodeOptions): BranchNodePlan {
  const op = 'planBranchNode';
  if (typeof options?.disableTcpEarlyDemux !== 'boolean')
    throw invalidArgument(op, 'disableTcpEarlyDemux must be a boolean');
  const mode = options.mode ?? 'strict';
  if (mode !== 'strict' && mode !== 'standard') throw invalidArgument(op, `bad mode: ${String(mode)}`);
  const family = options.family ?? 4;
  if (family !== 4 && family !== 6) throw invalidArgument(op, `bad family: ${String(family)}`);
  const local = (priority: number): RuleSpec => ({ kind: 'rule', family, priority, table: LOCAL_TABLE });
  const moved = local(PRIORITY.localStrict);
  const kernel = local(0);
  return {
    sysctls: [['net/ipv4/tcp_early_demux', options.disableTcpEarlyDemux ? '0' : '1']],
    snatSkipOutInterface: BRANCH_LINK_PATTERN,
    rules: mode === 'strict' ? [moved] : [kernel],
    absentRules: mode === 'strict' ? [kernel] : [moved],
  };
}
