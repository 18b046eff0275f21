import { familyBits } from '@vpc-cni-kit/ip-address';
import {
  isNetlinkError,
  type Link,
  type NetlinkHandle,
  type NetlinkHandleSync,
  type NetlinkOps,
  open,
  openSync,
  sysctlWrite,
} from '@vpc-cni-kit/netlink';
import { RoutingError } from './errors.js';
import type { Family } from './ip.js';
import type { AddressSpec, NeighbourSpec, NetObject, NetObjectKind, RouteSpec, RuleSpec } from './objects.js';
import type { LinkInfo, RoutingPort, RoutingPortFactory, VethSpec } from './port.js';

const NOT_FOUND = ['ENOENT', 'ESRCH', 'ENODEV', 'EADDRNOTAVAIL'];
const IFA_F_TENTATIVE = 0x40;
const NUD_PERMANENT = 0x80;
const FR_ACT_TO_TBL = 1;
const RTN_UNICAST = 1;

function translate(op: string, error: unknown): RoutingError {
  if (isNetlinkError(error)) {
    if (error.code === 'EEXIST')
      return new RoutingError({ code: 'EXISTS', op, errno: error.code, cause: error });
    if (NOT_FOUND.includes(error.code))
      return new RoutingError({ code: 'NOT_FOUND', op, errno: error.code, cause: error });
    if (error.code === 'INVALID_ARGUMENT') {
      return new RoutingError({ code: 'INVALID_ARGUMENT', op, detail: error.message, cause: error });
    }
    return new RoutingError({ code: 'KERNEL', op, errno: error.code, detail: error.message, cause: error });
  }
  return new RoutingError({ code: 'KERNEL', op, detail: String(error), cause: error });
}

async function call<T>(op: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw translate(op, error);
  }
}

function hostBits(prefix: string | undefined, family: Family): string | undefined {
  if (prefix === undefined) return undefined;
  return prefix.includes('/') ? prefix : `${prefix}/${familyBits(family)}`;
}

const SCOPES: Record<number, RouteSpec['scope']> = { 0: 'universe', 253: 'link', 254: 'host' };

/**
 * A {@link RoutingPort} over an `@vpc-cni-kit/netlink` handle (sync or async; a sync handle avoids the
 * worker-thread hop per request and is what the benchmark uses). Sysctls are written inside the handle's
 * namespace. Netlink errno codes map to `EXISTS` (EEXIST), `NOT_FOUND` (ENOENT, ESRCH, ENODEV,
 * EADDRNOTAVAIL) and `KERNEL` (anything else).
 */
export function netlinkRoutingPort(handle: NetlinkHandle | NetlinkHandleSync): RoutingPort {
  const h = handle as unknown as NetlinkOps<'async'>;
  const sysctlNetns = handle.netns;
  // Concurrent reads (readRoutingState lists links, routes and addresses at once) share one link dump.
  let linkDump: Promise<Link[]> | undefined;
  const dumpLinks = (): Promise<Link[]> => {
    if (linkDump === undefined) {
      linkDump = call('link.list', () => h.linkList());
      const clear = () => {
        linkDump = undefined;
      };
      linkDump.then(clear, clear);
    }
    return linkDump;
  };
  const names = async () => new Map((await dumpLinks()).map((l) => [l.index, l.name]));

  async function list(kind: NetObjectKind, family: Family): Promise<NetObject[]> {
    switch (kind) {
      case 'rule': {
        const rules = await call('rule.list', () => h.ruleList({ family }));
        return rules
          .filter((r) => r.action === FR_ACT_TO_TBL && !r.invert && r.oif === undefined)
          .map(
            (r): RuleSpec => ({
              kind: 'rule',
              family,
              priority: r.priority ?? 0,
              table: r.table,
              from: hostBits(r.from, family),
              to: hostBits(r.to, family),
              iif: r.iif,
              fwmark: r.fwmark,
              fwmask: r.fwmark === undefined ? undefined : (r.fwmask ?? 0xffffffff),
            }),
          );
      }
      case 'route': {
        const [routes, byIndex] = await Promise.all([
          call('route.list', () => h.routeList({ family, table: 'all' })),
          names(),
        ]);
        return routes
          .filter((r) => r.type === RTN_UNICAST && r.oif !== undefined && byIndex.has(r.oif))
          .map(
            (r): RouteSpec => ({
              kind: 'route',
              family,
              table: r.table,
              dst: r.dst,
              dev: byIndex.get(r.oif!)!,
              gateway: r.gateway,
              scope: SCOPES[r.scope] ?? 'universe',
              src: r.prefsrc,
            }),
          );
      }
      case 'address': {
        const [addresses, byIndex] = await Promise.all([
          call('addr.list', () => h.addrList({ family })),
          names(),
        ]);
        return addresses
          .filter((a) => byIndex.has(a.index))
          .map(
            (a): AddressSpec => ({
              kind: 'address',
              family,
              dev: byIndex.get(a.index)!,
              cidr: a.cidr,
              tentative: (a.flags & IFA_F_TENTATIVE) !== 0,
            }),
          );
      }
      case 'neighbour': {
        const [neighbours, byIndex] = await Promise.all([
          call('neigh.list', () => h.neighList({ family })),
          names(),
        ]);
        return neighbours
          .filter((n) => byIndex.has(n.index) && n.lladdr !== undefined)
          .map(
            (n): NeighbourSpec => ({
              kind: 'neighbour',
              family,
              dev: byIndex.get(n.index)!,
              address: n.address,
              lladdr: n.lladdr!.toLowerCase(),
              permanent: (n.state & NUD_PERMANENT) !== 0,
            }),
          );
      }
    }
  }

  function ruleOptions(r: RuleSpec) {
    return {
      family: r.family,
      priority: r.priority,
      table: r.table,
      ...(r.from !== undefined ? { from: r.from } : {}),
      ...(r.to !== undefined ? { to: r.to } : {}),
      ...(r.iif !== undefined ? { iif: r.iif } : {}),
      ...(r.fwmark !== undefined ? { fwmark: r.fwmark, fwmask: r.fwmask ?? 0xffffffff } : {}),
    };
  }

  function routeOptions(r: RouteSpec) {
    return {
      dst: r.dst,
      family: r.family,
      dev: r.dev,
      table: r.table,
      scope: r.scope,
      ...(r.gateway !== undefined ? { gateway: r.gateway } : {}),
      ...(r.src !== undefined ? { src: r.src } : {}),
    };
  }

  return {
    list: list as RoutingPort['list'],
    async add(o) {
      switch (o.kind) {
        case 'rule':
          return call('rule.add', () => h.ruleAdd(ruleOptions(o)));
        case 'route':
          return call('route.add', () => h.routeAdd(routeOptions(o)));
        case 'address':
          return call('addr.add', () => h.addrAdd({ dev: o.dev, address: o.cidr }));
        case 'neighbour':
          return call('neigh.add', () =>
            h.neighAdd({
              dev: o.dev,
              address: o.address,
              lladdr: o.lladdr,
              state: o.permanent ? 'permanent' : 'reachable',
            }),
          );
      }
    },
    async replace(o) {
      if (o.kind === 'route') return call('route.replace', () => h.routeReplace(routeOptions(o)));
      if (o.kind === 'neighbour') {
        return call('neigh.replace', () =>
          h.neighReplace({
            dev: o.dev,
            address: o.address,
            lladdr: o.lladdr,
            state: o.permanent ? 'permanent' : 'reachable',
          }),
        );
      }
      throw new RoutingError({
        code: 'INVALID_ARGUMENT',
        op: 'replace',
        detail: 'routes and neighbours only',
      });
    },
    async remove(o) {
      switch (o.kind) {
        case 'rule':
          return call('rule.del', () => h.ruleDel(ruleOptions(o)));
        case 'route':
          return call('route.del', () => h.routeDel(routeOptions(o)));
        case 'address':
          return call('addr.del', () => h.addrDel({ dev: o.dev, address: o.cidr }));
        case 'neighbour':
          return call('neigh.del', () => h.neighDel({ dev: o.dev, address: o.address }));
      }
    },
    async links(): Promise<LinkInfo[]> {
      const links = await dumpLinks();
      return links.map((l) => ({
        name: l.name,
        index: l.index,
        mac: (l.address ?? '').toLowerCase(),
        mtu: l.mtu ?? 0,
        up: l.up,
      }));
    },
    async addVeth(spec: VethSpec) {
      return call('link.add', () =>
        h.linkAdd({
          kind: 'veth',
          name: spec.name,
          address: spec.mac,
          mtu: spec.mtu,
          peer: { name: spec.peerName, mtu: spec.mtu, netns: spec.peerNetnsPath },
        }),
      );
    },
    async setLink(name, change) {
      if (change.remove) return call('link.del', () => h.linkDel(name));
      return call('link.set', () =>
        h.linkSet(name, {
          ...(change.up !== undefined ? { up: change.up } : {}),
          ...(change.mtu !== undefined ? { mtu: change.mtu } : {}),
        }),
      );
    },
    async setSysctl(key, value) {
      return call('sysctl.write', () =>
        sysctlWrite(key, value, sysctlNetns === undefined ? {} : { netns: sysctlNetns }),
      );
    },
  };
}

/** Options of {@link netlinkPortFactory}. */
export interface NetlinkPortFactoryOptions {
  /** Use blocking handles (no worker-thread hop; best for a one-shot CNI plugin). @defaultValue `false` */
  readonly sync?: boolean | undefined;
}

/** Opens netlink-backed ports bound to other namespaces (the pod's). */
export function netlinkPortFactory(options: NetlinkPortFactoryOptions = {}): RoutingPortFactory {
  return {
    async open(netnsPath) {
      const handle = await call<NetlinkHandle | NetlinkHandleSync>('open', () =>
        options.sync ? openSync({ netns: netnsPath }) : open({ netns: netnsPath }),
      );
      return Object.assign(netlinkRoutingPort(handle), { close: () => handle.close() });
    },
  };
}
