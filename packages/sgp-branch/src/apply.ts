import {
  isRoutingError,
  type PodNetworkDeps,
  type PodNetworkInput,
  type PodNetworkPlan,
  PRIORITY,
  type RoutingPort,
  setupPodNetwork,
  teardownRouting,
} from '@vpc-cni-kit/routing-table';
import { isSgpError, SgpError } from './errors.js';
import type { BranchLinkPort } from './link-port.js';
import type { BranchNetworkPlan, BranchNodePlan, BranchTeardownPlan } from './plan.js';

async function kernel<T>(
  op: string,
  action: Promise<T>,
  ...tolerated: ('EXISTS' | 'NOT_FOUND')[]
): Promise<T | undefined> {
  try {
    return await action;
  } catch (error) {
    if (isRoutingError(error) && tolerated.includes(error.code as 'EXISTS' | 'NOT_FOUND')) return undefined;
    if (isSgpError(error)) throw error;
    const code = isRoutingError(error, 'INVALID_ARGUMENT') ? 'INVALID_ARGUMENT' : 'KERNEL';
    throw new SgpError({ code, op, detail: (error as Error).message, cause: error });
  }
}

/**
 * Applies the host side of a branch pod ({@link planBranchNetwork}) in the reference's order: drops every
 * prio-10 `iif <hostVeth>` rule, replaces any link of the branch link's name, creates the branch link on the
 * trunk with the branch MAC, sets its sysctls (a missing one is skipped), brings it up, replaces the routes of
 * table `vlanId+100` (and the pod route), adds the rules (an identical one counts as done). Safe to repeat.
 * Throws {@link SgpError}: `TRUNK_LINK_NOT_FOUND` when the trunk's link is absent, `KERNEL` otherwise.
 */
export async function applyBranchNetwork(
  deps: { readonly host: RoutingPort; readonly links: BranchLinkPort },
  plan: BranchNetworkPlan,
): Promise<void> {
  const op = 'applyBranchNetwork';
  const rules = (await kernel(op, deps.host.list('rule', plan.family))) ?? [];
  for (const r of rules) {
    if (r.priority === PRIORITY.vlan && r.iif === plan.hostVeth)
      await kernel(op, deps.host.remove(r), 'NOT_FOUND');
  }
  const made = await deps.links.addBranchLink(plan.link);
  if (made.exists) {
    await kernel(op, deps.host.setLink(plan.link.name, { remove: true }), 'NOT_FOUND');
    const again = await deps.links.addBranchLink(plan.link);
    if (again.exists)
      throw new SgpError({ code: 'KERNEL', op, detail: `${plan.link.name} reappeared after removal` });
  }
  for (const [key, value] of plan.linkSysctls) await kernel(op, deps.host.setSysctl(key, value), 'NOT_FOUND');
  await kernel(op, deps.host.setLink(plan.link.name, { up: true }));
  for (const route of plan.routing.routes) await kernel(op, deps.host.replace(route));
  for (const rule of plan.routing.rules) await kernel(op, deps.host.add(rule), 'EXISTS');
}

/**
 * Removes what {@link applyBranchNetwork} made, as the reference's mode-agnostic teardown does: the branch link
 * (its table routes go with it), every prio-10 rule into table `vlanId+100` of the family, then the plan's routes
 * and rules. Anything already gone is fine, so it is idempotent and safe after a partial setup. The host veth
 * goes with the pod's namespace (or pass `deleteVeth`). Takes a {@link BranchNetworkPlan} or, when only a CNI
 * prevResult is left, `planBranchTeardown`'s plan.
 */
export async function teardownBranchNetwork(
  host: RoutingPort,
  plan: BranchTeardownPlan,
  options: { readonly deleteVeth?: boolean } = {},
): Promise<void> {
  const op = 'teardownBranchNetwork';
  await kernel(op, host.setLink(plan.link.name, { remove: true }), 'NOT_FOUND');
  const rules = (await kernel(op, host.list('rule', plan.family))) ?? [];
  for (const r of rules) {
    if (r.priority === PRIORITY.vlan && r.table === plan.table) await kernel(op, host.remove(r), 'NOT_FOUND');
  }
  await kernel(op, teardownRouting(host, plan.routing));
  if (options.deleteVeth) await kernel(op, host.setLink(plan.hostVeth, { remove: true }), 'NOT_FOUND');
}

/**
 * Plumbs a whole branch pod: the veth and pod side as for any pod (routing-table's `setupPodNetwork` with the
 * host routing left out, gateway `169.254.1.1`), then {@link applyBranchNetwork}. On a failure after the veth was
 * made, the branch host side is torn down and the veth deleted before the error is rethrown.
 */
export async function setupBranchPod(
  deps: PodNetworkDeps & { readonly links: BranchLinkPort },
  pod: Omit<PodNetworkInput, 'eniTable' | 'hostRouting' | 'index' | 'podIp' | 'hostVeth'>,
  plan: BranchNetworkPlan,
): Promise<PodNetworkPlan> {
  const op = 'setupBranchPod';
  const veth = await kernel(
    op,
    setupPodNetwork(deps, {
      ...pod,
      podIp: plan.podIp,
      hostVeth: plan.hostVeth,
      eniTable: plan.table,
      hostRouting: false,
    }),
  );
  try {
    await applyBranchNetwork(deps, plan);
  } catch (error) {
    await teardownBranchNetwork(deps.host, plan, { deleteVeth: true }).catch(() => undefined);
    throw error;
  }
  return veth!;
}

/**
 * Applies the node-wide plan ({@link planBranchNode}): `net/ipv4/tcp_early_demux` (skipped where the kernel lacks
 * it), then the `local` rule: the wanted one is added first (an identical one counts as done), the other removed,
 * so the local table is never out of reach in between. Safe to repeat.
 */
export async function applyBranchNode(host: RoutingPort, plan: BranchNodePlan): Promise<void> {
  const op = 'applyBranchNode';
  for (const [key, value] of plan.sysctls) await kernel(op, host.setSysctl(key, value), 'NOT_FOUND');
  for (const rule of plan.rules) await kernel(op, host.add(rule), 'EXISTS');
  for (const rule of plan.absentRules) await kernel(op, host.remove(rule), 'NOT_FOUND');
}
