/**
 * HPACK (RFC 7541), the two halves a unary gRPC client needs: a complete decoder for what a server sends
 * (static and dynamic tables, Huffman strings, table size updates), and an encoder that writes every field
 * as a literal without indexing, so the server's decoder state never depends on ours.
 */
import { huffmanDecode } from './huffman.js';

/** One header field, name and value as Latin-1 strings (HTTP/2 field octets, one char per octet). */
export type HeaderField = readonly [name: string, value: string];

/** A header block that cannot be decoded: a COMPRESSION_ERROR for the connection (RFC 7540 §4.3). */
export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = 'HpackError';
  }
}

/** The static table (RFC 7541 Appendix A); index 1 is element 0. */
const STATIC_TABLE: readonly HeaderField[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

/** The size the protocol charges for an entry: its octets plus 32 (§4.1). */
function entrySize([name, value]: HeaderField): number {
  return name.length + value.length + 32;
}

/** Largest integer accepted in a header block; anything longer is an attack, not a header. */
const MAX_INTEGER = 2 ** 24;

/**
 * Decodes header blocks in order, for one connection: the dynamic table carries over from block to block,
 * so every block the peer sends must pass through the same decoder.
 */
export class HpackDecoder {
  /** Newest first, as the dynamic table is indexed (§2.3.3). */
  readonly #dynamic: HeaderField[] = [];
  #size = 0;
  #maxSize: number;
  readonly #limit: number;

  /**
   * @param maxTableSize - the SETTINGS_HEADER_TABLE_SIZE this side advertised (4096 unless changed): the
   * largest dynamic table the peer may ask for.
   */
  constructor(maxTableSize = 4096) {
    this.#limit = maxTableSize;
    this.#maxSize = maxTableSize;
  }

  /**
   * Decodes one complete header block (the HEADERS fragment plus any CONTINUATIONs).
   *
   * @throws {@link HpackError} when the block is malformed; the connection cannot continue after that.
   */
  decode(block: Uint8Array): HeaderField[] {
    const fields: HeaderField[] = [];
    let pos = 0;
    let fieldSeen = false;
    const integer = (prefixBits: number): number => {
      const first = block[pos++];
      if (first === undefined) throw new HpackError('truncated integer');
      const mask = (1 << prefixBits) - 1;
      let value = first & mask;
      if (value < mask) return value;
      let shift = 0;
      for (;;) {
        const b = block[pos++];
        if (b === undefined) throw new HpackError('truncated integer');
        value += (b & 0x7f) * 2 ** shift;
        if (value > MAX_INTEGER) throw new HpackError('integer too large');
        if ((b & 0x80) === 0) return value;
        shift += 7;
      }
    };
    const string = (): string => {
      const huffman = ((block[pos] ?? 0) & 0x80) !== 0;
      const length = integer(7);
      if (pos + length > block.length) throw new HpackError('truncated string literal');
      const raw = block.subarray(pos, pos + length);
      pos += length;
      if (!huffman) return latin1(raw);
      const decoded = huffmanDecode(raw);
      if (typeof decoded === 'string') throw new HpackError(`invalid Huffman string (${decoded})`);
      return latin1(decoded);
    };
    while (pos < block.length) {
      const b = block[pos] as number;
      if (b & 0x80) {
        // Indexed field (§6.1).
        fields.push(this.#lookup(integer(7)));
        fieldSeen = true;
      } else if (b & 0x40) {
        // Literal with incremental indexing (§6.2.1).
        const index = integer(6);
        const name = index === 0 ? string() : this.#lookup(index)[0];
        const field: HeaderField = [name, string()];
        fields.push(field);
        this.#insert(field);
        fieldSeen = true;
      } else if (b & 0x20) {
        // Dynamic table size update (§6.3): only at the start of a block.
        if (fieldSeen) throw new HpackError('table size update after a header field');
        const size = integer(5);
        if (size > this.#limit)
          throw new HpackError(`table size ${size} above the advertised ${this.#limit}`);
        this.#maxSize = size;
        this.#evict(0);
      } else {
        // Literal without indexing (0000) or never indexed (0001) (§6.2.2, §6.2.3).
        const index = integer(4);
        const name = index === 0 ? string() : this.#lookup(index)[0];
        fields.push([name, string()]);
        fieldSeen = true;
      }
    }
    return fields;
  }

  #lookup(index: number): HeaderField {
    if (index === 0) throw new HpackError('index 0');
    const field =
      index <= STATIC_TABLE.length ? STATIC_TABLE[index - 1] : this.#dynamic[index - STATIC_TABLE.length - 1];
    if (field === undefined) throw new HpackError(`index ${index} is not in the tables`);
    return field;
  }

  #insert(field: HeaderField): void {
    const size = entrySize(field);
    this.#evict(size);
    // An entry larger than the whole table empties it and is not added (§4.4).
    if (size <= this.#maxSize) {
      this.#dynamic.unshift(field);
      this.#size += size;
    }
  }

  /** Evicts oldest entries until `incoming` more octets fit. */
  #evict(incoming: number): void {
    while (this.#size + incoming > this.#maxSize) {
      const oldest = this.#dynamic.pop();
      if (oldest === undefined) break;
      this.#size -= entrySize(oldest);
    }
  }
}

function latin1(octets: Uint8Array): string {
  return Buffer.from(octets.buffer, octets.byteOffset, octets.byteLength).toString('latin1');
}

/**
 * Encodes header fields as literals without indexing, with a new name and raw (not Huffman) strings
 * (§6.2.2): always valid, and the peer's dynamic table is never touched. Names must be lower case.
 */
export function encodeHeaders(fields: readonly HeaderField[]): Buffer {
  const parts: number[] = [];
  const integer = (value: number, prefixBits: number, firstBits: number): void => {
    const max = (1 << prefixBits) - 1;
    if (value < max) {
      parts.push(firstBits | value);
      return;
    }
    parts.push(firstBits | max);
    let rest = value - max;
    while (rest >= 0x80) {
      parts.push((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    parts.push(rest);
  };
  const string = (s: string): void => {
    integer(s.length, 7, 0);
    for (let i = 0; i < s.length; i += 1) parts.push(s.charCodeAt(i) & 0xff);
  };
  for (const [name, value] of fields) {
    parts.push(0x00);
    string(name);
    string(value);
  }
  return Buffer.from(parts);
}
