import type { Address } from './codec/addr.js';
import type { Link } from './codec/link.js';
import type { Neighbour } from './codec/neigh.js';
import type { Route } from './codec/route.js';
import type { Rule } from './codec/rule.js';
import * as addr from './ops/addr.js';
import type { LinkRef } from './ops/common.js';
import { type DumpList, type Op, runAsync, runSync } from './ops/driver.js';
import * as link from './ops/link.js';
import * as neigh from './ops/neigh.js';
import * as route from './ops/route.js';
import * as rule from './ops/rule.js';
import { NetlinkSocket } from './socket.js';

/** How a handle returns results: plain values (`sync`) or promises (`async`). */
export type Mode = 'sync' | 'async';

/** `T` for sync handles, `Promise<T>` for async ones. */
export type Result<M extends Mode, T> = M extends 'sync' ? T : Promise<T>;

/**
 * The rtnetlink operations, named after iproute2 commands. Every operation validates its options first and
 * throws `INVALID_ARGUMENT` (changing nothing) on bad input; kernel refusals come back as errno-coded
 * {@link NetlinkError}s with the kernel's extended-ACK text. Links can be given by name or index.
 */
export interface NetlinkOps<M extends Mode> {
  /** `ip link show`. */
  linkList(options?: link.LinkListOptions): Result<M, DumpList<Link>>;
  /** `ip link show dev X`; `ENODEV` when absent. */
  linkGet(dev: LinkRef): Result<M, Link>;
  /** `ip link add …` (veth, vlan, bridge, vxlan, macvlan); `EEXIST` when the name is taken. */
  linkAdd(options: link.LinkAddOptions): Result<M, void>;
  /** `ip link del dev X`; `ENODEV` when absent. Slow in the kernel (about 20 ms). */
  linkDel(dev: LinkRef): Result<M, void>;
  /** `ip link set dev X …`: up/down, MTU, MAC, rename, master, move to a namespace. */
  linkSet(dev: LinkRef, changes: link.LinkSetOptions): Result<M, void>;
  /** `ip addr show`. */
  addrList(options?: addr.AddrListOptions): Result<M, DumpList<Address>>;
  /** `ip addr add`; `EEXIST` when present. */
  addrAdd(options: addr.AddrOptions): Result<M, void>;
  /** `ip addr replace`. */
  addrReplace(options: addr.AddrOptions): Result<M, void>;
  /** `ip addr del`; `EADDRNOTAVAIL` when absent. */
  addrDel(options: addr.AddrOptions): Result<M, void>;
  /** `ip route show`; the main table unless `table` says otherwise. */
  routeList(options?: route.RouteListOptions): Result<M, DumpList<Route>>;
  /** `ip route add`; `EEXIST` when present. */
  routeAdd(options: route.RouteOptions): Result<M, void>;
  /** `ip route replace`. */
  routeReplace(options: route.RouteOptions): Result<M, void>;
  /** `ip route del`; `ESRCH` when absent. */
  routeDel(options: route.RouteOptions): Result<M, void>;
  /** `ip rule show`. */
  ruleList(options?: rule.RuleListOptions): Result<M, DumpList<Rule>>;
  /** `ip rule add`; `EEXIST` when an identical rule exists. */
  ruleAdd(options: rule.RuleOptions): Result<M, void>;
  /** `ip rule del`; `ENOENT` when absent. */
  ruleDel(options: rule.RuleOptions): Result<M, void>;
  /** `ip neigh show`. */
  neighList(options?: neigh.NeighListOptions): Result<M, DumpList<Neighbour>>;
  /** `ip neigh add` (permanent unless `state` says otherwise); `EEXIST` when present. */
  neighAdd(options: neigh.NeighOptions): Result<M, void>;
  /** `ip neigh replace`. */
  neighReplace(options: neigh.NeighOptions): Result<M, void>;
  /** `ip neigh del`; `ENOENT` when absent. */
  neighDel(options: neigh.NeighOptions): Result<M, void>;
}

/** What every handle has besides the operations. */
export interface HandleBase {
  /** The namespace file the handle is bound to, or `undefined` for the namespace it was opened in. */
  readonly netns: string | undefined;
  /** The socket's netlink port id. */
  readonly portId: number;
  /** Closes the socket. Idempotent; later calls throw `CLOSED`. */
  close(): void;
}

/**
 * An rtnetlink handle for a daemon: operations return promises and do the kernel work on a worker thread,
 * so slow operations (link delete, namespace moves: 17–35 ms) do not stall the event loop. Requests on one
 * handle run one at a time, in call order.
 */
export interface NetlinkHandle extends NetlinkOps<'async'>, HandleBase {}

/** An rtnetlink handle for one-shot programs (the CNI plugin): every operation blocks until done. */
export interface NetlinkHandleSync extends NetlinkOps<'sync'>, HandleBase {}

/** Options for {@link open} and {@link openSync}. */
export interface OpenOptions {
  /**
   * Bind the handle to this network namespace (a file such as `/run/netns/NAME` or `/proc/PID/ns/net`).
   * Only the socket is created there; the calling thread is switched back at once.
   */
  netns?: string;
  /** How long one request may wait for the kernel's answer; 5000 ms by default. */
  timeoutMs?: number;
  /** Monotonic clock in milliseconds, for deadlines; `performance.now` by default. */
  clock?: () => number;
}

function bind<M extends Mode>(run: <T>(op: Op<T>) => Result<M, T>): NetlinkOps<M> {
  return {
    linkList: (o) => run(link.linkList(o)),
    linkGet: (d) => run(link.linkGet(d)),
    linkAdd: (o) => run(link.linkAdd(o)),
    linkDel: (d) => run(link.linkDel(d)),
    linkSet: (d, o) => run(link.linkSet(d, o)),
    addrList: (o) => run(addr.addrList(o)),
    addrAdd: (o) => run(addr.addrAdd(o)),
    addrReplace: (o) => run(addr.addrReplace(o)),
    addrDel: (o) => run(addr.addrDel(o)),
    routeList: (o) => run(route.routeList(o)),
    routeAdd: (o) => run(route.routeAdd(o)),
    routeReplace: (o) => run(route.routeReplace(o)),
    routeDel: (o) => run(route.routeDel(o)),
    ruleList: (o) => run(rule.ruleList(o)),
    ruleAdd: (o) => run(rule.ruleAdd(o)),
    ruleDel: (o) => run(rule.ruleDel(o)),
    neighList: (o) => run(neigh.neighList(o)),
    neighAdd: (o) => run(neigh.neighAdd(o)),
    neighReplace: (o) => run(neigh.neighReplace(o)),
    neighDel: (o) => run(neigh.neighDel(o)),
  };
}

function socketFor(options: OpenOptions): NetlinkSocket {
  return NetlinkSocket.open({ netns: options.netns, timeoutMs: options.timeoutMs, clock: options.clock });
}

/**
 * Opens a blocking handle, optionally bound to a network namespace. Throws `NOT_SUPPORTED` off Linux,
 * `ENOENT` when the namespace file does not exist, `EPERM` without CAP_SYS_ADMIN for a foreign namespace.
 */
export function openSync(options: OpenOptions = {}): NetlinkHandleSync {
  const sock = socketFor(options);
  const ops = bind<'sync'>((op) => runSync(op, (r) => sock.requestSync(r)));
  return Object.assign(ops, {
    netns: options.netns,
    portId: sock.portId,
    close: () => sock.closeSync(),
  });
}

/**
 * Opens an async handle, optionally bound to a network namespace. The namespace switch happens
 * synchronously inside this call (never across an `await`). Rejects like {@link openSync} throws.
 */
export async function open(options: OpenOptions = {}): Promise<NetlinkHandle> {
  const sock = socketFor(options);
  const ops = bind<'async'>((op) => runAsync(op, (r) => sock.request(r)));
  return Object.assign(ops, {
    netns: options.netns,
    portId: sock.portId,
    close: () => sock.close(),
  });
}
