import type { Family } from './ip.js';
import type { NetObject, NetObjectKind } from './objects.js';

/** A link as the port reports it. */
export interface LinkInfo {
  /** Interface name. */
  readonly name: string;
  /** Interface index. */
  readonly index: number;
  /** MAC address, lower case. */
  readonly mac: string;
  /** MTU. */
  readonly mtu: number;
  /** Administratively up. */
  readonly up: boolean;
}

/** A veth pair whose peer is created directly in another network namespace (one request, no later move). */
export interface VethSpec {
  /** Name of this (host) end. */
  readonly name: string;
  /** MAC of this end. */
  readonly mac: string;
  /** MTU of both ends. */
  readonly mtu: number;
  /** Name of the peer inside the other namespace. */
  readonly peerName: string;
  /** Path of the other namespace (`/var/run/netns/x`, `/proc/<pid>/ns/net`). */
  readonly peerNetnsPath: string;
}

/** What {@link RoutingPort.list} returns for a kind. */
export type ListOf<K extends NetObjectKind> = Extract<NetObject, Record<'kind', K>>;

/**
 * The port routing-table applies through, bound to one network namespace. Implementations report failures
 * as {@link RoutingError}s: `EXISTS` from `add` when the object is already there, `NOT_FOUND` from
 * `remove`/`setLink` when it is not, `KERNEL` otherwise. The netlink-backed one is
 * {@link netlinkRoutingPort}; a stateful fake is in `@vpc-cni-kit/routing-table/testing`.
 */
export interface RoutingPort {
  /** Lists rules, routes (all tables, unicast only), addresses or neighbours of a family. */
  list<K extends NetObjectKind>(kind: K, family: Family): Promise<ListOf<K>[]>;
  /** Adds a rule, route, address or neighbour (`EXISTS` when present). */
  add(object: NetObject): Promise<void>;
  /** Adds or replaces a route or neighbour in its slot. */
  replace(object: NetObject): Promise<void>;
  /** Removes an object (`NOT_FOUND` when absent). */
  remove(object: NetObject): Promise<void>;
  /** Lists links; `addVeth` creates a pair with its peer in another namespace; `setLink` sets up/MTU. */
  links(): Promise<LinkInfo[]>;
  /** Creates a veth pair with the peer directly in `spec.peerNetnsPath`. */
  addVeth(spec: VethSpec): Promise<void>;
  /** Sets a link up and/or its MTU; `remove: true` deletes it (`NOT_FOUND` when absent). */
  setLink(name: string, change: { up?: boolean; mtu?: number; remove?: boolean }): Promise<void>;
  /** Writes a sysctl under `/proc/sys/` in this namespace (key like `net/ipv6/conf/eni1/accept_ra`). */
  setSysctl(key: string, value: string): Promise<void>;
}

/** A port that holds a resource (a socket) until closed. */
export interface ClosableRoutingPort extends RoutingPort {
  /** Releases the port. */
  close(): void;
}

/** Opens ports on other namespaces (the pod's), closing them when done. */
export interface RoutingPortFactory {
  /** A port bound to the namespace at `netnsPath`. */
  open(netnsPath: string): Promise<ClosableRoutingPort>;
}
