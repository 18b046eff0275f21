import { decodeError } from '../errors.js';
import { formatIp, type IpFamily } from '../ip.js';
import { attr, attrString, attrU32, getString, getU32, parseAttrs } from './attrs.js';
import {
  AF_INET,
  AF_INET6,
  FIB_RULE_HDR_LEN,
  FIB_RULE_INVERT,
  FRA_DST,
  FRA_FWMARK,
  FRA_FWMASK,
  FRA_IIFNAME,
  FRA_OIFNAME,
  FRA_PRIORITY,
  FRA_SRC,
  FRA_TABLE,
  RT_TABLE_UNSPEC,
} from './constants.js';

/** A policy-routing rule as the kernel reports it (RTM_NEWRULE). */
export interface Rule {
  /** 4 or 6. */
  family: IpFamily;
  /** Priority (preference); rules are evaluated lowest first. */
  priority?: number;
  /** Table looked up (FRA_TABLE when present). */
  table: number;
  /** FR_ACT_* (1 lookup, 6 blackhole, 7 unreachable, 8 prohibit). */
  action: number;
  /** Source prefix (`from`). */
  from?: string;
  /** Destination prefix (`to`). */
  to?: string;
  /** Input interface name (`iif`). */
  iif?: string;
  /** Output interface name (`oif`). */
  oif?: string;
  /** Firewall mark. */
  fwmark?: number;
  /** Firewall mark mask. */
  fwmask?: number;
  /** The selector is inverted (`not`). */
  invert: boolean;
}

/** A resolved rule request. @internal */
export interface RuleRequest {
  family: IpFamily;
  action: number;
  table?: number;
  priority?: number;
  src?: Uint8Array;
  srcLength: number;
  dst?: Uint8Array;
  dstLength: number;
  iif?: string;
  oif?: string;
  fwmark?: number;
  fwmask?: number;
  invert: boolean;
}

/** @internal */
export function fibRuleHdr(p: {
  family: number;
  dstLength?: number;
  srcLength?: number;
  table?: number;
  action?: number;
  flags?: number;
}): Buffer {
  const b = Buffer.alloc(FIB_RULE_HDR_LEN);
  b.writeUInt8(p.family, 0);
  b.writeUInt8(p.dstLength ?? 0, 1);
  b.writeUInt8(p.srcLength ?? 0, 2);
  b.writeUInt8(p.table ?? 0, 4);
  b.writeUInt8(p.action ?? 0, 7);
  b.writeUInt32LE((p.flags ?? 0) >>> 0, 8);
  return b;
}

/**
 * Encodes RTM_NEWRULE / RTM_DELRULE bodies. Attribute order follows
 * `ip rule add from F to T pref P fwmark M/K iif I oif O lookup TABLE`.
 * @internal
 */
export function encodeRule(r: RuleRequest): Buffer[] {
  const table = r.table ?? 0;
  const big = table > 255;
  const out: Buffer[] = [
    fibRuleHdr({
      family: r.family === 4 ? AF_INET : AF_INET6,
      dstLength: r.dstLength,
      srcLength: r.srcLength,
      table: big ? RT_TABLE_UNSPEC : table,
      action: r.action,
      flags: r.invert ? FIB_RULE_INVERT : 0,
    }),
  ];
  if (r.src !== undefined) out.push(attr(FRA_SRC, r.src));
  if (r.dst !== undefined) out.push(attr(FRA_DST, r.dst));
  if (r.priority !== undefined) out.push(attrU32(FRA_PRIORITY, r.priority));
  if (r.fwmark !== undefined) out.push(attrU32(FRA_FWMARK, r.fwmark));
  if (r.fwmask !== undefined) out.push(attrU32(FRA_FWMASK, r.fwmask));
  if (r.iif !== undefined) out.push(attrString(FRA_IIFNAME, r.iif));
  if (r.oif !== undefined) out.push(attrString(FRA_OIFNAME, r.oif));
  if (big) out.push(attrU32(FRA_TABLE, table));
  return out;
}

/** Decodes an RTM_NEWRULE payload. Throws `DECODE_ERROR` on malformed bytes. */
export function decodeRule(payload: Buffer): Rule {
  if (payload.length < FIB_RULE_HDR_LEN) throw decodeError(`short fib_rule_hdr (${payload.length} bytes)`);
  const fam = payload.readUInt8(0);
  if (fam !== AF_INET && fam !== AF_INET6) throw decodeError(`rule family ${fam}`);
  const family: IpFamily = fam === AF_INET ? 4 : 6;
  const size = family === 4 ? 4 : 16;
  const attrs = parseAttrs(payload, FIB_RULE_HDR_LEN);
  const ip = (t: number): string | undefined => {
    const v = attrs.get(t);
    if (v === undefined) return undefined;
    if (v.length !== size) throw decodeError(`rule attribute ${t} has ${v.length} bytes`);
    return formatIp(v);
  };
  const rule: Rule = {
    family,
    table: getU32(attrs, FRA_TABLE) ?? payload.readUInt8(4),
    action: payload.readUInt8(7),
    invert: (payload.readUInt32LE(8) & FIB_RULE_INVERT) !== 0,
  };
  const prio = getU32(attrs, FRA_PRIORITY);
  if (prio !== undefined) rule.priority = prio;
  const src = ip(FRA_SRC);
  if (src !== undefined) rule.from = `${src}/${payload.readUInt8(2)}`;
  const dst = ip(FRA_DST);
  if (dst !== undefined) rule.to = `${dst}/${payload.readUInt8(1)}`;
  const iif = getString(attrs, FRA_IIFNAME);
  if (iif !== undefined) rule.iif = iif;
  const oif = getString(attrs, FRA_OIFNAME);
  if (oif !== undefined) rule.oif = oif;
  const mark = getU32(attrs, FRA_FWMARK);
  if (mark !== undefined) rule.fwmark = mark;
  const mask = getU32(attrs, FRA_FWMASK);
  if (mask !== undefined) rule.fwmask = mask;
  return rule;
}
