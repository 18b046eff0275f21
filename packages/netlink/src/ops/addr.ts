import { type Address, decodeAddr, encodeAddr, ifaddrmsg } from '../codec/addr.js';
import {
  AF_INET,
  AF_INET6,
  AF_UNSPEC,
  IFA_F_NODAD,
  IFA_F_NOPREFIXROUTE,
  NLM_F_CREATE,
  NLM_F_EXCL,
  NLM_F_REPLACE,
  RT_SCOPE_HOST,
  RTM_DELADDR,
  RTM_GETADDR,
  RTM_NEWADDR,
} from '../codec/constants.js';
import { invalidArgument } from '../errors.js';
import type { IpFamily } from '../ip.js';
import { ip, type LinkRef, prefix, resolveIndex, type Scope, scopeNumber } from './common.js';
import { type DumpList, dumpList, isInet, type Op } from './driver.js';

/** `ip addr add|del ADDRESS/LEN dev DEV …`. */
export interface AddrOptions {
  /** The link. */
  dev: LinkRef;
  /** Address with prefix length, e.g. `10.0.0.5/32` or `2001:db8::5/64` (a bare address means /32 or /128). */
  address: string;
  /** Peer address for point-to-point addresses. */
  peer?: string;
  /** Broadcast address (IPv4). */
  broadcast?: string;
  /** Label (IPv4), must start with the link name. */
  label?: string;
  /** Scope; iproute2's default (host for loopback addresses, else universe) when omitted. */
  scope?: Scope;
  /** Do not add the prefix route (IFA_F_NOPREFIXROUTE). */
  noPrefixRoute?: boolean;
  /** Skip duplicate address detection (IPv6, IFA_F_NODAD). */
  nodad?: boolean;
}

/** Filters for `addrList`. */
export interface AddrListOptions {
  /** Only this link's addresses (filtered by the kernel). */
  dev?: LinkRef;
  /** Only this family. */
  family?: IpFamily;
}

function* request(op: string, type: number, flags: number, o: AddrOptions): Op<void> {
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const p = prefix(op, o.address);
  const loopback = p.family === 4 ? p.bytes[0] === 127 : p.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
  let scope = 0;
  if (o.scope !== undefined) scope = scopeNumber(op, o.scope);
  else if (type !== RTM_DELADDR && loopback) scope = RT_SCOPE_HOST;
  let ifaFlags = 0;
  if (o.nodad) ifaFlags |= IFA_F_NODAD;
  if (o.noPrefixRoute) ifaFlags |= IFA_F_NOPREFIXROUTE;
  const req: Parameters<typeof encodeAddr>[0] = {
    family: p.family,
    index: 0,
    local: p.bytes,
    prefixLength: p.length,
    scope,
    flags: ifaFlags,
  };
  if (o.peer !== undefined) req.peer = ip(op, o.peer, p.family);
  if (o.broadcast !== undefined) req.broadcast = ip(op, o.broadcast, 4);
  if (o.label !== undefined) {
    if (
      typeof o.label !== 'string' ||
      o.label.length === 0 ||
      Buffer.byteLength(o.label) > 15 ||
      /[\s\0]/.test(o.label)
    ) {
      throw invalidArgument(op, `bad label ${JSON.stringify(o.label)}`);
    }
    req.label = o.label;
  }
  req.index = yield* resolveIndex(op, o.dev);
  yield { op, type, flags, body: encodeAddr(req), dump: false };
}

/** `ip addr add`. @internal */
export function addrAdd(o: AddrOptions): Op<void> {
  return request('addr.add', RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, o);
}

/** `ip addr replace`. @internal */
export function addrReplace(o: AddrOptions): Op<void> {
  return request('addr.replace', RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, o);
}

/** `ip addr del`. @internal */
export function addrDel(o: AddrOptions): Op<void> {
  return request('addr.del', RTM_DELADDR, 0, o);
}

/** `ip addr show`. @internal */
export function* addrList(o: AddrListOptions = {}): Op<DumpList<Address>> {
  const op = 'addr.list';
  const index = o.dev === undefined ? 0 : yield* resolveIndex(op, o.dev);
  const family = o.family === undefined ? AF_UNSPEC : o.family === 4 ? AF_INET : AF_INET6;
  const reply = yield { op, type: RTM_GETADDR, flags: 0, body: [ifaddrmsg({ family, index })], dump: true };
  const out = reply.messages
    .filter((m) => isInet(m.payload))
    .map((m) => decodeAddr(m.payload))
    .filter((a) => (index === 0 || a.index === index) && (o.family === undefined || a.family === o.family));
  return dumpList(out, reply.interrupted);
}
