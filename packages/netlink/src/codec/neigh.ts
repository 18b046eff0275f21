import { decodeError } from '../errors.js';
import { formatIp, formatMac, type IpFamily } from '../ip.js';
import { attr, parseAttrs } from './attrs.js';
import { AF_INET, AF_INET6, NDA_DST, NDA_LLADDR, NDMSG_LEN } from './constants.js';

/** A neighbour (ARP / NDP) entry as the kernel reports it (RTM_NEWNEIGH). */
export interface Neighbour {
  /** 4 or 6. */
  family: IpFamily;
  /** Interface index. */
  index: number;
  /** The neighbour's IP address. */
  address: string;
  /** Its link-layer address, when known. */
  lladdr?: string;
  /** NUD_* state bits (0x80 permanent, 0x02 reachable, 0x04 stale, 0x40 noarp, …). */
  state: number;
  /** NTF_* flags. */
  flags: number;
}

/** A resolved neighbour request. @internal */
export interface NeighRequest {
  family: IpFamily;
  index: number;
  state: number;
  flags: number;
  dst: Uint8Array;
  lladdr?: Uint8Array;
}

/** @internal */
export function ndmsg(p: { family: number; index?: number; state?: number; flags?: number }): Buffer {
  const b = Buffer.alloc(NDMSG_LEN);
  b.writeUInt8(p.family, 0);
  b.writeInt32LE(p.index ?? 0, 4);
  b.writeUInt16LE(p.state ?? 0, 8);
  b.writeUInt8(p.flags ?? 0, 10);
  return b;
}

/** Encodes RTM_NEWNEIGH / RTM_DELNEIGH bodies (`ip neigh add DST lladdr L nud S dev D` order). @internal */
export function encodeNeigh(r: NeighRequest): Buffer[] {
  const out = [
    ndmsg({ family: r.family === 4 ? AF_INET : AF_INET6, index: r.index, state: r.state, flags: r.flags }),
  ];
  out.push(attr(NDA_DST, r.dst));
  if (r.lladdr !== undefined) out.push(attr(NDA_LLADDR, r.lladdr));
  return out;
}

/** Decodes an RTM_NEWNEIGH payload. Throws `DECODE_ERROR` on malformed bytes. */
export function decodeNeigh(payload: Buffer): Neighbour {
  if (payload.length < NDMSG_LEN) throw decodeError(`short ndmsg (${payload.length} bytes)`);
  const fam = payload.readUInt8(0);
  if (fam !== AF_INET && fam !== AF_INET6) throw decodeError(`neighbour family ${fam}`);
  const family: IpFamily = fam === AF_INET ? 4 : 6;
  const attrs = parseAttrs(payload, NDMSG_LEN);
  const dst = attrs.get(NDA_DST);
  if (dst === undefined || dst.length !== (family === 4 ? 4 : 16)) {
    throw decodeError('neighbour without a valid NDA_DST');
  }
  const n: Neighbour = {
    family,
    index: payload.readInt32LE(4),
    address: formatIp(dst),
    state: payload.readUInt16LE(8),
    flags: payload.readUInt8(10),
  };
  const ll = attrs.get(NDA_LLADDR);
  if (ll !== undefined && ll.length > 0) n.lladdr = formatMac(ll);
  return n;
}
