import { decodeError } from '../errors.js';
import { formatMac } from '../ip.js';
import {
  type AttrMap,
  attr,
  attrBe16,
  attrNested,
  attrString,
  attrU8,
  attrU16,
  attrU32,
  getBe16,
  getNested,
  getString,
  getU8,
  getU16,
  getU32,
  parseAttrsOf,
} from './attrs.js';
import {
  IFF_LOWER_UP,
  IFF_UP,
  IFINFOMSG_LEN,
  IFLA_ADDRESS,
  IFLA_BR_STP_STATE,
  IFLA_BR_VLAN_FILTERING,
  IFLA_BROADCAST,
  IFLA_IFNAME,
  IFLA_INFO_DATA,
  IFLA_INFO_KIND,
  IFLA_INFO_SLAVE_KIND,
  IFLA_LINK,
  IFLA_LINK_NETNSID,
  IFLA_LINKINFO,
  IFLA_MACVLAN_MODE,
  IFLA_MASTER,
  IFLA_MTU,
  IFLA_NET_NS_FD,
  IFLA_NET_NS_PID,
  IFLA_OPERSTATE,
  IFLA_TXQLEN,
  IFLA_VLAN_ID,
  IFLA_VLAN_PROTOCOL,
  IFLA_VXLAN_GROUP,
  IFLA_VXLAN_GROUP6,
  IFLA_VXLAN_ID,
  IFLA_VXLAN_LEARNING,
  IFLA_VXLAN_LINK,
  IFLA_VXLAN_LOCAL,
  IFLA_VXLAN_LOCAL6,
  IFLA_VXLAN_PORT,
  IFLA_VXLAN_TTL,
  VETH_INFO_PEER,
} from './constants.js';

/** RFC 2863 operational state, as the kernel reports it in IFLA_OPERSTATE. */
export type OperState = 'unknown' | 'notpresent' | 'down' | 'lowerlayerdown' | 'testing' | 'dormant' | 'up';

const OPER_STATES: readonly OperState[] = [
  'unknown',
  'notpresent',
  'down',
  'lowerlayerdown',
  'testing',
  'dormant',
  'up',
];

/** A network interface as the kernel reports it (RTM_NEWLINK). */
export interface Link {
  /** Interface index (ifindex). */
  index: number;
  /** Interface name. */
  name: string;
  /** IFLA_INFO_KIND (`veth`, `bridge`, `vlan`, `vxlan`, …); absent for devices without one (lo, physical). */
  kind?: string;
  /** IFLA_INFO_SLAVE_KIND when the link is enslaved (e.g. `bridge`). */
  slaveKind?: string;
  /** ARPHRD_* device type (1 = ether, 772 = loopback). */
  type: number;
  /** IFF_* flags. */
  flags: number;
  /** Administratively up (IFF_UP). */
  up: boolean;
  /** Carrier present (IFF_LOWER_UP). */
  lowerUp: boolean;
  /** Operational state. */
  operState: OperState;
  /** MTU. */
  mtu?: number;
  /** Link-layer address, `aa:bb:cc:dd:ee:ff`. */
  address?: string;
  /** Link-layer broadcast address. */
  broadcast?: string;
  /** Index of the master device (bridge, bond), if enslaved. */
  master?: number;
  /** IFLA_LINK: the parent (vlan) or peer (veth) index, which may be in another namespace. */
  parentIndex?: number;
  /** IFLA_LINK_NETNSID: the namespace id of the peer/parent, when it is in another namespace. */
  linkNetnsId?: number;
  /** Transmit queue length. */
  txqlen?: number;
  /** VLAN id, for `vlan` links. */
  vlanId?: number;
  /** VLAN protocol, for `vlan` links. */
  vlanProtocol?: '802.1Q' | '802.1ad';
  /** VNI, for `vxlan` links. */
  vxlanId?: number;
}

/** Raw bytes of an ifinfomsg header. @internal */
export function ifinfomsg(p: { family?: number; index?: number; flags?: number; change?: number }): Buffer {
  const b = Buffer.alloc(IFINFOMSG_LEN);
  b.writeUInt8(p.family ?? 0, 0);
  b.writeInt32LE(p.index ?? 0, 4);
  b.writeUInt32LE((p.flags ?? 0) >>> 0, 8);
  b.writeUInt32LE((p.change ?? 0) >>> 0, 12);
  return b;
}

/** Where a link should live: a namespace file (fd, opened by the caller) or a process id. @internal */
export type NsAttr = { fd: number } | { pid: number };

/** @internal */
export function nsAttr(ns: NsAttr): Buffer {
  return 'fd' in ns ? attrU32(IFLA_NET_NS_FD, ns.fd) : attrU32(IFLA_NET_NS_PID, ns.pid);
}

/** Common per-link attributes, already resolved to numbers and bytes. @internal */
export interface LinkAttrs {
  name?: string;
  mtu?: number;
  address?: Uint8Array;
  master?: number;
  parentIndex?: number;
  txqlen?: number;
  ns?: NsAttr;
}

/**
 * Encodes the common attributes in the order iproute2 emits them for `ip link add` (options first, then
 * IFLA_LINK, then the name).
 * @internal
 */
export function encodeLinkAttrs(a: LinkAttrs): Buffer[] {
  const out: Buffer[] = [];
  if (a.mtu !== undefined) out.push(attrU32(IFLA_MTU, a.mtu));
  if (a.address !== undefined) out.push(attr(IFLA_ADDRESS, a.address));
  if (a.txqlen !== undefined) out.push(attrU32(IFLA_TXQLEN, a.txqlen));
  if (a.master !== undefined) out.push(attrU32(IFLA_MASTER, a.master));
  if (a.ns !== undefined) out.push(nsAttr(a.ns));
  if (a.parentIndex !== undefined) out.push(attrU32(IFLA_LINK, a.parentIndex));
  if (a.name !== undefined) out.push(attrString(IFLA_IFNAME, a.name));
  return out;
}

/** Kind-specific data (IFLA_INFO_DATA), resolved. @internal */
export type KindData =
  | { kind: 'veth'; peer: { attrs: LinkAttrs } }
  | { kind: 'vlan'; id: number; protocol?: number }
  | { kind: 'bridge'; stp?: boolean; vlanFiltering?: boolean }
  | {
      kind: 'vxlan';
      id: number;
      local?: Uint8Array;
      group?: Uint8Array;
      dev?: number;
      port?: number;
      ttl?: number;
      learning?: boolean;
    }
  | { kind: 'macvlan'; mode?: number };

/** Encodes IFLA_LINKINFO for a kind. @internal */
export function encodeLinkInfo(k: KindData): Buffer {
  const data: Buffer[] = [];
  switch (k.kind) {
    case 'veth':
      data.push(attrNested(VETH_INFO_PEER, [ifinfomsg({}), ...encodeLinkAttrs(k.peer.attrs)]));
      break;
    case 'vlan':
      if (k.protocol !== undefined) data.push(attrBe16(IFLA_VLAN_PROTOCOL, k.protocol));
      data.push(attrU16(IFLA_VLAN_ID, k.id));
      break;
    case 'bridge':
      if (k.stp !== undefined) data.push(attrU32(IFLA_BR_STP_STATE, k.stp ? 1 : 0));
      if (k.vlanFiltering !== undefined) data.push(attrU8(IFLA_BR_VLAN_FILTERING, k.vlanFiltering ? 1 : 0));
      break;
    case 'vxlan':
      data.push(attrU32(IFLA_VXLAN_ID, k.id));
      if (k.group !== undefined) {
        data.push(attr(k.group.length === 4 ? IFLA_VXLAN_GROUP : IFLA_VXLAN_GROUP6, k.group));
      }
      if (k.local !== undefined) {
        data.push(attr(k.local.length === 4 ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, k.local));
      }
      if (k.dev !== undefined) data.push(attrU32(IFLA_VXLAN_LINK, k.dev));
      if (k.ttl !== undefined) data.push(attrU8(IFLA_VXLAN_TTL, k.ttl));
      if (k.learning !== undefined) data.push(attrU8(IFLA_VXLAN_LEARNING, k.learning ? 1 : 0));
      if (k.port !== undefined) data.push(attrBe16(IFLA_VXLAN_PORT, k.port));
      break;
    case 'macvlan':
      if (k.mode !== undefined) data.push(attrU32(IFLA_MACVLAN_MODE, k.mode));
      break;
  }
  // iproute2 sends the kind without its NUL terminator.
  const info = [attr(IFLA_INFO_KIND, Buffer.from(k.kind, 'utf8'))];
  if (data.length > 0) info.push(attrNested(IFLA_INFO_DATA, data));
  return attrNested(IFLA_LINKINFO, info);
}

function kindDetails(link: Link, info: AttrMap | undefined): void {
  if (!info) return;
  const kind = getString(info, IFLA_INFO_KIND);
  if (kind !== undefined) link.kind = kind;
  const slave = getString(info, IFLA_INFO_SLAVE_KIND);
  if (slave !== undefined) link.slaveKind = slave;
  const data = getNested(info, IFLA_INFO_DATA);
  if (!data) return;
  if (kind === 'vlan') {
    const id = getU16(data, IFLA_VLAN_ID);
    if (id !== undefined) link.vlanId = id;
    const proto = getBe16(data, IFLA_VLAN_PROTOCOL);
    if (proto !== undefined) link.vlanProtocol = proto === 0x88a8 ? '802.1ad' : '802.1Q';
  } else if (kind === 'vxlan') {
    const id = getU32(data, IFLA_VXLAN_ID);
    if (id !== undefined) link.vxlanId = id;
  }
}

/** The top-level attributes {@link decodeLink} reads (the rest are skipped unallocated). */
const LINK_ATTRS = (() => {
  const wanted = new Uint8Array(64);
  for (const t of [
    IFLA_OPERSTATE,
    IFLA_IFNAME,
    IFLA_MTU,
    IFLA_ADDRESS,
    IFLA_BROADCAST,
    IFLA_MASTER,
    IFLA_LINK,
    IFLA_LINK_NETNSID,
    IFLA_TXQLEN,
    IFLA_LINKINFO,
  ])
    wanted[t] = 1;
  return wanted;
})();

/** Decodes the payload of an RTM_NEWLINK message. Throws `DECODE_ERROR` on malformed bytes. */
export function decodeLink(payload: Buffer): Link {
  if (payload.length < IFINFOMSG_LEN) throw decodeError(`short ifinfomsg (${payload.length} bytes)`);
  const flags = payload.readUInt32LE(8);
  const attrs = parseAttrsOf(payload, IFINFOMSG_LEN, payload.length, LINK_ATTRS);
  const oper = getU8(attrs, IFLA_OPERSTATE);
  const link: Link = {
    index: payload.readInt32LE(4),
    name: getString(attrs, IFLA_IFNAME) ?? '',
    type: payload.readUInt16LE(2),
    flags,
    up: (flags & IFF_UP) !== 0,
    lowerUp: (flags & IFF_LOWER_UP) !== 0,
    operState: OPER_STATES[oper ?? 0] ?? 'unknown',
  };
  const mtu = getU32(attrs, IFLA_MTU);
  if (mtu !== undefined) link.mtu = mtu;
  const addr = attrs.get(IFLA_ADDRESS);
  if (addr !== undefined && addr.length > 0) link.address = formatMac(addr);
  const brd = attrs.get(IFLA_BROADCAST);
  if (brd !== undefined && brd.length > 0) link.broadcast = formatMac(brd);
  const master = getU32(attrs, IFLA_MASTER);
  if (master !== undefined) link.master = master;
  const parent = getU32(attrs, IFLA_LINK);
  if (parent !== undefined) link.parentIndex = parent;
  const nsid = getU32(attrs, IFLA_LINK_NETNSID);
  if (nsid !== undefined) link.linkNetnsId = nsid | 0;
  const txq = getU32(attrs, IFLA_TXQLEN);
  if (txq !== undefined) link.txqlen = txq;
  kindDetails(link, getNested(attrs, IFLA_LINKINFO));
  return link;
}
