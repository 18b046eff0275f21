/**
 * HTTP/2 framing (RFC 9113 §4, §6): the frame header, the frame types and flags a unary client meets, and
 * an incremental reader that cuts a byte stream into frames.
 */

/** The client connection preface (§3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Frame types (§6). */
export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags (§6). ACK shares END_STREAM's bit on SETTINGS and PING. */
export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

/** SETTINGS parameters (§6.5.2). */
export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** The default and, for this client, the advertised maximum frame payload (§4.2). */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;

/** One frame; `payload` is a view into the reader's buffer, valid until the next {@link FrameReader.push}. */
export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** Serializes one frame. */
export function encodeFrame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, 5);
  out.set(payload, 9);
  return out;
}

/** A SETTINGS payload from parameter/value pairs. */
export function settingsPayload(settings: ReadonlyArray<readonly [number, number]>): Buffer {
  const out = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, 6 * i);
    out.writeUInt32BE(value, 6 * i + 2);
  });
  return out;
}

/** A 4-byte payload holding a 31-bit value (WINDOW_UPDATE increment, RST_STREAM code uses all 32). */
export function u32Payload(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
}

/** A frame larger than this side's SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR (§4.2). */
export class FrameSizeError extends Error {
  constructor(length: number, max: number) {
    super(`HTTP/2 frame of ${length} bytes exceeds the maximum of ${max}`);
    this.name = 'FrameSizeError';
  }
}

/** Cuts a byte stream into frames. Feed it every chunk the socket reads, in order. */
export class FrameReader {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #maxFrameSize: number;

  constructor(maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {
    this.#maxFrameSize = maxFrameSize;
  }

  /**
   * Adds bytes and returns the frames now complete.
   *
   * @throws {@link FrameSizeError} for a frame over the maximum size.
   */
  push(chunk: Buffer): Frame[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: Frame[] = [];
    let pos = 0;
    while (this.#buffer.length - pos >= 9) {
      const length = this.#buffer.readUIntBE(pos, 3);
      if (length > this.#maxFrameSize) throw new FrameSizeError(length, this.#maxFrameSize);
      if (this.#buffer.length - pos < 9 + length) break;
      frames.push({
        type: this.#buffer[pos + 3] as number,
        flags: this.#buffer[pos + 4] as number,
        streamId: this.#buffer.readUInt32BE(pos + 5) & 0x7fffffff,
        payload: this.#buffer.subarray(pos + 9, pos + 9 + length),
      });
      pos += 9 + length;
    }
    this.#buffer = this.#buffer.subarray(pos);
    return frames;
  }
}

/**
 * The header block fragment or data of a HEADERS or DATA frame: strips padding (PADDED) and, on HEADERS,
 * the priority fields (PRIORITY). Returns `undefined` when the padding is longer than the payload, a
 * PROTOCOL_ERROR (§6.1, §6.2).
 */
export function framePayloadBody(frame: Frame): Buffer | undefined {
  let body = frame.payload;
  let padding = 0;
  if (frame.flags & Flag.PADDED) {
    if (body.length < 1) return undefined;
    padding = body[0] as number;
    body = body.subarray(1);
  }
  if (frame.type === FrameType.HEADERS && frame.flags & Flag.PRIORITY) {
    if (body.length < 5) return undefined;
    body = body.subarray(5);
  }
  if (padding > body.length) return undefined;
  return body.subarray(0, body.length - padding);
}
