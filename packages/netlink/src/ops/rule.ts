import {
  AF_INET,
  AF_INET6,
  AF_UNSPEC,
  FR_ACT_TO_TBL,
  NLM_F_CREATE,
  NLM_F_EXCL,
  RT_TABLE_MAIN,
  RTM_DELRULE,
  RTM_GETRULE,
  RTM_NEWRULE,
} from '../codec/constants.js';
import { decodeRule, encodeRule, fibRuleHdr, type Rule, type RuleRequest } from '../codec/rule.js';
import { invalidArgument } from '../errors.js';
import type { IpFamily } from '../ip.js';
import { ifname, prefix, type TableRef, tableNumber, u32 } from './common.js';
import { type DumpList, dumpList, isInet, type Op } from './driver.js';

/** Rule actions accepted by {@link RuleOptions.action}. */
export type RuleAction = 'lookup' | 'blackhole' | 'unreachable' | 'prohibit';

const ACTIONS: Record<RuleAction, number> = {
  lookup: FR_ACT_TO_TBL,
  blackhole: 6,
  unreachable: 7,
  prohibit: 8,
};

/** `ip rule add|del [not] [from P] [to P] [iif I] [oif O] [fwmark M[/K]] [pref N] [lookup T]`. */
export interface RuleOptions {
  /** Needed only when neither `from` nor `to` is given; 4 by default. */
  family?: IpFamily;
  /** Priority (`pref`). The kernel picks one below the lowest existing when omitted on add. */
  priority?: number;
  /** Table to look up (`lookup`); on add, `main` when omitted and the action is `lookup`. */
  table?: TableRef;
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
  /** Invert the selector (`not`). */
  invert?: boolean;
  /** What to do on match; `lookup` when omitted on add. */
  action?: RuleAction;
}

/** Filters for `ruleList`. */
export interface RuleListOptions {
  /** Only this family. */
  family?: IpFamily;
  /** Only rules that look up this table. */
  table?: TableRef;
}

function* request(op: string, type: number, flags: number, o: RuleOptions): Op<void> {
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const add = type === RTM_NEWRULE;
  let family = o.family;
  const from = o.from === undefined ? undefined : prefix(op, o.from, family);
  if (from) family = from.family;
  const to = o.to === undefined ? undefined : prefix(op, o.to, family);
  if (to) family = to.family;
  let action = 0;
  if (o.action !== undefined) {
    action = ACTIONS[o.action];
    if (action === undefined) throw invalidArgument(op, `bad rule action ${String(o.action)}`);
  } else if (add) {
    // On delete, iproute2 leaves the action 0 (match any) even when a table is given.
    action = FR_ACT_TO_TBL;
  }
  const req: RuleRequest = {
    family: family ?? 4,
    action,
    srcLength: from?.length ?? 0,
    dstLength: to?.length ?? 0,
    invert: o.invert === true,
  };
  if (o.table !== undefined) req.table = tableNumber(op, o.table);
  else if (add && action === FR_ACT_TO_TBL) req.table = RT_TABLE_MAIN;
  if (from) req.src = from.bytes;
  if (to) req.dst = to.bytes;
  if (o.priority !== undefined) req.priority = u32(op, 'priority', o.priority);
  if (o.fwmark !== undefined) req.fwmark = u32(op, 'fwmark', o.fwmark);
  if (o.fwmask !== undefined) req.fwmask = u32(op, 'fwmask', o.fwmask);
  if (o.iif !== undefined) req.iif = ifname(op, o.iif);
  if (o.oif !== undefined) req.oif = ifname(op, o.oif);
  yield { op, type, flags, body: encodeRule(req), dump: false };
}

/** `ip rule add`. @internal */
export function ruleAdd(o: RuleOptions): Op<void> {
  return request('rule.add', RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, o);
}

/** `ip rule del`. @internal */
export function ruleDel(o: RuleOptions): Op<void> {
  return request('rule.del', RTM_DELRULE, 0, o);
}

/** `ip rule show`. @internal */
export function* ruleList(o: RuleListOptions = {}): Op<DumpList<Rule>> {
  const op = 'rule.list';
  const family = o.family === undefined ? AF_UNSPEC : o.family === 4 ? AF_INET : AF_INET6;
  const table = o.table === undefined ? undefined : tableNumber(op, o.table);
  const reply = yield { op, type: RTM_GETRULE, flags: 0, body: [fibRuleHdr({ family })], dump: true };
  const out = reply.messages
    .filter((m) => isInet(m.payload))
    .map((m) => decodeRule(m.payload))
    .filter(
      (r) => (o.family === undefined || r.family === o.family) && (table === undefined || r.table === table),
    );
  return dumpList(out, reply.interrupted);
}
