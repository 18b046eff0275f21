import { attrString, attrU32 } from '../codec/attrs.js';
import {
  AF_UNSPEC,
  ETH_P_8021AD,
  ETH_P_8021Q,
  IFF_UP,
  IFLA_IFNAME,
  IFLA_MASTER,
  NLM_F_CREATE,
  NLM_F_EXCL,
  RTM_DELLINK,
  RTM_GETLINK,
  RTM_NEWLINK,
} from '../codec/constants.js';
import {
  decodeLink,
  encodeLinkAttrs,
  encodeLinkInfo,
  ifinfomsg,
  type KindData,
  type Link,
  type LinkAttrs,
  type NsAttr,
} from '../codec/link.js';
import { invalidArgument, NetlinkError } from '../errors.js';
import { parseMac } from '../ip.js';
import {
  ifname,
  ip,
  type LinkRef,
  type NetnsTarget,
  resolveIndex,
  SKIP_STATS,
  u32,
  withNsAttr,
} from './common.js';
import { type DumpList, dumpList, type Op } from './driver.js';

/** Attributes any new link can take. */
export interface LinkCommonOptions {
  /** Interface name (at most 15 bytes). */
  name: string;
  /** MTU. */
  mtu?: number;
  /** MAC address, `aa:bb:cc:dd:ee:ff`. */
  address?: string;
  /** Transmit queue length. */
  txqlen?: number;
  /** Enslave to this master (bridge) at creation. */
  master?: LinkRef;
  /** Create the link directly in this namespace instead of the handle's. */
  netns?: NetnsTarget;
  /** Bring it up at creation (IFF_UP). */
  up?: boolean;
}

/** The peer end of a veth pair. */
export interface VethPeerOptions {
  /** Peer interface name. */
  name: string;
  /** Peer MTU (defaults to the kernel's choice, usually the same as the first end). */
  mtu?: number;
  /** Peer MAC address. */
  address?: string;
  /**
   * Create the peer directly in this namespace (one request, no later move). The peer cannot be brought
   * up at creation (the kernel answers ENOTCONN): bring it up with a handle bound to its namespace.
   */
  netns?: NetnsTarget;
}

/** `ip link add NAME type veth peer name PEER [netns NS]`. */
export interface VethAddOptions extends LinkCommonOptions {
  /** Discriminant. */
  kind: 'veth';
  /** The other end. */
  peer: VethPeerOptions;
}

/** `ip link add link PARENT name NAME type vlan id ID [protocol P]`. */
export interface VlanAddOptions extends LinkCommonOptions {
  /** Discriminant. */
  kind: 'vlan';
  /** The parent (lower) device. */
  parent: LinkRef;
  /** VLAN id, 0–4095. */
  id: number;
  /** Tag protocol; `802.1Q` when omitted (the attribute is then not sent, as with iproute2). */
  protocol?: '802.1Q' | '802.1ad';
}

/** `ip link add NAME type bridge`. */
export interface BridgeAddOptions extends LinkCommonOptions {
  /** Discriminant. */
  kind: 'bridge';
  /** Spanning tree on or off. */
  stp?: boolean;
  /** VLAN filtering on or off. */
  vlanFiltering?: boolean;
}

/** `ip link add NAME type vxlan id VNI [local A] [group|remote G] [dev D] [dstport P]`. */
export interface VxlanAddOptions extends LinkCommonOptions {
  /** Discriminant. */
  kind: 'vxlan';
  /** VXLAN network identifier, 0–16777215. */
  vni: number;
  /** Local (source) address. */
  local?: string;
  /** Multicast group or unicast remote. */
  group?: string;
  /** Underlay device. */
  dev?: LinkRef;
  /** UDP destination port (iproute2's `dstport`). */
  port?: number;
  /** TTL. */
  ttl?: number;
  /** MAC learning. */
  learning?: boolean;
}

/** `ip link add link PARENT name NAME type macvlan mode MODE`. */
export interface MacvlanAddOptions extends LinkCommonOptions {
  /** Discriminant. */
  kind: 'macvlan';
  /** The parent (lower) device. */
  parent: LinkRef;
  /** Mode; the kernel's default (vepa) when omitted. */
  mode?: 'private' | 'vepa' | 'bridge' | 'passthru' | 'source';
}

/** Options for `linkAdd`, discriminated by `kind`. */
export type LinkAddOptions =
  | VethAddOptions
  | VlanAddOptions
  | BridgeAddOptions
  | VxlanAddOptions
  | MacvlanAddOptions;

/** Changes for `linkSet` (`ip link set`). Omitted fields are left alone. */
export interface LinkSetOptions {
  /** Bring up (`true`) or down (`false`). */
  up?: boolean;
  /** New MTU. */
  mtu?: number;
  /** New MAC address. */
  address?: string;
  /** New name. */
  name?: string;
  /** Transmit queue length. */
  txqlen?: number;
  /** Enslave to this master, or `null` to release (`nomaster`). */
  master?: LinkRef | null;
  /** Move the link to this namespace (slow in the kernel: 17–35 ms). */
  netns?: NetnsTarget;
}

/** Filters for `linkList`. */
export interface LinkListOptions {
  /** Only links of this kind (`veth`, `bridge`, …). */
  kind?: string;
  /** Only links enslaved to this master index. */
  master?: number;
}

const MACVLAN_MODES = { private: 1, vepa: 2, bridge: 4, passthru: 8, source: 16 } as const;

function mac(op: string, text: string): Uint8Array {
  const b = parseMac(text);
  if (!b) throw invalidArgument(op, `bad MAC address ${JSON.stringify(text)}`);
  return b;
}

function plainAttrs(
  op: string,
  o: { name?: string; mtu?: number; address?: string; txqlen?: number },
): LinkAttrs {
  const a: LinkAttrs = {};
  if (o.name !== undefined) a.name = ifname(op, o.name);
  if (o.address !== undefined) a.address = mac(op, o.address);
  if (o.mtu !== undefined) a.mtu = u32(op, 'mtu', o.mtu, 68, 0xffff * 4);
  if (o.txqlen !== undefined) a.txqlen = u32(op, 'txqlen', o.txqlen);
  return a;
}

function* withOptionalNs<T>(op: string, t: NetnsTarget | undefined, body: (ns?: NsAttr) => Op<T>): Op<T> {
  if (t === undefined) return yield* body(undefined);
  return yield* withNsAttr(op, t, body);
}

/** `ip link show`: every link in the namespace. @internal */
export function* linkList(o: LinkListOptions = {}): Op<DumpList<Link>> {
  const reply = yield {
    op: 'link.list',
    type: RTM_GETLINK,
    flags: 0,
    body: [ifinfomsg({ family: AF_UNSPEC }), SKIP_STATS],
    dump: true,
  };
  const links = reply.messages
    .map((m) => decodeLink(m.payload))
    .filter(
      (l) => (o.kind === undefined || l.kind === o.kind) && (o.master === undefined || l.master === o.master),
    );
  return dumpList(links, reply.interrupted);
}

/** `ip link show dev X`. Throws `ENODEV` when there is no such link. @internal */
export function* linkGet(ref: LinkRef): Op<Link> {
  const op = 'link.get';
  const body =
    typeof ref === 'number'
      ? [ifinfomsg({ index: u32(op, 'ifindex', ref, 1, 0x7fffffff) }), SKIP_STATS]
      : [ifinfomsg({}), attrString(IFLA_IFNAME, ifname(op, ref)), SKIP_STATS];
  const reply = yield { op, type: RTM_GETLINK, flags: 0, body, dump: false };
  const m = reply.messages[0];
  if (!m) throw new NetlinkError({ code: 'PROTOCOL_ERROR', op, detail: 'no RTM_NEWLINK in the reply' });
  return decodeLink(m.payload);
}

/** `ip link add …`. @internal */
export function* linkAdd(o: LinkAddOptions): Op<void> {
  const op = 'link.add';
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const attrs = plainAttrs(op, o);
  if (attrs.name === undefined) throw invalidArgument(op, 'name is required');
  if (o.master !== undefined) attrs.master = yield* resolveIndex(op, o.master);
  let kind: KindData;
  let peerNs: NetnsTarget | undefined;
  switch (o.kind) {
    case 'veth': {
      if (typeof o.peer !== 'object' || o.peer === null) throw invalidArgument(op, 'veth needs peer');
      const peer = plainAttrs(op, o.peer);
      if (peer.name === undefined) throw invalidArgument(op, 'veth peer needs a name');
      peerNs = o.peer.netns;
      kind = { kind: 'veth', peer: { attrs: peer } };
      break;
    }
    case 'vlan': {
      const id = u32(op, 'vlan id', o.id, 0, 4095);
      attrs.parentIndex = yield* resolveIndex(op, o.parent);
      kind = { kind: 'vlan', id };
      if (o.protocol !== undefined) {
        if (o.protocol !== '802.1Q' && o.protocol !== '802.1ad')
          throw invalidArgument(op, 'bad vlan protocol');
        kind.protocol = o.protocol === '802.1ad' ? ETH_P_8021AD : ETH_P_8021Q;
      }
      break;
    }
    case 'bridge':
      kind = { kind: 'bridge' };
      if (o.stp !== undefined) kind.stp = o.stp;
      if (o.vlanFiltering !== undefined) kind.vlanFiltering = o.vlanFiltering;
      break;
    case 'vxlan': {
      const k: KindData = { kind: 'vxlan', id: u32(op, 'vni', o.vni, 0, 0xffffff) };
      if (o.local !== undefined) k.local = ip(op, o.local);
      if (o.group !== undefined) k.group = ip(op, o.group);
      if (o.dev !== undefined) k.dev = yield* resolveIndex(op, o.dev);
      if (o.port !== undefined) k.port = u32(op, 'port', o.port, 0, 0xffff);
      if (o.ttl !== undefined) k.ttl = u32(op, 'ttl', o.ttl, 0, 255);
      if (o.learning !== undefined) k.learning = o.learning;
      kind = k;
      break;
    }
    case 'macvlan':
      attrs.parentIndex = yield* resolveIndex(op, o.parent);
      kind = { kind: 'macvlan' };
      if (o.mode !== undefined) {
        const mode = MACVLAN_MODES[o.mode];
        if (mode === undefined) throw invalidArgument(op, `bad macvlan mode ${String(o.mode)}`);
        kind.mode = mode;
      }
      break;
    default:
      throw invalidArgument(op, `unsupported link kind ${JSON.stringify((o as { kind?: unknown }).kind)}`);
  }
  const up = o.up === true;
  yield* withOptionalNs(op, o.netns, (ns) =>
    withOptionalNs(op, peerNs, function* (pns) {
      if (ns !== undefined) attrs.ns = ns;
      if (kind.kind === 'veth') {
        if (pns !== undefined) kind.peer.attrs.ns = pns;
      }
      yield {
        op,
        type: RTM_NEWLINK,
        flags: NLM_F_CREATE | NLM_F_EXCL,
        body: [
          ifinfomsg(up ? { flags: IFF_UP, change: IFF_UP } : {}),
          ...encodeLinkAttrs(attrs),
          encodeLinkInfo(kind),
        ],
        dump: false,
      };
    }),
  );
}

/** `ip link del dev X`. @internal */
export function* linkDel(ref: LinkRef): Op<void> {
  const op = 'link.del';
  const body =
    typeof ref === 'number'
      ? [ifinfomsg({ index: u32(op, 'ifindex', ref, 1, 0x7fffffff) })]
      : [ifinfomsg({}), attrString(IFLA_IFNAME, ifname(op, ref))];
  yield { op, type: RTM_DELLINK, flags: 0, body, dump: false };
}

/**
 * `ip link set dev X …`: one RTM_NEWLINK carrying every change. A link given by name is looked up by the
 * kernel from IFLA_IFNAME in that same request (`ENODEV` when absent), unless the change renames it: then its
 * index is resolved first, since IFLA_IFNAME carries the new name.
 * @internal
 */
export function* linkSet(ref: LinkRef, o: LinkSetOptions): Op<void> {
  const op = 'link.set';
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const attrs = plainAttrs(op, o);
  let index = 0;
  if (typeof ref === 'string' && attrs.name === undefined) attrs.name = ifname(op, ref);
  else index = yield* resolveIndex(op, ref);
  const extra: Uint8Array[] = [];
  if (o.master === null) extra.push(attrU32(IFLA_MASTER, 0));
  else if (o.master !== undefined) attrs.master = yield* resolveIndex(op, o.master);
  const hdr = o.up === undefined ? { index } : { index, flags: o.up ? IFF_UP : 0, change: IFF_UP };
  yield* withOptionalNs(op, o.netns, function* (ns) {
    if (ns !== undefined) attrs.ns = ns;
    yield {
      op,
      type: RTM_NEWLINK,
      flags: 0,
      body: [ifinfomsg(hdr), ...encodeLinkAttrs(attrs), ...extra],
      dump: false,
    };
  });
}
