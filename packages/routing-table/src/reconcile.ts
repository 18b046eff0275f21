import { diffRouting, diffSize, type RoutingDiff, type RoutingState, routingDrift } from './diff.js';
import { isRoutingError, RoutingError } from './errors.js';
import type { NetObject } from './objects.js';
import type { RoutingPlan } from './plan.js';
import type { RoutingPort } from './port.js';

/** Reads what the plan's family needs from the port (links, addresses, routes, rules; in parallel). */
export async function readRoutingState(port: RoutingPort, family: 4 | 6): Promise<RoutingState> {
  const [links, addresses, routes, rules] = await Promise.all([
    port.links(),
    port.list('address', family),
    port.list('route', family),
    port.list('rule', family),
  ]);
  return { links, addresses, routes, rules };
}

async function tolerate(action: Promise<void>, ...codes: ('EXISTS' | 'NOT_FOUND')[]): Promise<void> {
  try {
    await action;
  } catch (error) {
    if (!isRoutingError(error, ...codes)) throw error;
  }
}

/**
 * Applies a diff through the port in a safe order: links; stale rules, routes and addresses out; addresses
 * in; routes that must be absent out; routes replaced; rules in. `EXISTS` on add and `NOT_FOUND` on remove
 * count as done, so applying twice (or racing another writer) is harmless.
 */
export async function applyRoutingDiff(port: RoutingPort, diff: RoutingDiff): Promise<void> {
  for (const link of diff.links) {
    await port.setLink(link.name, link.mtu === undefined ? { up: true } : { up: true, mtu: link.mtu });
  }
  const each = async (items: readonly NetObject[], fn: (o: NetObject) => Promise<void>) => {
    for (const o of items) await fn(o);
  };
  await each(diff.removeRules, (o) => tolerate(port.remove(o), 'NOT_FOUND'));
  await each(diff.removeRoutes, (o) => tolerate(port.remove(o), 'NOT_FOUND'));
  await each(diff.removeAddresses, (o) => tolerate(port.remove(o), 'NOT_FOUND'));
  await each(diff.addAddresses, (o) => tolerate(port.add(o), 'EXISTS'));
  await each(diff.absentRoutes, (o) => tolerate(port.remove(o), 'NOT_FOUND'));
  await each(diff.replaceRoutes, (o) => port.replace(o));
  await each(diff.addRules, (o) => tolerate(port.add(o), 'EXISTS'));
}

/** The outcome of {@link reconcileRouting}. */
export interface RoutingReconcileResult {
  /** What was changed. */
  readonly diff: RoutingDiff;
  /** Number of changes (0 for a no-op reconcile). */
  readonly changes: number;
}

/** Reads, diffs and applies: the node then matches the plan within its scope. Idempotent. */
export async function reconcileRouting(
  port: RoutingPort,
  plan: RoutingPlan,
): Promise<RoutingReconcileResult> {
  const state = await readRoutingState(port, plan.family);
  const diff = diffRouting(plan, state);
  const changes = diffSize(diff);
  if (changes > 0) await applyRoutingDiff(port, diff);
  return { diff, changes };
}

/**
 * Checks the node against a plan without changing anything (CNI CHECK). Throws `VERIFY_FAILED` listing
 * what is missing and — when `strict` — owned objects that should not be there.
 */
export async function verifyRouting(port: RoutingPort, plan: RoutingPlan, strict = false): Promise<void> {
  const drift = routingDrift(plan, await readRoutingState(port, plan.family));
  const unexpected = strict ? drift.unexpected : [];
  if (drift.missing.length > 0 || unexpected.length > 0) {
    throw new RoutingError({
      code: 'VERIFY_FAILED',
      op: 'verify',
      missing: drift.missing,
      unexpected,
      detail: `${drift.missing.length} missing, ${unexpected.length} unexpected`,
    });
  }
}

/**
 * Removes everything a plan added (rules, routes, addresses) and tolerates anything already gone. Links are
 * left as they are (a pod's veth goes with its namespace; an ENI's link with its detach).
 */
export async function teardownRouting(port: RoutingPort, plan: RoutingPlan): Promise<void> {
  for (const rule of plan.rules) await tolerate(port.remove(rule), 'NOT_FOUND');
  for (const route of plan.routes) await tolerate(port.remove(route), 'NOT_FOUND');
  for (const address of plan.addresses) await tolerate(port.remove(address), 'NOT_FOUND');
}
