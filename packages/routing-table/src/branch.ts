import { familyBits } from '@vpc-cni-kit/ip-address';
import { invalidArgument } from './errors.js';
import { canonicalIp, familyOf, parsePrefix, prefixContains, subnetGateway } from './ip.js';
import { validateIfName } from './naming.js';
import { MAIN_TABLE, onLinkScope, type RouteSpec, type RuleSpec } from './objects.js';
import { PRIORITY } from './plan.js';

/** A branch-ENI (security groups for pods) pod, as the pod-eni annotation and ipamd describe it. */
export interface BranchPodInput {
  /** VLAN id (1–4094) of the branch ENI. */
  readonly vlanId: number;
  /** Interface name of the trunk ENI (the VLAN's parent). */
  readonly trunkInterface: string;
  /** The branch ENI's MAC (the VLAN link's address). */
  readonly branchMac: string;
  /** Pod IP. */
  readonly podIp: string;
  /** The branch ENI's subnet (IPv4: gateway = base + 1; IPv6: `fe80:ec2::1`). */
  readonly subnetCidr: string;
  /** Host veth name (prefix `vlan` in strict mode). */
  readonly hostVeth: string;
  /** `POD_SECURITY_GROUP_ENFORCING_MODE`. */
  readonly mode: 'strict' | 'standard';
}

/** The VLAN sub-interface of a branch ENI. */
export interface VlanLinkPlan {
  /** `vlan.eth.<id>`. */
  readonly name: string;
  /** The trunk ENI's interface. */
  readonly parent: string;
  /** VLAN id. */
  readonly vlanId: number;
  /** The branch ENI's MAC. */
  readonly mac: string;
}

/** The VLAN layout of one branch-ENI pod (pure data, for sgp-branch to apply). */
export interface BranchPodPlan {
  /** `vlan.eth.<id>` on the trunk with the branch MAC. */
  readonly vlanLink: VlanLinkPlan;
  /** Table `vlanId + 100`. */
  readonly table: number;
  /** Sysctls on the VLAN link (`accept_ra=0`, `accept_redirects=1`, `forwarding=0`). */
  readonly sysctls: readonly (readonly [key: string, value: string])[];
  /** Routes: gateway link route and default route in the VLAN table, and the pod route. */
  readonly routes: readonly RouteSpec[];
  /** Rules: strict → `iif` rules at 10; standard → to-pod 512 / from-pod 1536. */
  readonly rules: readonly RuleSpec[];
  /** Before adding, delete all rules `iif <hostVeth>` at priority 10 (the reference does). */
  readonly clearIifRulesOf: string;
}

/**
 * Plans the reference's branch-ENI pod layout (`SetupBranchENIPodNetwork`): VLAN link `vlan.eth.<id>`,
 * table vlan+100 with `gw scope link` and `default via gw dev vlan`; strict mode routes the pod only in that
 * table with `iif vlan.eth.<id>` and `iif <hostVeth>` rules at 10, standard mode uses the IP-based rules.
 */
export function planBranchPod(input: BranchPodInput): BranchPodPlan {
  const op = 'planBranchPod';
  if (!Number.isInteger(input.vlanId) || input.vlanId < 1 || input.vlanId > 4094) {
    throw invalidArgument(op, `bad VLAN id: ${input.vlanId}`);
  }
  if (input.mode !== 'strict' && input.mode !== 'standard')
    throw invalidArgument(op, `bad mode: ${String(input.mode)}`);
  const parent = validateIfName(input.trunkInterface, `${op}.trunkInterface`);
  const hostVeth = validateIfName(input.hostVeth, `${op}.hostVeth`);
  const mac = typeof input.branchMac === 'string' ? input.branchMac.toLowerCase() : '';
  if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(mac)) throw invalidArgument(op, `bad MAC: ${input.branchMac}`);
  const ip = canonicalIp(input.podIp, `${op}.podIp`);
  const family = familyOf(ip);
  const subnet = parsePrefix(input.subnetCidr, `${op}.subnetCidr`);
  if (subnet.family !== family || !prefixContains(subnet, ip))
    throw invalidArgument(op, `${ip} not in ${input.subnetCidr}`);
  const vlan = `vlan.eth.${input.vlanId}`;
  const table = input.vlanId + 100;
  const gw = family === 4 ? subnetGateway(subnet) : 'fe80:ec2::1';
  const bits = familyBits(family);
  const routes: RouteSpec[] = [
    { kind: 'route', family, table, dst: `${gw}/${bits}`, dev: vlan, scope: onLinkScope(family) },
    {
      kind: 'route',
      family,
      table,
      dst: family === 4 ? '0.0.0.0/0' : '::/0',
      dev: vlan,
      gateway: gw,
      scope: 'universe',
    },
  ];
  const host = `${ip}/${bits}`;
  let rules: RuleSpec[];
  if (input.mode === 'strict') {
    routes.push({ kind: 'route', family, table, dst: host, dev: hostVeth, scope: onLinkScope(family) });
    rules = [
      { kind: 'rule', family, priority: PRIORITY.vlan, table, iif: vlan },
      { kind: 'rule', family, priority: PRIORITY.vlan, table, iif: hostVeth },
    ];
  } else {
    routes.push({
      kind: 'route',
      family,
      table: MAIN_TABLE,
      dst: host,
      dev: hostVeth,
      scope: onLinkScope(family),
    });
    rules = [
      { kind: 'rule', family, priority: PRIORITY.toPod, table: MAIN_TABLE, to: host },
      { kind: 'rule', family, priority: PRIORITY.fromPod, table, from: host },
    ];
  }
  return {
    vlanLink: { name: vlan, parent, vlanId: input.vlanId, mac },
    table,
    sysctls: [
      [`net/ipv6/conf/${vlan}/accept_ra`, '0'],
      [`net/ipv6/conf/${vlan}/accept_redirects`, '1'],
      [`net/ipv6/conf/${vlan}/forwarding`, '0'],
    ],
    routes,
    rules,
    clearIifRulesOf: hostVeth,
  };
}
