import type { Family } from './ip.js';
import {
  type AddressSpec,
  describe,
  MAIN_TABLE,
  type NetObject,
  type RouteSpec,
  type RuleSpec,
} from './objects.js';
import type { LinkPlan, RoutingPlan } from './plan.js';
import type { LinkInfo } from './port.js';

/** What the port reported for a plan's family. */
export interface RoutingState {
  /** All links. */
  readonly links: readonly LinkInfo[];
  /** Addresses of the family. */
  readonly addresses: readonly AddressSpec[];
  /** Routes of the family, all tables. */
  readonly routes: readonly RouteSpec[];
  /** Rules of the family. */
  readonly rules: readonly RuleSpec[];
}

/** The changes that take a node from {@link RoutingState} to a {@link RoutingPlan}, in apply order. */
export interface RoutingDiff {
  /** Links to bring up or re-MTU. */
  readonly links: readonly LinkPlan[];
  /** Stale rules to delete (first, so no stale rule steers traffic while routes change). */
  readonly removeRules: readonly RuleSpec[];
  /** Stale routes to delete. */
  readonly removeRoutes: readonly RouteSpec[];
  /** Stale addresses to delete. */
  readonly removeAddresses: readonly AddressSpec[];
  /** Addresses to add. */
  readonly addAddresses: readonly AddressSpec[];
  /** Routes that must go (present now, or about to appear because an address is being added). */
  readonly absentRoutes: readonly RouteSpec[];
  /** Routes to add or replace. */
  readonly replaceRoutes: readonly RouteSpec[];
  /** Rules to add. */
  readonly addRules: readonly RuleSpec[];
}

/** Number of changes in a diff (0 = the node matches the plan). */
export function diffSize(d: RoutingDiff): number {
  return (
    d.links.length +
    d.removeRules.length +
    d.removeRoutes.length +
    d.removeAddresses.length +
    d.addAddresses.length +
    d.absentRoutes.length +
    d.replaceRoutes.length +
    d.addRules.length
  );
}

function keyed<T extends NetObject>(items: readonly T[]): Map<string, T> {
  return new Map(items.map((o) => [describe(o), o]));
}

function isLinkLocalV6(cidr: string): boolean {
  return /^fe[89ab][0-9a-f]:/i.test(cidr);
}

function routeOwned(plan: RoutingPlan, r: RouteSpec): boolean {
  if (plan.scope.routeTables.includes(r.table)) return true;
  return (
    r.table === MAIN_TABLE &&
    r.scope === (r.family === 4 ? 'link' : 'universe') &&
    r.gateway === undefined &&
    r.dst.endsWith(r.family === 4 ? '/32' : '/128') &&
    plan.scope.mainRouteDevPrefixes.some((p) => r.dev.startsWith(p))
  );
}

function sameRouteSlot(a: RouteSpec, b: RouteSpec): boolean {
  return a.table === b.table && a.dst === b.dst && a.dev === b.dev;
}

/**
 * Compares a plan with the node (pure). Owned objects (see {@link RoutingScope}) that the plan does not
 * contain are removed; missing ones are added; everything else is left alone.
 */
export function diffRouting(plan: RoutingPlan, state: RoutingState): RoutingDiff {
  const family: Family = plan.family;
  const rulesNow = keyed(state.rules.filter((r) => r.family === family));
  const rulesWant = keyed(plan.rules);
  const removeRules = [...rulesNow.values()].filter(
    (r) => plan.scope.rulePriorities.includes(r.priority) && !rulesWant.has(describe(r)),
  );
  const addRules = [...rulesWant.entries()].filter(([k]) => !rulesNow.has(k)).map(([, r]) => r);

  const routesNow = keyed(state.routes.filter((r) => r.family === family));
  const routesWant = keyed(plan.routes);
  const wantSlots = new Set(plan.routes.map((r) => `${r.table} ${r.dst}`));
  const removeRoutes = [...routesNow.values()].filter(
    (r) => routeOwned(plan, r) && !routesWant.has(describe(r)) && !wantSlots.has(`${r.table} ${r.dst}`),
  );
  const replaceRoutes = [...routesWant.entries()].filter(([k]) => !routesNow.has(k)).map(([, r]) => r);

  const addrNow = keyed(
    state.addresses.filter((a) => a.family === family).map((a) => ({ ...a, tentative: undefined })),
  );
  const addrWant = keyed(plan.addresses);
  const removeAddresses = [...addrNow.values()].filter(
    (a) => plan.scope.addressDevs.includes(a.dev) && !addrWant.has(describe(a)) && !isLinkLocalV6(a.cidr),
  );
  const addAddresses = [...addrWant.entries()].filter(([k]) => !addrNow.has(k)).map(([, a]) => a);

  const absentRoutes = plan.absentRoutes.filter(
    (gone) =>
      addAddresses.some((a) => a.dev === gone.dev) ||
      [...routesNow.values()].some((r) => sameRouteSlot(r, gone)),
  );

  const links = plan.links.filter((want) => {
    const have = state.links.find((l) => l.name === want.name);
    return have === undefined || !have.up || (want.mtu !== undefined && have.mtu !== want.mtu);
  });

  return {
    links,
    removeRules,
    removeRoutes,
    removeAddresses,
    addAddresses,
    absentRoutes,
    replaceRoutes,
    addRules,
  };
}

/** How a node differs from a plan, as text (see {@link describe}). */
export interface RoutingDrift {
  /** Planned objects (and link settings) that are absent. */
  readonly missing: string[];
  /** Owned objects present that the plan lacks, and routes that must be absent but exist. */
  readonly unexpected: string[];
}

/** Objects of the plan that are missing from the state, and owned objects present that the plan lacks. */
export function routingDrift(plan: RoutingPlan, state: RoutingState): RoutingDrift {
  const d = diffRouting(plan, state);
  const absentNow = d.absentRoutes.filter((gone) => state.routes.some((r) => sameRouteSlot(r, gone)));
  return {
    missing: [
      ...d.links.map((l) => `link ${l.name} up${l.mtu ? ` mtu ${l.mtu}` : ''}`),
      ...[...d.addAddresses, ...d.replaceRoutes, ...d.addRules].map(describe),
    ],
    unexpected: [...d.removeRules, ...d.removeRoutes, ...d.removeAddresses, ...absentNow].map(describe),
  };
}
