import { decodeError } from '../errors.js';
import { formatIp, type IpFamily } from '../ip.js';
import { attr, attrString, attrU32, getString, getU32, parseAttrs } from './attrs.js';
import {
  AF_INET,
  AF_INET6,
  IFA_ADDRESS,
  IFA_BROADCAST,
  IFA_FLAGS,
  IFA_LABEL,
  IFA_LOCAL,
  IFADDRMSG_LEN,
} from './constants.js';

/** An interface address as the kernel reports it (RTM_NEWADDR). */
export interface Address {
  /** 4 or 6. */
  family: IpFamily;
  /** Interface index. */
  index: number;
  /** The local address (IFA_LOCAL, else IFA_ADDRESS). */
  address: string;
  /** Prefix length. */
  prefixLength: number;
  /** `address/prefixLength`. */
  cidr: string;
  /** The peer address (IFA_ADDRESS) on point-to-point addresses, when it differs from the local one. */
  peer?: string;
  /** Broadcast address (IPv4). */
  broadcast?: string;
  /** Label (IPv4), e.g. `eth0:1`. */
  label?: string;
  /** Scope (0 universe, 253 link, 254 host). */
  scope: number;
  /** IFA_F_* flags (IFA_FLAGS when present, else the header's 8 bits). */
  flags: number;
}

/** A resolved address request. @internal */
export interface AddrRequest {
  family: IpFamily;
  index: number;
  local: Uint8Array;
  prefixLength: number;
  peer?: Uint8Array;
  broadcast?: Uint8Array;
  label?: string;
  scope: number;
  flags: number;
}

/** @internal */
export function ifaddrmsg(p: {
  family: number;
  prefixLength?: number;
  flags?: number;
  scope?: number;
  index?: number;
}) {
  const b = Buffer.alloc(IFADDRMSG_LEN);
  b.writeUInt8(p.family, 0);
  b.writeUInt8(p.prefixLength ?? 0, 1);
  b.writeUInt8((p.flags ?? 0) & 0xff, 2);
  b.writeUInt8(p.scope ?? 0, 3);
  b.writeUInt32LE(p.index ?? 0, 4);
  return b;
}

/** Encodes RTM_NEWADDR / RTM_DELADDR bodies the way `ip addr add|del` does. @internal */
export function encodeAddr(r: AddrRequest): Buffer[] {
  const family = r.family === 4 ? AF_INET : AF_INET6;
  const hdrFlags = r.flags <= 0xff ? r.flags : 0;
  const out: Buffer[] = [
    ifaddrmsg({ family, prefixLength: r.prefixLength, flags: hdrFlags, scope: r.scope, index: r.index }),
  ];
  out.push(attr(IFA_LOCAL, r.local));
  out.push(attr(IFA_ADDRESS, r.peer ?? r.local));
  if (r.broadcast !== undefined) out.push(attr(IFA_BROADCAST, r.broadcast));
  if (r.label !== undefined) out.push(attrString(IFA_LABEL, r.label));
  if (r.flags > 0xff) out.push(attrU32(IFA_FLAGS, r.flags));
  return out;
}

/** Decodes an RTM_NEWADDR payload. Throws `DECODE_ERROR` on malformed bytes. */
export function decodeAddr(payload: Buffer): Address {
  if (payload.length < IFADDRMSG_LEN) throw decodeError(`short ifaddrmsg (${payload.length} bytes)`);
  const fam = payload.readUInt8(0);
  if (fam !== AF_INET && fam !== AF_INET6) throw decodeError(`address family ${fam}`);
  const family: IpFamily = fam === AF_INET ? 4 : 6;
  const size = family === 4 ? 4 : 16;
  const attrs = parseAttrs(payload, IFADDRMSG_LEN);
  const ip = (t: number): string | undefined => {
    const v = attrs.get(t);
    if (v === undefined) return undefined;
    if (v.length !== size) throw decodeError(`address attribute ${t} has ${v.length} bytes`);
    return formatIp(v);
  };
  const local = ip(IFA_LOCAL);
  const address = ip(IFA_ADDRESS);
  const main = local ?? address;
  if (main === undefined) throw decodeError('address message without IFA_LOCAL or IFA_ADDRESS');
  const prefixLength = payload.readUInt8(1);
  const out: Address = {
    family,
    index: payload.readUInt32LE(4),
    address: main,
    prefixLength,
    cidr: `${main}/${prefixLength}`,
    scope: payload.readUInt8(3),
    flags: getU32(attrs, IFA_FLAGS) ?? payload.readUInt8(2),
  };
  if (local !== undefined && address !== undefined && address !== local) out.peer = address;
  const brd = ip(IFA_BROADCAST);
  if (brd !== undefined) out.broadcast = brd;
  const label = getString(attrs, IFA_LABEL);
  if (label !== undefined) out.label = label;
  return out;
}
