import { type Address, decodeAddr } from './addr.js';
import {
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSG_NOOP,
  NLMSG_OVERRUN,
  RTM_DELADDR,
  RTM_DELLINK,
  RTM_DELNEIGH,
  RTM_DELROUTE,
  RTM_DELRULE,
  RTM_NEWADDR,
  RTM_NEWLINK,
  RTM_NEWNEIGH,
  RTM_NEWROUTE,
  RTM_NEWRULE,
} from './constants.js';
import { decodeLink, type Link } from './link.js';
import { parseErrorPayload, parseMessages } from './message.js';
import { decodeNeigh, type Neighbour } from './neigh.js';
import { decodeRoute, type Route } from './route.js';
import { decodeRule, type Rule } from './rule.js';

/** Header fields every decoded message carries. */
export interface RtnlHeader {
  /** nlmsg_type. */
  type: number;
  /** nlmsg_flags. */
  flags: number;
  /** nlmsg_seq. */
  seq: number;
  /** nlmsg_pid. */
  pid: number;
}

/** One decoded rtnetlink message, tagged by `kind`. `deleted` is true for RTM_DEL* notifications. */
export type RtnlMessage = RtnlHeader &
  (
    | { kind: 'link'; deleted: boolean; link: Link }
    | { kind: 'addr'; deleted: boolean; addr: Address }
    | { kind: 'route'; deleted: boolean; route: Route }
    | { kind: 'rule'; deleted: boolean; rule: Rule }
    | { kind: 'neigh'; deleted: boolean; neigh: Neighbour }
    | { kind: 'error'; errno: number; extack?: string }
    | { kind: 'done' }
    | { kind: 'noop' }
    | { kind: 'overrun' }
    | { kind: 'other'; payload: Buffer }
  );

/**
 * Decodes a datagram of rtnetlink messages (as the kernel sends them). Pure. Malformed input throws a
 * {@link NetlinkError} with code `DECODE_ERROR`; any other input yields a value.
 */
export function decodeRtnetlink(datagram: Buffer): RtnlMessage[] {
  return parseMessages(datagram).map((m): RtnlMessage => {
    const h: RtnlHeader = { type: m.type, flags: m.flags, seq: m.seq, pid: m.pid };
    const p = m.payload;
    switch (m.type) {
      case NLMSG_NOOP:
        return { ...h, kind: 'noop' };
      case NLMSG_DONE:
        return { ...h, kind: 'done' };
      case NLMSG_OVERRUN:
        return { ...h, kind: 'overrun' };
      case NLMSG_ERROR: {
        const e = parseErrorPayload(p, m.flags);
        return e.extack === undefined
          ? { ...h, kind: 'error', errno: e.errno }
          : { ...h, kind: 'error', errno: e.errno, extack: e.extack };
      }
      case RTM_NEWLINK:
      case RTM_DELLINK:
        return { ...h, kind: 'link', deleted: m.type === RTM_DELLINK, link: decodeLink(p) };
      case RTM_NEWADDR:
      case RTM_DELADDR:
        return { ...h, kind: 'addr', deleted: m.type === RTM_DELADDR, addr: decodeAddr(p) };
      case RTM_NEWROUTE:
      case RTM_DELROUTE:
        return { ...h, kind: 'route', deleted: m.type === RTM_DELROUTE, route: decodeRoute(p) };
      case RTM_NEWRULE:
      case RTM_DELRULE:
        return { ...h, kind: 'rule', deleted: m.type === RTM_DELRULE, rule: decodeRule(p) };
      case RTM_NEWNEIGH:
      case RTM_DELNEIGH:
        return { ...h, kind: 'neigh', deleted: m.type === RTM_DELNEIGH, neigh: decodeNeigh(p) };
      default:
        return { ...h, kind: 'other', payload: p };
    }
  });
}
