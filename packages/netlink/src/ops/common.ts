import { closeSync } from 'node:fs';
import { attrString, attrU32 } from '../codec/attrs.js';
import {
  AF_UNSPEC,
  IFINFOMSG_LEN,
  IFLA_EXT_MASK,
  IFLA_IFNAME,
  RT_SCOPE_HOST,
  RT_SCOPE_LINK,
  RT_SCOPE_NOWHERE,
  RT_SCOPE_UNIVERSE,
  RT_TABLE_LOCAL,
  RT_TABLE_MAIN,
  RTEXT_FILTER_SKIP_STATS,
  RTM_GETLINK,
} from '../codec/constants.js';
import { decodeLink, ifinfomsg, type NsAttr } from '../codec/link.js';
import { invalidArgument, NetlinkError } from '../errors.js';
import { type IpFamily, type ParsedPrefix, parseIp, parsePrefix } from '../ip.js';
import { openNsFile } from '../netns-switch.js';
import type { Op } from './driver.js';

/** A link by name or by interface index. */
export type LinkRef = string | number;

/**
 * A network namespace to place a link in: a namespace file path (`/run/netns/NAME`, `/proc/PID/ns/net`),
 * an open file descriptor of one, or a process id whose namespace to use.
 */
export type NetnsTarget = string | { fd: number } | { pid: number };

/** A route or address scope, by iproute2 name or number. */
export type Scope = 'universe' | 'site' | 'link' | 'host' | 'nowhere' | number;

/** A routing table: a number (1–2^32-1) or one of the named tables. */
export type TableRef = number | 'main' | 'local' | 'default';

const SCOPES: Record<string, number> = {
  universe: RT_SCOPE_UNIVERSE,
  site: 200,
  link: RT_SCOPE_LINK,
  host: RT_SCOPE_HOST,
  nowhere: RT_SCOPE_NOWHERE,
};

/** @internal */
export function scopeNumber(op: string, s: Scope): number {
  const n = typeof s === 'number' ? s : SCOPES[s];
  if (n === undefined || !Number.isInteger(n) || n < 0 || n > 255)
    throw invalidArgument(op, `bad scope ${String(s)}`);
  return n;
}

/** @internal */
export function tableNumber(op: string, t: TableRef): number {
  const n = t === 'main' ? RT_TABLE_MAIN : t === 'local' ? RT_TABLE_LOCAL : t === 'default' ? 253 : t;
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw invalidArgument(op, `bad table ${String(t)}`);
  return n;
}

/** @internal */
export function u32(op: string, what: string, v: number, min = 0, max = 0xffffffff): number {
  if (!Number.isInteger(v) || v < min || v > max) throw invalidArgument(op, `bad ${what} ${v}`);
  return v;
}

/** @internal */
export function ifname(op: string, name: string): string {
  if (
    typeof name !== 'string' ||
    name.length === 0 ||
    Buffer.byteLength(name) > 15 ||
    /[\s/:\0]/.test(name)
  ) {
    throw invalidArgument(op, `bad interface name ${JSON.stringify(name)}`);
  }
  return name;
}

/** @internal */
export function ip(op: string, text: string, family?: IpFamily): Uint8Array {
  const b = typeof text === 'string' ? parseIp(text) : undefined;
  if (!b) throw invalidArgument(op, `bad IP address ${JSON.stringify(text)}`);
  if (family !== undefined && b.length !== (family === 4 ? 4 : 16)) {
    throw invalidArgument(op, `${text} is not an IPv${family} address`);
  }
  return b;
}

/** @internal */
export function prefix(op: string, text: string, family?: IpFamily): ParsedPrefix {
  const p = typeof text === 'string' ? parsePrefix(text) : undefined;
  if (!p) throw invalidArgument(op, `bad prefix ${JSON.stringify(text)}`);
  if (family !== undefined && p.family !== family) throw invalidArgument(op, `${text} is not IPv${family}`);
  return p;
}

/**
 * IFLA_EXT_MASK asking the kernel to leave link counters out of RTM_NEWLINK answers (no {@link Link} field
 * holds them): summing a veth's per-CPU counters is most of the kernel's work per link in a dump, and they
 * are most of its bytes. @internal
 */
export const SKIP_STATS: Buffer = attrU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);

/** Resolves a link reference to its index (one RTM_GETLINK when given a name). @internal */
export function* resolveIndex(op: string, ref: LinkRef): Op<number> {
  if (typeof ref === 'number') return u32(op, 'ifindex', ref, 1, 0x7fffffff);
  const name = ifname(op, ref);
  const reply = yield {
    op,
    type: RTM_GETLINK,
    flags: 0,
    body: [ifinfomsg({ family: AF_UNSPEC }), attrString(IFLA_IFNAME, name), SKIP_STATS],
    dump: false,
  };
  const m = reply.messages[0];
  if (!m) throw new NetlinkError({ code: 'PROTOCOL_ERROR', op, detail: `no RTM_NEWLINK for ${name}` });
  // Only the header's index is needed: no need to decode the link's attributes.
  if (m.payload.length < IFINFOMSG_LEN) return decodeLink(m.payload).index; // throws DECODE_ERROR
  return m.payload.readInt32LE(4);
}

/** Opens what a {@link NetnsTarget} names, runs `body` with the resolved attribute, closes what it opened. @internal */
export function* withNsAttr<T>(op: string, target: NetnsTarget, body: (ns: NsAttr) => Op<T>): Op<T> {
  if (typeof target === 'string') {
    const fd = openNsFile(op, target);
    try {
      return yield* body({ fd });
    } finally {
      closeSync(fd);
    }
  }
  if ('fd' in target) return yield* body({ fd: u32(op, 'netns fd', target.fd) });
  return yield* body({ pid: u32(op, 'pid', target.pid, 1) });
}
