import type { Family } from './ip.js';

/** The main routing table's id. */
export const MAIN_TABLE = 254;
/** The local routing table's id. */
export const LOCAL_TABLE = 255;

/**
 * A policy routing rule, as `ip rule` shows it. Addresses are canonical prefixes (`10.0.0.5/32`); a rule
 * without `from`/`to` matches all.
 */
export interface RuleSpec {
  /** Discriminant. */
  readonly kind: 'rule';
  /** 4 or 6. */
  readonly family: Family;
  /** Priority (preference). */
  readonly priority: number;
  /** Table looked up. */
  readonly table: number;
  /** Source prefix. */
  readonly from?: string | undefined;
  /** Destination prefix. */
  readonly to?: string | undefined;
  /** Input interface. */
  readonly iif?: string | undefined;
  /** Firewall mark value. */
  readonly fwmark?: number | undefined;
  /** Firewall mark mask (with `fwmark`). */
  readonly fwmask?: number | undefined;
}

/** A unicast route, as `ip route show table T` shows it. */
export interface RouteSpec {
  /** Discriminant. */
  readonly kind: 'route';
  /** 4 or 6. */
  readonly family: Family;
  /** Table id. */
  readonly table: number;
  /** Destination prefix; `0.0.0.0/0` or `::/0` for a default route. */
  readonly dst: string;
  /** Output interface name. */
  readonly dev: string;
  /** Next hop, absent for a link route. */
  readonly gateway?: string | undefined;
  /** `link` for on-link routes, `universe` otherwise. */
  readonly scope: 'link' | 'universe' | 'host';
  /** Preferred source address (kernel subnet routes carry one). */
  readonly src?: string | undefined;
}

/**
 * The scope of a direct (on-link) route in a family: `link` for IPv4; IPv6 routes always carry scope
 * `universe` in the kernel (iproute2 prints none), so plans use that to compare equal with what is read.
 */
export function onLinkScope(family: Family): RouteSpec['scope'] {
  return family === 4 ? 'link' : 'universe';
}

/** An interface address with its prefix length (`10.0.1.5/24`, `10.0.5.7/32`). */
export interface AddressSpec {
  /** Discriminant. */
  readonly kind: 'address';
  /** 4 or 6. */
  readonly family: Family;
  /** Interface name. */
  readonly dev: string;
  /** Address with prefix length (host bits kept). */
  readonly cidr: string;
  /** Reported by the port: still tentative (IPv6 duplicate-address detection). */
  readonly tentative?: boolean | undefined;
}

/** A neighbour (ARP/NDP) entry. */
export interface NeighbourSpec {
  /** Discriminant. */
  readonly kind: 'neighbour';
  /** 4 or 6. */
  readonly family: Family;
  /** Interface name. */
  readonly dev: string;
  /** The neighbour's IP address. */
  readonly address: string;
  /** Its MAC address, lower case `aa:bb:cc:dd:ee:ff`. */
  readonly lladdr: string;
  /** NUD_PERMANENT. */
  readonly permanent: boolean;
}

/** Anything the port lists, adds and removes. */
export type NetObject = RuleSpec | RouteSpec | AddressSpec | NeighbourSpec;

/** A kind of {@link NetObject}. */
export type NetObjectKind = NetObject['kind'];

function table(t: number): string {
  return t === MAIN_TABLE ? 'main' : t === LOCAL_TABLE ? 'local' : String(t);
}

/** Renders an object in `ip`-like text (also its identity for diffs and `VERIFY_FAILED` reports). */
export function describe(o: NetObject): string {
  switch (o.kind) {
    case 'rule': {
      const parts = [`rule v${o.family} ${o.priority}:`];
      if (o.from !== undefined) parts.push(`from ${o.from}`);
      if (o.to !== undefined) parts.push(`to ${o.to}`);
      if (o.from === undefined && o.to === undefined) parts.push('from all');
      if (o.iif !== undefined) parts.push(`iif ${o.iif}`);
      if (o.fwmark !== undefined)
        parts.push(`fwmark 0x${o.fwmark.toString(16)}/0x${(o.fwmask ?? 0xffffffff).toString(16)}`);
      parts.push(`lookup ${table(o.table)}`);
      return parts.join(' ');
    }
    case 'route': {
      const parts = [`route v${o.family} ${o.dst}`];
      if (o.gateway !== undefined) parts.push(`via ${o.gateway}`);
      parts.push(`dev ${o.dev}`, `table ${table(o.table)}`);
      if (o.scope !== 'universe') parts.push(`scope ${o.scope}`);
      if (o.src !== undefined) parts.push(`src ${o.src}`);
      return parts.join(' ');
    }
    case 'address':
      return `address ${o.cidr} dev ${o.dev}`;
    case 'neighbour':
      return `neighbour ${o.address} lladdr ${o.lladdr} dev ${o.dev}${o.permanent ? ' permanent' : ''}`;
  }
}

/**
 * The slot an object occupies: two objects with the same slot cannot both exist (a route's table and
 * destination; a neighbour's device and address). For rules and addresses the slot is the whole identity.
 */
export function slotOf(o: NetObject): string {
  switch (o.kind) {
    case 'route':
      return `route v${o.family} ${o.table} ${o.dst}`;
    case 'neighbour':
      return `neighbour ${o.dev} ${o.address}`;
    case 'address':
      return `address ${o.dev} ${o.cidr}`;
    case 'rule':
      return describe(o);
  }
}
