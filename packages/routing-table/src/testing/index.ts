import { cidrNetwork, formatCidr, parseCidr } from '@vpc-cni-kit/ip-address';
import { RoutingError, type RoutingErrorCode } from '../errors.js';
import type { Family } from '../ip.js';
import {
  type AddressSpec,
  describe,
  MAIN_TABLE,
  type NetObject,
  type NetObjectKind,
  slotOf,
} from '../objects.js';
import type {
  ClosableRoutingPort,
  LinkInfo,
  ListOf,
  RoutingPort,
  RoutingPortFactory,
  VethSpec,
} from '../port.js';

/** A link in a {@link FakeNamespace}: what the routing port reads and sets of it. */
export interface FakeLink {
  /** Interface index, unique within the namespace. */
  index: number;
  /** MAC address, `aa:bb:cc:dd:ee:ff`. */
  mac: string;
  /** MTU in bytes. */
  mtu: number;
  /** Administratively up. */
  up: boolean;
}

/** Port methods a test can make fail with {@link FakeNamespace.failNext}. */
export type FakeOperation =
  | 'list'
  | 'add'
  | 'replace'
  | 'remove'
  | 'links'
  | 'addVeth'
  | 'setLink'
  | 'setSysctl';

/**
 * A stateful in-memory {@link RoutingPort} for one namespace of a {@link FakeNetwork}. It behaves like the
 * kernel where routing-table depends on it: `add` of an existing object is `EXISTS`, `remove` of an absent
 * one is `NOT_FOUND`; an IPv4 address with a prefix shorter than /32 adds the kernel's subnet route to
 * main; deleting a link removes its addresses, routes and neighbours; routes and neighbours need their
 * link.
 */
export class FakeNamespace implements RoutingPort {
  /** Links by name. */
  readonly linkTable = new Map<string, FakeLink>();
  /** Rules, routes, addresses and neighbours by identity. */
  readonly objects = new Map<string, NetObject>();
  /** Sysctls written, by key. */
  readonly sysctls = new Map<string, string>();
  /** Number of calls that changed (or tried to change) state. */
  writes = 0;
  private failures: { op: FakeOperation; code: RoutingErrorCode }[] = [];

  constructor(
    /** The namespace path this fake stands for. */
    readonly path: string,
    private readonly network: FakeNetwork,
  ) {
    this.linkTable.set('lo', { index: 1, mac: '00:00:00:00:00:00', mtu: 65536, up: true });
  }

  /** Makes the next call of `op` fail with `code` (once). */
  failNext(op: FakeOperation, code: RoutingErrorCode): void {
    this.failures.push({ op, code });
  }

  /** Adds a link directly (a test's "hot-plugged ENI"). */
  addLink(name: string, mac: string, mtu = 1500): void {
    this.linkTable.set(name, { index: this.network.nextIndex(), mac, mtu, up: false });
  }

  /** Every object of a kind, rendered as text and sorted (for assertions). */
  show(kind: NetObjectKind): string[] {
    return [...this.objects.values()]
      .filter((o) => o.kind === kind)
      .map(describe)
      .sort();
  }

  private check(op: FakeOperation): void {
    const i = this.failures.findIndex((f) => f.op === op);
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      throw new RoutingError({
        code: f!.code,
        op: `fake.${op}`,
        errno: f!.code === 'KERNEL' ? 'EIO' : undefined,
      });
    }
  }

  private needLink(op: string, dev: string): void {
    if (!this.linkTable.has(dev)) throw new RoutingError({ code: 'NOT_FOUND', op, detail: `no link ${dev}` });
  }

  async list<K extends NetObjectKind>(kind: K, family: Family): Promise<ListOf<K>[]> {
    this.check('list');
    return [...this.objects.values()].filter((o) => o.kind === kind && o.family === family) as ListOf<K>[];
  }

  async add(object: NetObject): Promise<void> {
    this.check('add');
    this.writes++;
    if (object.kind !== 'rule') this.needLink('add', object.dev);
    const key = object.kind === 'rule' || object.kind === 'address' ? describe(object) : slotOf(object);
    const taken = [...this.objects.values()].some(
      (o) => (o.kind === 'rule' || o.kind === 'address' ? describe(o) : slotOf(o)) === key,
    );
    if (taken) throw new RoutingError({ code: 'EXISTS', op: 'fake.add', detail: describe(object) });
    this.objects.set(describe(object), object);
    if (object.kind === 'address') this.addKernelRoute(object);
  }

  private addKernelRoute(a: AddressSpec): void {
    const [ip, len] = a.cidr.split('/');
    if (a.family !== 4 || len === '32') return;
    const dst = formatCidr(cidrNetwork(parseCidr(a.cidr)!));
    const route: NetObject = {
      kind: 'route',
      family: 4,
      table: MAIN_TABLE,
      dst,
      dev: a.dev,
      scope: 'link',
      src: ip,
    };
    this.objects.set(describe(route), route);
  }

  async replace(object: NetObject): Promise<void> {
    this.check('replace');
    this.writes++;
    if (object.kind !== 'route' && object.kind !== 'neighbour') {
      throw new RoutingError({
        code: 'INVALID_ARGUMENT',
        op: 'fake.replace',
        detail: 'routes and neighbours only',
      });
    }
    this.needLink('replace', object.dev);
    for (const [key, o] of this.objects) if (slotOf(o) === slotOf(object)) this.objects.delete(key);
    this.objects.set(describe(object), object);
  }

  async remove(object: NetObject): Promise<void> {
    this.check('remove');
    this.writes++;
    const key = describe(object);
    if (!this.objects.delete(key))
      throw new RoutingError({ code: 'NOT_FOUND', op: 'fake.remove', detail: key });
    if (object.kind === 'address') {
      const ip = object.cidr.split('/')[0];
      for (const [k, o] of this.objects)
        if (o.kind === 'route' && o.dev === object.dev && o.src === ip) this.objects.delete(k);
    }
  }

  async links(): Promise<LinkInfo[]> {
    this.check('links');
    return [...this.linkTable.entries()].map(([name, l]) => ({ name, ...l }));
  }

  async addVeth(spec: VethSpec): Promise<void> {
    this.check('addVeth');
    this.writes++;
    const peerNs = this.network.namespaces.get(spec.peerNetnsPath);
    if (!peerNs)
      throw new RoutingError({
        code: 'NOT_FOUND',
        op: 'fake.addVeth',
        detail: `no namespace ${spec.peerNetnsPath}`,
      });
    if (this.linkTable.has(spec.name) || peerNs.linkTable.has(spec.peerName)) {
      throw new RoutingError({ code: 'EXISTS', op: 'fake.addVeth', detail: spec.name });
    }
    this.linkTable.set(spec.name, {
      index: this.network.nextIndex(),
      mac: spec.mac,
      mtu: spec.mtu,
      up: false,
    });
    peerNs.linkTable.set(spec.peerName, {
      index: this.network.nextIndex(),
      mac: this.network.nextMac(),
      mtu: spec.mtu,
      up: false,
    });
  }

  async setLink(name: string, change: { up?: boolean; mtu?: number; remove?: boolean }): Promise<void> {
    this.check('setLink');
    this.writes++;
    const link = this.linkTable.get(name);
    if (!link) throw new RoutingError({ code: 'NOT_FOUND', op: 'fake.setLink', detail: name });
    if (change.remove) {
      this.linkTable.delete(name);
      for (const [k, o] of this.objects) if (o.kind !== 'rule' && o.dev === name) this.objects.delete(k);
      return;
    }
    if (change.up !== undefined) link.up = change.up;
    if (change.mtu !== undefined) link.mtu = change.mtu;
  }

  async setSysctl(key: string, value: string): Promise<void> {
    this.check('setSysctl');
    this.writes++;
    const dev = /^net\/ipv[46]\/conf\/([^/]+)\//.exec(key)?.[1];
    if (dev !== undefined && dev !== 'all' && dev !== 'default' && !this.linkTable.has(dev)) {
      throw new RoutingError({ code: 'NOT_FOUND', op: 'fake.setSysctl', detail: key });
    }
    this.sysctls.set(key, value);
  }
}

/** A set of fake namespaces (host and pods) that veths can join, plus a {@link RoutingPortFactory}. */
export class FakeNetwork implements RoutingPortFactory {
  /** Namespaces by path. */
  readonly namespaces = new Map<string, FakeNamespace>();
  private index = 1;
  private macs = 0;

  /** Creates (or returns) the namespace at `path`. */
  namespace(path: string): FakeNamespace {
    let ns = this.namespaces.get(path);
    if (!ns) {
      ns = new FakeNamespace(path, this);
      this.namespaces.set(path, ns);
    }
    return ns;
  }

  /** Deletes a namespace (as deleting a pod's netns does), and the host ends of veths into it. */
  deleteNamespace(path: string): void {
    this.namespaces.delete(path);
  }

  async open(netnsPath: string): Promise<ClosableRoutingPort> {
    const ns = this.namespaces.get(netnsPath);
    if (!ns) throw new RoutingError({ code: 'NOT_FOUND', op: 'fake.open', detail: netnsPath });
    return Object.assign(ns, { close: () => {} });
  }

  /** @internal */
  nextIndex(): number {
    return ++this.index;
  }

  /** @internal */
  nextMac(): string {
    this.macs++;
    return `0a:00:00:00:${((this.macs >> 8) & 0xff).toString(16).padStart(2, '0')}:${(this.macs & 0xff).toString(16).padStart(2, '0')}`;
  }
}
