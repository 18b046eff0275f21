/**
 * A minimal proto3 wire codec driven by field tables: enough for the handful of messages in the
 * reference's `rpc.proto` and `grpc.health.v1`, with no code generation and no runtime dependency (the CNI
 * plugin loads it on every exec). Unknown fields are skipped on decode, as proto3 requires.
 */

/** The scalar and message kinds our messages use. */
export type FieldKind = 'string' | 'bool' | 'int32' | 'enum' | { message: MessageSchema };

/** One field: number, name (the proto name), kind, and whether it is `repeated`. */
export interface FieldSpec {
  no: number;
  name: string;
  kind: FieldKind;
  repeated?: boolean;
}

/** A message: its proto name and fields. */
export interface MessageSchema {
  name: string;
  fields: readonly FieldSpec[];
}

/** A malformed or truncated message. */
export class WireError extends Error {
  readonly code = 'WIRE_DECODE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

class Writer {
  private chunks: number[] = [];
  varint(v: bigint | number): void {
    let n = BigInt.asUintN(64, BigInt(v));
    while (n > 0x7fn) {
      this.chunks.push(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.chunks.push(Number(n));
  }
  bytes(b: Uint8Array): void {
    this.varint(b.length);
    for (const x of b) this.chunks.push(x);
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }
}

/** Encodes `value` (an object keyed by proto field names) per `schema`. Default values are omitted. */
export function encodeMessage(schema: MessageSchema, value: Readonly<Record<string, unknown>>): Uint8Array {
  const w = new Writer();
  for (const f of schema.fields) {
    const v = value[f.name];
    const items = f.repeated ? ((v as unknown[] | undefined) ?? []) : [v];
    for (const item of items) {
      if (item === undefined || item === null) continue;
      if (typeof f.kind === 'object') {
        w.varint((f.no << 3) | 2);
        w.bytes(encodeMessage(f.kind.message, item as Record<string, unknown>));
      } else if (f.kind === 'string') {
        if (!f.repeated && item === '') continue;
        w.varint((f.no << 3) | 2);
        w.bytes(encoder.encode(String(item)));
      } else if (f.kind === 'bool') {
        if (!f.repeated && item === false) continue;
        w.varint(f.no << 3);
        w.varint(item ? 1 : 0);
      } else {
        const n = Number(item);
        if (!f.repeated && n === 0) continue;
        w.varint(f.no << 3);
        w.varint(BigInt(Math.trunc(n))); // int32: negatives sign-extend to 10 bytes, as protobuf does
      }
    }
  }
  return w.finish();
}

/** Decodes `bytes` per `schema` into an object with every field present (proto3 defaults filled in). */
export function decodeMessage<T = Record<string, unknown>>(schema: MessageSchema, bytes: Uint8Array): T {
  const out: Record<string, unknown> = {};
  for (const f of schema.fields) {
    out[f.name] = f.repeated
      ? []
      : typeof f.kind === 'object'
        ? undefined
        : f.kind === 'string'
          ? ''
          : f.kind === 'bool'
            ? false
            : 0;
  }
  const byNo = new Map(schema.fields.map((f) => [f.no, f]));
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= bytes.length) throw new WireError(`${schema.name}: truncated varint`);
      const b = bytes[pos++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new WireError(`${schema.name}: varint longer than 10 bytes`);
  };
  const lengthDelimited = (): Uint8Array => {
    const len = Number(varint());
    if (len < 0 || pos + len > bytes.length)
      throw new WireError(`${schema.name}: truncated length-delimited field`);
    const slice = bytes.subarray(pos, pos + len);
    pos += len;
    return slice;
  };
  while (pos < bytes.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (no === 0) throw new WireError(`${schema.name}: field number 0`);
    const f = byNo.get(no);
    const expect = f === undefined ? undefined : typeof f.kind === 'object' || f.kind === 'string' ? 2 : 0;
    if (f === undefined || wireType !== expect) {
      // Unknown field, or a known field with an unexpected wire type: skip it (proto3 forward compatibility).
      if (wireType === 0) varint();
      else if (wireType === 2) lengthDelimited();
      else if (wireType === 1) pos += 8;
      else if (wireType === 5) pos += 4;
      else throw new WireError(`${schema.name}: unsupported wire type ${wireType}`);
      if (pos > bytes.length) throw new WireError(`${schema.name}: truncated fixed-width field`);
      continue;
    }
    let v: unknown;
    if (typeof f.kind === 'object') v = decodeMessage(f.kind.message, lengthDelimited());
    else if (f.kind === 'string') {
      try {
        v = decoder.decode(lengthDelimited());
      } catch {
        throw new WireError(`${schema.name}.${f.name}: invalid UTF-8`);
      }
    } else if (f.kind === 'bool') v = varint() !== 0n;
    else v = Number(BigInt.asIntN(32, varint()));
    if (f.repeated) (out[f.name] as unknown[]).push(v);
    else out[f.name] = v;
  }
  return out as T;
}
