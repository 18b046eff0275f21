/**
 * Decoding of HPACK's static Huffman code (RFC 7541 §5.2, Appendix B).
 *
 * The code is canonical: within one code length, codes are consecutive and ordered by symbol, and each
 * length's first code follows the last code of the length before. So the code is fully described by each
 * symbol's length, which is what {@link CODE_LENGTHS} lists (grouped by length so it can be read against
 * the appendix); the codes themselves are derived once, at first use. The derivation checks that the lengths
 * describe a complete prefix code (Kraft sum exactly 1), so a mistyped row cannot go unnoticed.
 */

/** End-of-string: the 257th symbol; it must never be decoded (§5.2). Its code is 30 one-bits. */
const EOS = 256;

/**
 * Symbols by code length. Strings list printable ASCII symbols by character; numbers are octet values.
 * Every octet 0–255 appears exactly once, and EOS (256) has length 30.
 */
const CODE_LENGTHS: ReadonlyArray<readonly [number, string | readonly number[]]> = [
  [5, '012aceiost'],
  [6, ' %-./3456789=A_bdfghlmnpru'],
  [7, ':BCDEFGHIJKLMNOPQRSTUVWYjkqvwxyz'],
  [8, '&*,;XZ'],
  [10, '!"()?'],
  [11, "'+|"],
  [12, '#>'],
  [13, [0, 0x24, 0x40, 0x5b, 0x5d, 0x7e]],
  [14, '^}'],
  [15, '<`{'],
  [19, [0x5c, 195, 208]],
  [20, [128, 130, 131, 162, 184, 194, 224, 226]],
  [21, [153, 161, 167, 172, 176, 177, 179, 209, 216, 217, 227, 229, 230]],
  [
    22,
    [
      129, 132, 133, 134, 136, 146, 154, 156, 160, 163, 164, 169, 170, 173, 178, 181, 185, 186, 187, 189, 190,
      196, 198, 228, 232, 233,
    ],
  ],
  [
    23,
    [
      1, 135, 137, 138, 139, 140, 141, 143, 147, 149, 150, 151, 152, 155, 157, 158, 165, 166, 168, 174, 175,
      180, 182, 183, 188, 191, 197, 231, 239,
    ],
  ],
  [24, [9, 142, 144, 145, 148, 159, 171, 206, 215, 225, 236, 237]],
  [25, [199, 207, 234, 235]],
  [26, [192, 193, 200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255]],
  [27, [203, 204, 211, 212, 214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254]],
  [
    28,
    [
      2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 127,
      220, 249,
    ],
  ],
  [30, [10, 13, 22, EOS]],
];

const MAX_LENGTH = 30;

/** The canonical decoding tables, per code length: first code, count, and offset into `symbols`. */
interface CanonicalTables {
  readonly firstCode: Int32Array;
  readonly count: Int32Array;
  readonly offset: Int32Array;
  /** Symbols ordered by (length, symbol). */
  readonly symbols: Uint16Array;
}

let tables: CanonicalTables | undefined;

function symbolsOf(entry: string | readonly number[]): number[] {
  return typeof entry === 'string' ? Array.from(entry, (c) => c.charCodeAt(0)) : [...entry];
}

function buildTables(): CanonicalTables {
  const count = new Int32Array(MAX_LENGTH + 1);
  const offset = new Int32Array(MAX_LENGTH + 1);
  const firstCode = new Int32Array(MAX_LENGTH + 1);
  const ordered: number[] = [];
  const seen = new Set<number>();
  let kraft = 0;
  for (const [length, entry] of CODE_LENGTHS) {
    const symbols = symbolsOf(entry).sort((a, b) => a - b);
    for (const s of symbols) {
      if (seen.has(s)) throw new Error(`HPACK Huffman table: symbol ${s} listed twice`);
      seen.add(s);
    }
    count[length] = symbols.length;
    offset[length] = ordered.length;
    ordered.push(...symbols);
    kraft += symbols.length / 2 ** length;
  }
  if (seen.size !== 257 || kraft !== 1) {
    throw new Error(`HPACK Huffman table is not a complete code (${seen.size} symbols, Kraft sum ${kraft})`);
  }
  let code = 0;
  for (let length = 1; length <= MAX_LENGTH; length += 1) {
    code = (code + (count[length - 1] ?? 0)) << 1;
    firstCode[length] = code;
  }
  return { firstCode, count, offset, symbols: Uint16Array.from(ordered) };
}

/** Why a Huffman-coded string is invalid. */
export type HuffmanFault = 'eos-decoded' | 'bad-padding';

/**
 * Decodes a Huffman-coded HPACK string literal into octets.
 *
 * @returns the octets, or the reason the input is not a valid encoding: a decoded EOS symbol, or padding
 * longer than 7 bits or not made of one-bits (the most significant bits of EOS), both decoding errors (§5.2).
 */
export function huffmanDecode(input: Uint8Array): Uint8Array | HuffmanFault {
  tables ??= buildTables();
  const { firstCode, count, offset, symbols } = tables;
  const out: number[] = [];
  let code = 0;
  let length = 0;
  for (const byte of input) {
    for (let bit = 7; bit >= 0; bit -= 1) {
      code = (code << 1) | ((byte >> bit) & 1);
      length += 1;
      const index = code - (firstCode[length] as number);
      if (index >= 0 && index < (count[length] as number)) {
        const symbol = symbols[(offset[length] as number) + index] as number;
        if (symbol === EOS) return 'eos-decoded';
        out.push(symbol);
        code = 0;
        length = 0;
      } else if (length === MAX_LENGTH) {
        // Unreachable for a complete code; kept so a corrupt table cannot loop past 30 bits.
        return 'eos-decoded';
      }
    }
  }
  // What remains must be a strict prefix of EOS (all ones), shorter than one octet.
  if (length > 7 || code !== (1 << length) - 1) return 'bad-padding';
  return Uint8Array.from(out);
}
