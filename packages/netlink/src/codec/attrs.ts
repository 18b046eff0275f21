import { decodeError } from '../errors.js';
import { NLA_HDRLEN, NLA_TYPE_MASK } from './constants.js';

/** Rounds up to the 4-byte netlink alignment. @internal */
export function align4(n: number): number {
  return (n + 3) & ~3;
}

/** One encoded attribute: header, value and padding. @internal */
export function attr(type: number, value: Uint8Array): Buffer {
  const len = NLA_HDRLEN + value.length;
  const out = Buffer.alloc(align4(len));
  out.writeUInt16LE(len, 0);
  out.writeUInt16LE(type, 2);
  out.set(value, NLA_HDRLEN);
  return out;
}

/** @internal */
export function attrU8(type: number, v: number): Buffer {
  return attr(type, Uint8Array.of(v & 0xff));
}

/** @internal */
export function attrU16(type: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v, 0);
  return attr(type, b);
}

/** A 16-bit value in network byte order (ports). @internal */
export function attrBe16(type: number, v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v, 0);
  return attr(type, b);
}

/** @internal */
export function attrU32(type: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0, 0);
  return attr(type, b);
}

/** @internal */
export function attrI32(type: number, v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v, 0);
  return attr(type, b);
}

/** A NUL-terminated string, as iproute2 sends names. @internal */
export function attrString(type: number, s: string): Buffer {
  return attr(type, Buffer.from(`${s}\0`, 'utf8'));
}

/** A nested attribute (no NLA_F_NESTED flag, matching iproute2's `addattr_nest`). @internal */
export function attrNested(type: number, children: readonly Uint8Array[]): Buffer {
  return attr(type, Buffer.concat(children));
}

/** Decoded attributes of one level: type (flags masked off) → value. The last occurrence wins. @internal */
export type AttrMap = Map<number, Buffer>;

/**
 * Parses a run of attributes. Throws a `DECODE_ERROR` when an attribute's length is shorter than its
 * header or runs past `end`. Fewer than four trailing bytes are treated as padding.
 * @internal
 */
export function parseAttrs(buf: Buffer, start = 0, end = buf.length): AttrMap {
  return parseAttrsOf(buf, start, end, undefined);
}

/**
 * {@link parseAttrs} keeping only the attribute types flagged in `wanted` (indexed by type; all when
 * `undefined`). Every attribute's length is still checked, but the others cost no allocation: a link dump
 * carries dozens of attributes per link, of which a decoder reads a handful.
 * @internal
 */
export function parseAttrsOf(
  buf: Buffer,
  start: number,
  end: number,
  wanted: Uint8Array | undefined,
): AttrMap {
  const out: AttrMap = new Map();
  let off = start;
  while (end - off >= NLA_HDRLEN) {
    const len = buf[off]! | (buf[off + 1]! << 8);
    const type = (buf[off + 2]! | (buf[off + 3]! << 8)) & NLA_TYPE_MASK;
    if (len < NLA_HDRLEN || off + len > end) {
      throw decodeError(`attribute ${type} at ${off} has length ${len} (room ${end - off})`);
    }
    if (wanted === undefined || wanted[type] === 1) out.set(type, buf.subarray(off + NLA_HDRLEN, off + len));
    off += align4(len);
  }
  return out;
}

function fixed(v: Buffer | undefined, size: number, type: number): Buffer | undefined {
  if (v === undefined) return undefined;
  if (v.length < size) throw decodeError(`attribute ${type} has ${v.length} bytes, wants ${size}`);
  return v;
}

/** @internal */
export function getU8(m: AttrMap, type: number): number | undefined {
  return fixed(m.get(type), 1, type)?.readUInt8(0);
}

/** @internal */
export function getU16(m: AttrMap, type: number): number | undefined {
  return fixed(m.get(type), 2, type)?.readUInt16LE(0);
}

/** @internal */
export function getBe16(m: AttrMap, type: number): number | undefined {
  return fixed(m.get(type), 2, type)?.readUInt16BE(0);
}

/** @internal */
export function getU32(m: AttrMap, type: number): number | undefined {
  return fixed(m.get(type), 4, type)?.readUInt32LE(0);
}

/** @internal */
export function getI32(m: AttrMap, type: number): number | undefined {
  return fixed(m.get(type), 4, type)?.readInt32LE(0);
}

/** A string attribute up to its first NUL. @internal */
export function getString(m: AttrMap, type: number): string | undefined {
  const v = m.get(type);
  if (v === undefined) return undefined;
  const nul = v.indexOf(0);
  return v.toString('utf8', 0, nul < 0 ? v.length : nul);
}

/** A nested attribute's children. @internal */
export function getNested(m: AttrMap, type: number): AttrMap | undefined {
  const v = m.get(type);
  return v === undefined ? undefined : parseAttrs(v);
}
