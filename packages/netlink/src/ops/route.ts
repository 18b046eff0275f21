import { attrU32 } from '../codec/attrs.js';
import {
  AF_INET,
  AF_INET6,
  AF_UNSPEC,
  NLM_F_CREATE,
  NLM_F_EXCL,
  NLM_F_REPLACE,
  RT_SCOPE_HOST,
  RT_SCOPE_LINK,
  RT_SCOPE_NOWHERE,
  RT_SCOPE_UNIVERSE,
  RT_TABLE_MAIN,
  RTA_OIF,
  RTA_TABLE,
  RTM_DELROUTE,
  RTM_GETROUTE,
  RTM_NEWROUTE,
  RTN_LOCAL,
  RTN_UNICAST,
  RTNH_F_ONLINK,
  RTPROT_BOOT,
} from '../codec/constants.js';
import { decodeRoute, encodeRoute, type Route, type RouteRequest, rtmsg } from '../codec/route.js';
import { invalidArgument } from '../errors.js';
import { type IpFamily, ipFamily } from '../ip.js';
import {
  ip,
  type LinkRef,
  prefix,
  resolveIndex,
  type Scope,
  scopeNumber,
  type TableRef,
  tableNumber,
  u32,
} from './common.js';
import { type DumpList, dumpList, isInet, type Op } from './driver.js';

/** Route types accepted by {@link RouteOptions.type}. */
export type RouteType =
  | 'unicast'
  | 'local'
  | 'broadcast'
  | 'blackhole'
  | 'unreachable'
  | 'prohibit'
  | 'throw';

const ROUTE_TYPES: Record<RouteType, number> = {
  unicast: 1,
  local: 2,
  broadcast: 3,
  blackhole: 6,
  unreachable: 7,
  prohibit: 8,
  throw: 9,
};

/** `ip route add|replace|del DST [via GW] [dev DEV] [table T] [scope S] [src A] [metric M] [onlink]`. */
export interface RouteOptions {
  /** Destination prefix, or `default`. A bare address means a host route. */
  dst: string;
  /** Needed only for `dst: 'default'` without a gateway; otherwise inferred from the addresses. */
  family?: IpFamily;
  /** Next-hop gateway (`via`). */
  gateway?: string;
  /** Output link (`dev`). */
  dev?: LinkRef;
  /** Table; `main` when omitted. Tables above 255 are sent in RTA_TABLE. */
  table?: TableRef;
  /** Scope; iproute2's default when omitted (link for IPv4 unicast without a gateway, else universe). */
  scope?: Scope;
  /** Preferred source address (`src`). */
  src?: string;
  /** Metric (`metric` / `priority`). */
  metric?: number;
  /** Treat the gateway as on-link even if no prefix covers it. */
  onlink?: boolean;
  /** RTPROT_* number; `boot` (3) when omitted, as iproute2. */
  protocol?: number;
  /** Route type; `unicast` when omitted. */
  type?: RouteType;
}

/** Filters for `routeList`. */
export interface RouteListOptions {
  /** Only this family. */
  family?: IpFamily;
  /** Only this table (kernel-filtered); `main` when omitted, `all` for every table. */
  table?: TableRef | 'all';
  /** Only routes out of this link (kernel-filtered). */
  dev?: LinkRef;
}

function* request(op: string, type: number, flags: number, o: RouteOptions): Op<void> {
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const del = type === RTM_DELROUTE;
  let family = o.family;
  for (const a of [o.gateway, o.src]) {
    if (a === undefined) continue;
    const f = ipFamily(a);
    if (f === undefined) throw invalidArgument(op, `bad IP address ${JSON.stringify(a)}`);
    if (family !== undefined && family !== f) throw invalidArgument(op, 'mixed address families');
    family = f;
  }
  let dst: Uint8Array | undefined;
  let dstLength = 0;
  if (o.dst !== 'default') {
    const p = prefix(op, o.dst, family);
    family = p.family;
    dstLength = p.length;
    if (p.length > 0) dst = p.bytes;
  }
  if (family === undefined) family = 4;
  const rtype = o.type === undefined ? RTN_UNICAST : ROUTE_TYPES[o.type];
  if (rtype === undefined) throw invalidArgument(op, `bad route type ${String(o.type)}`);
  let scope: number;
  if (o.scope !== undefined) scope = scopeNumber(op, o.scope);
  else if (family === 6) scope = RT_SCOPE_UNIVERSE;
  else if (rtype === RTN_LOCAL) scope = RT_SCOPE_HOST;
  else if (rtype === 3) scope = RT_SCOPE_LINK;
  else if (rtype === RTN_UNICAST && del) scope = RT_SCOPE_NOWHERE;
  else if (rtype === RTN_UNICAST && o.gateway === undefined) scope = RT_SCOPE_LINK;
  else scope = RT_SCOPE_UNIVERSE;
  const req: RouteRequest = {
    family,
    dstLength,
    table: o.table === undefined ? RT_TABLE_MAIN : tableNumber(op, o.table),
    protocol: o.protocol !== undefined ? u32(op, 'protocol', o.protocol, 0, 255) : del ? 0 : RTPROT_BOOT,
    scope,
    type: del && o.type === undefined ? 0 : rtype,
    flags: o.onlink ? RTNH_F_ONLINK : 0,
  };
  if (dst !== undefined) req.dst = dst;
  if (o.gateway !== undefined) req.gateway = ip(op, o.gateway, family);
  if (o.src !== undefined) req.prefsrc = ip(op, o.src, family);
  if (o.metric !== undefined) req.priority = u32(op, 'metric', o.metric);
  if (o.dev !== undefined) req.oif = yield* resolveIndex(op, o.dev);
  yield { op, type, flags, body: encodeRoute(req), dump: false };
}

/** `ip route add`. @internal */
export function routeAdd(o: RouteOptions): Op<void> {
  return request('route.add', RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, o);
}

/** `ip route replace`. @internal */
export function routeReplace(o: RouteOptions): Op<void> {
  return request('route.replace', RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, o);
}

/** `ip route del`. @internal */
export function routeDel(o: RouteOptions): Op<void> {
  return request('route.del', RTM_DELROUTE, 0, o);
}

/** `ip route show [table T] [dev D]`. @internal */
export function* routeList(o: RouteListOptions = {}): Op<DumpList<Route>> {
  const op = 'route.list';
  const family = o.family === undefined ? AF_UNSPEC : o.family === 4 ? AF_INET : AF_INET6;
  const table = o.table === 'all' ? 0 : o.table === undefined ? RT_TABLE_MAIN : tableNumber(op, o.table);
  const body: Uint8Array[] = [rtmsg({ family })];
  if (table !== 0) body.push(attrU32(RTA_TABLE, table));
  let oif = 0;
  if (o.dev !== undefined) {
    oif = yield* resolveIndex(op, o.dev);
    body.push(attrU32(RTA_OIF, oif));
  }
  const reply = yield { op, type: RTM_GETROUTE, flags: 0, body, dump: true };
  const out = reply.messages
    .filter((m) => isInet(m.payload))
    .map((m) => decodeRoute(m.payload))
    .filter(
      (r) =>
        (table === 0 || r.table === table) &&
        (oif === 0 || r.oif === oif) &&
        (o.family === undefined || r.family === o.family),
    );
  return dumpList(out, reply.interrupted);
}
