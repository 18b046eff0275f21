import { familyBits } from '@vpc-cni-kit/ip-address';
import { invalidArgument, isRoutingError, RoutingError } from './errors.js';
import { canonicalIp, type Family, familyOf } from './ip.js';
import { generateHostMac, type RandomBytes, validateIfName } from './naming.js';
import { MAIN_TABLE, type NetObject, onLinkScope } from './objects.js';
import { emptyPlan, planPodHost, type RoutingPlan } from './plan.js';
import type { RoutingPort, RoutingPortFactory } from './port.js';
import { teardownRouting } from './reconcile.js';

/** One pod interface to plumb (the reference's `SetupPodNetwork` for IP index i). */
export interface PodNetworkInput {
  /** Pod IP (IPv4 → /32, IPv6 → /128). */
  readonly podIp: string;
  /** Host veth name (see {@link hostVethName}). */
  readonly hostVeth: string;
  /** Interface name inside the pod (e.g. `eth0`). */
  readonly containerIf: string;
  /** Path of the pod's network namespace. */
  readonly netnsPath: string;
  /** Pod MTU. */
  readonly mtu: number;
  /** Table of the ENI owning the address (main = 254 for the primary ENI). */
  readonly eniTable: number;
  /** Interface index i (0 for eth0): gateway 169.254.1.(i+1) / fe80::(i+1), pod table main or i. @defaultValue `0` */
  readonly index?: number | undefined;
  /**
   * Plan and apply the host route and IP rules ({@link planPodHost}). `false` leaves the host side to the
   * caller (branch-ENI pods, whose host side `@vpc-cni-kit/sgp-branch` plans); the plan's `host` is then empty.
   * @defaultValue `true`
   */
  readonly hostRouting?: boolean | undefined;
  /**
   * IPv6 duplicate-address detection on both ends of the veth (`false`: `accept_dad=0` on each before it comes
   * up, so their addresses are usable at once and the DAD wait ends on its first look). The reference leaves DAD on
   * and waits about a second per pod; on a veth whose only other end is the host, with addresses from the
   * node's own /80, it cannot find a duplicate. No effect on IPv4. @defaultValue `true`
   */
  readonly duplicateAddressDetection?: boolean | undefined;
}

/** The veth of one pod interface. */
export interface PodVethPlan {
  /** Host end's name. */
  readonly name: string;
  /** Host end's MAC (the pod's gateway neighbour entry points at it). */
  readonly mac: string;
  /** MTU of both ends. */
  readonly mtu: number;
  /** Pod end's name. */
  readonly peerName: string;
  /** The pod's namespace path. */
  readonly netnsPath: string;
}

/** Everything that makes one pod interface, as data. */
export interface PodNetworkPlan {
  /** 4 or 6. */
  readonly family: Family;
  /** Host veth (name, MAC, MTU) and its peer in the pod namespace. */
  readonly veth: PodVethPlan;
  /** Host-side sysctls on the veth, in order. */
  readonly hostSysctls: readonly (readonly [key: string, value: string])[];
  /**
   * Pod-side sysctls, set before the pod interface comes up (IPv6 only: `disable_ipv6=0` for the interface and
   * `lo`, and `accept_dad=0` without duplicate-address detection).
   */
  readonly podSysctls: readonly (readonly [key: string, value: string])[];
  /** Pod-side objects, in the order the reference creates them. */
  readonly podObjects: readonly NetObject[];
  /** The gateway the pod routes through. */
  readonly gateway: string;
  /** Host-side routes and rules. */
  readonly host: RoutingPlan;
}

/**
 * Plans one pod interface (pure): veth `hostVeth` ↔ `containerIf` created in the pod namespace with the
 * MTU; host veth sysctls `accept_ra=0`, `accept_redirects=1`, `forwarding=0`; in the pod: a link route to
 * the gateway, `from <podIP> lookup i` at priority 1 for i > 0, a default route via the gateway, the /32
 * (or /128) address and a permanent neighbour for the gateway with the host veth's MAC; on the host:
 * {@link planPodHost}.
 */
export function planPodNetwork(input: PodNetworkInput, hostMac: string): PodNetworkPlan {
  const op = 'planPodNetwork';
  const ip = canonicalIp(input.podIp, `${op}.podIp`);
  const family = familyOf(ip);
  const hostVeth = validateIfName(input.hostVeth, `${op}.hostVeth`);
  const contIf = validateIfName(input.containerIf, `${op}.containerIf`);
  if (typeof input.netnsPath !== 'string' || !input.netnsPath.startsWith('/')) {
    throw invalidArgument(op, 'netnsPath must be an absolute path');
  }
  if (!Number.isInteger(input.mtu) || input.mtu < 68 || input.mtu > 65535)
    throw invalidArgument(op, `bad MTU: ${input.mtu}`);
  const index = input.index ?? 0;
  if (!Number.isInteger(index) || index < 0 || index > 250) throw invalidArgument(op, `bad index: ${index}`);
  if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(hostMac)) throw invalidArgument(op, `bad MAC: ${hostMac}`);
  const gateway = family === 4 ? `169.254.1.${index + 1}` : `fe80::${(index + 1).toString(16)}`;
  const table = index === 0 ? MAIN_TABLE : index;
  const host = `${ip}/${familyBits(family)}`;
  const gwHost = `${gateway}/${familyBits(family)}`;
  const podObjects: NetObject[] = [
    { kind: 'route', family, table, dst: gwHost, dev: contIf, scope: onLinkScope(family) },
    ...(index > 0 ? [{ kind: 'rule' as const, family, priority: 1, table, from: host }] : []),
    {
      kind: 'route',
      family,
      table,
      dst: family === 4 ? '0.0.0.0/0' : '::/0',
      dev: contIf,
      gateway,
      scope: 'universe',
    },
    { kind: 'address', family, dev: contIf, cidr: host },
    { kind: 'neighbour', family, dev: contIf, address: gateway, lladdr: hostMac, permanent: true },
  ];
  return {
    family,
    veth: { name: hostVeth, mac: hostMac, mtu: input.mtu, peerName: contIf, netnsPath: input.netnsPath },
    hostSysctls: [
      // Without DAD on either end: the host end's link-local, which neighbour discovery for the pod speaks
      // from, is usable at once too (else replies to the pod wait for it, about a second).
      ...(family === 6 && input.duplicateAddressDetection === false
        ? [[`net/ipv6/conf/${hostVeth}/accept_dad`, '0'] as const]
        : []),
      [`net/ipv6/conf/${hostVeth}/accept_ra`, '0'],
      [`net/ipv6/conf/${hostVeth}/accept_redirects`, '1'],
      [`net/ipv6/conf/${hostVeth}/forwarding`, '0'],
    ],
    podSysctls:
      family === 6
        ? [
            ...(input.duplicateAddressDetection === false
              ? [[`net/ipv6/conf/${contIf}/accept_dad`, '0'] as const]
              : []),
            [`net/ipv6/conf/${contIf}/disable_ipv6`, '0'],
            ['net/ipv6/conf/lo/disable_ipv6', '0'],
          ]
        : [],
    podObjects,
    gateway,
    host:
      input.hostRouting === false
        ? emptyPlan(family)
        : planPodHost({ podIp: ip, hostVeth, table: input.eniTable }, family),
  };
}

/** Injected effects of {@link setupPodNetwork}. */
export interface PodNetworkDeps {
  /** Port on the host namespace. */
  readonly host: RoutingPort;
  /** Opens a port on the pod namespace. */
  readonly namespaces: RoutingPortFactory;
  /** Random bytes for the host veth MAC. */
  readonly random: RandomBytes;
  /** Sleeps (for the IPv6 duplicate-address wait). @defaultValue a timer */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  /** DAD wait limit in ms (polls every 50 ms; every 2 ms without DAD). @defaultValue `10000` */
  readonly dadTimeoutMs?: number | undefined;
  /**
   * Check the random host veth MAC against every link on the host (one link dump, whose cost grows with
   * the pods on the node). `false` skips the dump: the MAC is then random and locally administered (46
   * random bits) without the check, as the reference's kernel-chosen veth MAC is, and a leftover veth of
   * the same name is found when creating the pair fails with `EXISTS`: it is then deleted (its peer with it)
   * and the pair created again, so the common case costs no extra request. A clash would be harmless
   * anyway: every host veth is its own point-to-point segment and its MAC appears only in its own pod's
   * gateway neighbour entry. @defaultValue `true`
   */
  readonly uniqueMac?: boolean | undefined;
}

async function ignoreMissing(action: Promise<void>): Promise<void> {
  try {
    await action;
  } catch (error) {
    if (!isRoutingError(error, 'NOT_FOUND')) throw error;
  }
}

/**
 * Plumbs one pod interface end to end: removes a leftover host veth of the same name, picks a host-unique
 * random MAC (or just a random one: {@link PodNetworkDeps.uniqueMac}), creates the veth with its peer in the pod namespace, sets the host sysctls (a missing one is
 * skipped), configures the pod side, waits for IPv6 addresses to leave the tentative state, then applies
 * the host route (replaced into its slot) and rules (an identical one counts as done) without dumping the
 * host's tables. Returns the plan that was applied (its `host` part is what CHECK verifies).
 */
export async function setupPodNetwork(deps: PodNetworkDeps, input: PodNetworkInput): Promise<PodNetworkPlan> {
  let plan: PodNetworkPlan;
  const veth = (p: PodNetworkPlan) => ({
    name: p.veth.name,
    mac: p.veth.mac,
    mtu: p.veth.mtu,
    peerName: p.veth.peerName,
    peerNetnsPath: p.veth.netnsPath,
  });
  if (deps.uniqueMac === false) {
    plan = planPodNetwork(input, generateHostMac(deps.random, []));
    try {
      await deps.host.addVeth(veth(plan));
    } catch (error) {
      // A leftover veth of that name (a retried ADD): delete it (its peer goes with it) and create again.
      if (!isRoutingError(error, 'EXISTS')) throw error;
      await ignoreMissing(deps.host.setLink(plan.veth.name, { remove: true }));
      await deps.host.addVeth(veth(plan));
    }
  } else {
    const links = await deps.host.links();
    const mac = generateHostMac(
      deps.random,
      links.filter((l) => l.name !== input.hostVeth).map((l) => l.mac),
    );
    plan = planPodNetwork(input, mac);
    if (links.some((l) => l.name === plan.veth.name))
      await ignoreMissing(deps.host.setLink(plan.veth.name, { remove: true }));
    await deps.host.addVeth(veth(plan));
  }
  for (const [key, value] of plan.hostSysctls) await ignoreMissing(deps.host.setSysctl(key, value));
  await deps.host.setLink(plan.veth.name, { up: true });

  const pod = await deps.namespaces.open(plan.veth.netnsPath);
  try {
    // Before the link comes up: its link-local address is made then, under these settings.
    for (const [key, value] of plan.podSysctls) await pod.setSysctl(key, value);
    await pod.setLink(plan.veth.peerName, { up: true });
    for (const object of plan.podObjects) {
      if (object.kind === 'route' || object.kind === 'neighbour') await pod.replace(object);
      else {
        try {
          await pod.add(object);
        } catch (error) {
          if (!isRoutingError(error, 'EXISTS')) throw error;
        }
      }
    }
    if (plan.family === 6) {
      // Without DAD the kernel clears the tentative flag from a work item at once: look again soon.
      const dadOff = plan.podSysctls.some(([key]) => key.endsWith('/accept_dad'));
      await waitForDad(pod, plan.veth.peerName, deps, dadOff ? 2 : 50);
    }
  } finally {
    pod.close();
  }
  await applyPodHost(deps.host, plan.host);
  return plan;
}

/**
 * Applies a pod's host plan ({@link planPodHost}: its main-table route and its rules, nothing owned beyond
 * them) without reading the node first: the route is replaced into its slot and each rule added, an
 * identical rule counting as done. That is what {@link reconcileRouting} would change for such a plan (it
 * removes nothing there), at one request per object instead of four dumps that grow with the pods on the node.
 */
async function applyPodHost(host: RoutingPort, plan: RoutingPlan): Promise<void> {
  for (const route of plan.routes) await host.replace(route);
  for (const rule of plan.rules) {
    try {
      await host.add(rule);
    } catch (error) {
      if (!isRoutingError(error, 'EXISTS')) throw error;
    }
  }
}

async function waitForDad(
  pod: RoutingPort,
  dev: string,
  deps: PodNetworkDeps,
  pollMs: number,
): Promise<void> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const limit = deps.dadTimeoutMs ?? 10_000;
  for (let waited = 0; ; waited += pollMs) {
    const addresses = await pod.list('address', 6);
    if (!addresses.some((a) => a.dev === dev && a.tentative)) return;
    if (waited >= limit) {
      throw new RoutingError({
        code: 'TIMEOUT',
        op: 'setupPodNetwork.dad',
        detail: `${dev} still tentative after ${limit} ms`,
      });
    }
    await sleep(pollMs);
  }
}

/**
 * Removes a pod address's host routes and rules (`to` at 512, `from` at 1536 in its table, the main route),
 * tolerating anything already gone; optionally deletes the host veth too.
 */
export async function teardownPodNetwork(
  host: RoutingPort,
  pod: {
    readonly podIp: string;
    readonly hostVeth: string;
    readonly eniTable: number;
    readonly deleteVeth?: boolean;
  },
): Promise<void> {
  await teardownRouting(host, planPodHost({ podIp: pod.podIp, hostVeth: pod.hostVeth, table: pod.eniTable }));
  if (pod.deleteVeth)
    await ignoreMissing(host.setLink(validateIfName(pod.hostVeth, 'teardownPodNetwork'), { remove: true }));
}
