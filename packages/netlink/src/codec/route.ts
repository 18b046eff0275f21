import { decodeError } from '../errors.js';
import { formatIp, type IpFamily } from '../ip.js';
import { attr, attrU32, getU32, parseAttrs } from './attrs.js';
import {
  AF_INET,
  AF_INET6,
  RT_TABLE_UNSPEC,
  RTA_DST,
  RTA_GATEWAY,
  RTA_OIF,
  RTA_PREFSRC,
  RTA_PRIORITY,
  RTA_SRC,
  RTA_TABLE,
  RTMSG_LEN,
  RTNH_F_ONLINK,
} from './constants.js';

/** A route as the kernel reports it (RTM_NEWROUTE). */
export interface Route {
  /** 4 or 6. */
  family: IpFamily;
  /** Destination prefix, e.g. `10.0.0.0/24`; `0.0.0.0/0` or `::/0` for a default route. */
  dst: string;
  /** Routing table id (RTA_TABLE when present, which carries tables above 255). */
  table: number;
  /** Scope (0 universe, 253 link, 254 host). */
  scope: number;
  /** RTPROT_* (2 kernel, 3 boot, 4 static). */
  protocol: number;
  /** RTN_* (1 unicast, 2 local, 6 blackhole, …). */
  type: number;
  /** Next-hop gateway. */
  gateway?: string;
  /** Output interface index. */
  oif?: number;
  /** Preferred source address. */
  prefsrc?: string;
  /** Source prefix (RTA_SRC), for source-specific IPv6 routes. */
  src?: string;
  /** Metric (RTA_PRIORITY). */
  priority?: number;
  /** RTNH_F_ONLINK is set. */
  onlink: boolean;
  /** RTM_F_* and RTNH_F_* flags. */
  flags: number;
}

/** A resolved route request. @internal */
export interface RouteRequest {
  family: IpFamily;
  dst?: Uint8Array;
  dstLength: number;
  table: number;
  protocol: number;
  scope: number;
  type: number;
  flags: number;
  gateway?: Uint8Array;
  oif?: number;
  prefsrc?: Uint8Array;
  priority?: number;
}

/** @internal */
export function rtmsg(p: {
  family: number;
  dstLength?: number;
  table?: number;
  protocol?: number;
  scope?: number;
  type?: number;
  flags?: number;
}): Buffer {
  const b = Buffer.alloc(RTMSG_LEN);
  b.writeUInt8(p.family, 0);
  b.writeUInt8(p.dstLength ?? 0, 1);
  b.writeUInt8(p.table ?? 0, 4);
  b.writeUInt8(p.protocol ?? 0, 5);
  b.writeUInt8(p.scope ?? 0, 6);
  b.writeUInt8(p.type ?? 0, 7);
  b.writeUInt32LE((p.flags ?? 0) >>> 0, 8);
  return b;
}

/**
 * Encodes RTM_NEWROUTE / RTM_DELROUTE bodies. Attribute order follows
 * `ip route add table T DST src S via G metric M dev D`; tables above 255 go in RTA_TABLE.
 * @internal
 */
export function encodeRoute(r: RouteRequest): Buffer[] {
  const big = r.table > 255;
  const out: Buffer[] = [
    rtmsg({
      family: r.family === 4 ? AF_INET : AF_INET6,
      dstLength: r.dstLength,
      table: big ? RT_TABLE_UNSPEC : r.table,
      protocol: r.protocol,
      scope: r.scope,
      type: r.type,
      flags: r.flags,
    }),
  ];
  if (big) out.push(attrU32(RTA_TABLE, r.table));
  if (r.dst !== undefined) out.push(attr(RTA_DST, r.dst));
  if (r.prefsrc !== undefined) out.push(attr(RTA_PREFSRC, r.prefsrc));
  if (r.gateway !== undefined) out.push(attr(RTA_GATEWAY, r.gateway));
  if (r.priority !== undefined) out.push(attrU32(RTA_PRIORITY, r.priority));
  if (r.oif !== undefined) out.push(attrU32(RTA_OIF, r.oif));
  return out;
}

/** Decodes an RTM_NEWROUTE payload. Throws `DECODE_ERROR` on malformed bytes. */
export function decodeRoute(payload: Buffer): Route {
  if (payload.length < RTMSG_LEN) throw decodeError(`short rtmsg (${payload.length} bytes)`);
  const fam = payload.readUInt8(0);
  if (fam !== AF_INET && fam !== AF_INET6) throw decodeError(`route family ${fam}`);
  const family: IpFamily = fam === AF_INET ? 4 : 6;
  const size = family === 4 ? 4 : 16;
  const attrs = parseAttrs(payload, RTMSG_LEN);
  const ip = (t: number): string | undefined => {
    const v = attrs.get(t);
    if (v === undefined) return undefined;
    if (v.length !== size) throw decodeError(`route attribute ${t} has ${v.length} bytes`);
    return formatIp(v);
  };
  const dstLength = payload.readUInt8(1);
  const flags = payload.readUInt32LE(8);
  const route: Route = {
    family,
    dst: `${ip(RTA_DST) ?? (family === 4 ? '0.0.0.0' : '::')}/${dstLength}`,
    table: getU32(attrs, RTA_TABLE) ?? payload.readUInt8(4),
    protocol: payload.readUInt8(5),
    scope: payload.readUInt8(6),
    type: payload.readUInt8(7),
    onlink: (flags & RTNH_F_ONLINK) !== 0,
    flags,
  };
  const gw = ip(RTA_GATEWAY);
  if (gw !== undefined) route.gateway = gw;
  const oif = getU32(attrs, RTA_OIF);
  if (oif !== undefined) route.oif = oif;
  const prefsrc = ip(RTA_PREFSRC);
  if (prefsrc !== undefined) route.prefsrc = prefsrc;
  const src = ip(RTA_SRC);
  if (src !== undefined) route.src = `${src}/${payload.readUInt8(2)}`;
  const prio = getU32(attrs, RTA_PRIORITY);
  if (prio !== undefined) route.priority = prio;
  return route;
}
