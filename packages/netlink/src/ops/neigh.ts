import { attrU32 } from '../codec/attrs.js';
import {
  AF_INET,
  AF_INET6,
  AF_UNSPEC,
  NLM_F_CREATE,
  NLM_F_EXCL,
  NLM_F_REPLACE,
  NUD_DELAY,
  NUD_FAILED,
  NUD_INCOMPLETE,
  NUD_NOARP,
  NUD_PERMANENT,
  NUD_PROBE,
  NUD_REACHABLE,
  NUD_STALE,
  RTM_DELNEIGH,
  RTM_GETNEIGH,
  RTM_NEWNEIGH,
} from '../codec/constants.js';
import { decodeNeigh, encodeNeigh, type Neighbour, type NeighRequest, ndmsg } from '../codec/neigh.js';
import { invalidArgument } from '../errors.js';
import { type IpFamily, parseMac } from '../ip.js';
import { ip, type LinkRef, resolveIndex, u32 } from './common.js';
import { type DumpList, dumpList, isInet, type Op } from './driver.js';

/** Neighbour states by iproute2 name (`nud …`). */
export type NeighState =
  | 'permanent'
  | 'reachable'
  | 'stale'
  | 'noarp'
  | 'delay'
  | 'probe'
  | 'failed'
  | 'incomplete';

const STATES: Record<NeighState, number> = {
  permanent: NUD_PERMANENT,
  reachable: NUD_REACHABLE,
  stale: NUD_STALE,
  noarp: NUD_NOARP,
  delay: NUD_DELAY,
  probe: NUD_PROBE,
  failed: NUD_FAILED,
  incomplete: NUD_INCOMPLETE,
};

/** `ip neigh add|replace|del ADDRESS [lladdr MAC] [nud STATE] dev DEV`. */
export interface NeighOptions {
  /** The link. */
  dev: LinkRef;
  /** The neighbour's IP address. */
  address: string;
  /** Its MAC address (required for add/replace of a permanent entry). */
  lladdr?: string;
  /** State; `permanent` when omitted, as iproute2. */
  state?: NeighState | number;
}

/** Filters for `neighList`. */
export interface NeighListOptions {
  /** Only this link's entries (kernel-filtered). */
  dev?: LinkRef;
  /** Only this family. */
  family?: IpFamily;
}

function* request(op: string, type: number, flags: number, o: NeighOptions): Op<void> {
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options must be an object');
  const dst = ip(op, o.address);
  const family: IpFamily = dst.length === 4 ? 4 : 6;
  // iproute2 sends NUD_PERMANENT unless told otherwise, on delete too (the kernel ignores it there).
  let state = NUD_PERMANENT;
  if (o.state !== undefined)
    state = typeof o.state === 'number' ? u32(op, 'state', o.state, 0, 0xffff) : (STATES[o.state] ?? -1);
  if (state < 0) throw invalidArgument(op, `bad neighbour state ${String(o.state)}`);
  const req: NeighRequest = { family, index: 0, state, flags: 0, dst };
  if (o.lladdr !== undefined) {
    const ll = parseMac(o.lladdr);
    if (!ll) throw invalidArgument(op, `bad MAC address ${JSON.stringify(o.lladdr)}`);
    req.lladdr = ll;
  }
  req.index = yield* resolveIndex(op, o.dev);
  yield { op, type, flags, body: encodeNeigh(req), dump: false };
}

/** `ip neigh add`. @internal */
export function neighAdd(o: NeighOptions): Op<void> {
  return request('neigh.add', RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, o);
}

/** `ip neigh replace`. @internal */
export function neighReplace(o: NeighOptions): Op<void> {
  return request('neigh.replace', RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, o);
}

/** `ip neigh del`. @internal */
export function neighDel(o: NeighOptions): Op<void> {
  return request('neigh.del', RTM_DELNEIGH, 0, o);
}

/** `ip neigh show`. @internal */
export function* neighList(o: NeighListOptions = {}): Op<DumpList<Neighbour>> {
  const op = 'neigh.list';
  const family = o.family === undefined ? AF_UNSPEC : o.family === 4 ? AF_INET : AF_INET6;
  const body: Uint8Array[] = [ndmsg({ family })];
  let index = 0;
  if (o.dev !== undefined) {
    index = yield* resolveIndex(op, o.dev);
    body.push(attrU32(8 /* NDA_IFINDEX */, index));
  }
  const reply = yield { op, type: RTM_GETNEIGH, flags: 0, body, dump: true };
  const out: Neighbour[] = [];
  for (const m of reply.messages) {
    if (!isInet(m.payload)) continue; // AF_BRIDGE fdb entries are not neighbours
    const n = decodeNeigh(m.payload);
    if ((index === 0 || n.index === index) && (o.family === undefined || n.family === o.family)) out.push(n);
  }
  return dumpList(out, reply.interrupted);
}
