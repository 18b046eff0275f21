import { decodeError } from '../errors.js';
import { parseAttrs } from './attrs.js';
import {
  NLM_F_ACK_TLVS,
  NLM_F_CAPPED,
  NLMSG_HDRLEN,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_ATTR_OFFS,
} from './constants.js';

/** One netlink message: the header fields and its payload (everything after the 16-byte header). */
export interface NlMessage {
  /** nlmsg_type. */
  type: number;
  /** nlmsg_flags. */
  flags: number;
  /** nlmsg_seq. */
  seq: number;
  /** nlmsg_pid (port id). */
  pid: number;
  /** The payload, a view into the received buffer. */
  payload: Buffer;
}

/** Header fields for {@link encodeMessage}. @internal */
export interface MessageHeader {
  type: number;
  flags: number;
  seq: number;
  pid?: number;
}

/** Encodes one message: header plus the concatenated body parts. @internal */
export function encodeMessage(h: MessageHeader, body: readonly Uint8Array[]): Buffer {
  const payload = Buffer.concat(body);
  const out = Buffer.alloc(NLMSG_HDRLEN + payload.length);
  out.writeUInt32LE(out.length, 0);
  out.writeUInt16LE(h.type, 4);
  out.writeUInt16LE(h.flags, 6);
  out.writeUInt32LE(h.seq >>> 0, 8);
  out.writeUInt32LE((h.pid ?? 0) >>> 0, 12);
  out.set(payload, NLMSG_HDRLEN);
  return out;
}

/**
 * Splits a datagram into messages. Throws a `DECODE_ERROR` when a header is cut short or its length is
 * impossible.
 */
export function parseMessages(buf: Buffer): NlMessage[] {
  const out: NlMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLMSG_HDRLEN) throw decodeError(`truncated nlmsghdr at ${off}/${buf.length}`);
    const len = buf.readUInt32LE(off);
    if (len < NLMSG_HDRLEN || len > buf.length - off) {
      throw decodeError(`bad nlmsg_len ${len} at ${off}/${buf.length}`);
    }
    out.push({
      type: buf.readUInt16LE(off + 4),
      flags: buf.readUInt16LE(off + 6),
      seq: buf.readUInt32LE(off + 8),
      pid: buf.readUInt32LE(off + 12),
      payload: buf.subarray(off + NLMSG_HDRLEN, off + len),
    });
    off += (len + 3) & ~3;
  }
  return out;
}

/** A decoded NLMSG_ERROR: errno 0 is an ACK. */
export interface NlErrorPayload {
  /** Positive errno; 0 for an ACK. */
  errno: number;
  /** Extended-ACK message text, when present. */
  extack?: string;
  /** Extended-ACK offset of the offending attribute in the request, when present. */
  extackOffset?: number;
}

/** Decodes the payload of an NLMSG_ERROR message (struct nlmsgerr plus extended-ACK TLVs). */
export function parseErrorPayload(payload: Buffer, flags: number): NlErrorPayload {
  if (payload.length < 4 + NLMSG_HDRLEN) throw decodeError(`short nlmsgerr (${payload.length} bytes)`);
  const errno = -payload.readInt32LE(0) || 0;
  const out: NlErrorPayload = { errno };
  if ((flags & NLM_F_ACK_TLVS) === 0) return out;
  let tlvStart = 4 + NLMSG_HDRLEN;
  if ((flags & NLM_F_CAPPED) === 0) {
    const origLen = payload.readUInt32LE(4);
    if (origLen < NLMSG_HDRLEN || origLen > payload.length - 4) {
      throw decodeError(`bad echoed nlmsg_len ${origLen}`);
    }
    tlvStart = 4 + Math.ceil(origLen / 4) * 4;
  }
  if (tlvStart > payload.length) throw decodeError('extended ACK runs past the message');
  const attrs = parseAttrs(payload, tlvStart);
  const msg = attrs.get(NLMSGERR_ATTR_MSG);
  if (msg !== undefined) {
    const nul = msg.indexOf(0);
    out.extack = msg.toString('utf8', 0, nul < 0 ? msg.length : nul);
  }
  const offs = attrs.get(NLMSGERR_ATTR_OFFS);
  if (offs !== undefined && offs.length >= 4) out.extackOffset = offs.readUInt32LE(0);
  return out;
}
