import { invalidArgument } from './errors.js';

/** An address family: 4 or 6. */
export type Family = 4 | 6;

function parseV4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    out[i] = Number(part);
  }
  return out;
}

function parseV6(text: string): Uint8Array | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    for (const item of half.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
      out.push(Number.parseInt(item, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** Parses an IPv4 or IPv6 address into bytes, or `undefined`. */
export function parseIpBytes(text: string): Uint8Array | undefined {
  return text.includes(':') ? parseV6(text) : parseV4(text);
}

/** Formats 4 or 16 bytes as text; IPv6 in RFC 5952 form (lower case, longest zero run compressed). */
export function formatIpBytes(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Validates an address and returns it in canonical text. Throws `INVALID_ARGUMENT`. */
export function canonicalIp(text: string, op: string, family?: Family): string {
  const bytes = typeof text === 'string' ? parseIpBytes(text.trim()) : undefined;
  if (!bytes || (family !== undefined && bytes.length !== (family === 4 ? 4 : 16))) {
    throw invalidArgument(op, `not an IPv${family ?? '4/6'} address: ${JSON.stringify(text)}`);
  }
  return formatIpBytes(bytes);
}

/** The family of a valid address text (assumes it was validated). */
export function familyOf(address: string): Family {
  return address.includes(':') ? 6 : 4;
}

/** A prefix in network form. */
export interface Prefix {
  /** Network address (host bits cleared), canonical text. */
  readonly address: string;
  /** Prefix length. */
  readonly length: number;
  /** 4 or 6. */
  readonly family: Family;
}

/**
 * Parses `addr/len` (a bare address is a host prefix) and clears host bits unless `keepHost`.
 * Throws `INVALID_ARGUMENT`.
 */
export function parsePrefix(text: string, op: string, keepHost = false): Prefix {
  if (typeof text !== 'string') throw invalidArgument(op, 'prefix must be a string');
  const [addr, len, extra] = text.trim().split('/');
  const bytes = addr === undefined ? undefined : parseIpBytes(addr);
  const max = bytes?.length === 4 ? 32 : 128;
  if (!bytes || extra !== undefined || (len !== undefined && (!/^\d{1,3}$/.test(len) || Number(len) > max))) {
    throw invalidArgument(op, `not a CIDR: ${JSON.stringify(text)}`);
  }
  const length = len === undefined ? max : Number(len);
  const out = new Uint8Array(bytes);
  if (!keepHost) {
    for (let bit = length; bit < max; bit++) out[bit >> 3]! &= ~(0x80 >> (bit & 7));
  }
  return { address: formatIpBytes(out), length, family: bytes.length === 4 ? 4 : 6 };
}

/** `address/length`. */
export function formatPrefix(p: Prefix): string {
  return `${p.address}/${p.length}`;
}

/** The first usable address of a subnet (network + 1): the AWS subnet gateway. */
export function subnetGateway(subnet: Prefix): string {
  const bytes = parseIpBytes(subnet.address)!;
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] === 255) {
      bytes[i] = 0;
      continue;
    }
    bytes[i]! += 1;
    break;
  }
  return formatIpBytes(bytes);
}

/** True when `address` lies inside `prefix` (same family). */
export function prefixContains(prefix: Prefix, address: string): boolean {
  const a = parseIpBytes(address);
  const p = parseIpBytes(prefix.address);
  if (!a || !p || a.length !== p.length) return false;
  for (let bit = 0; bit < prefix.length; bit++) {
    const mask = 0x80 >> (bit & 7);
    if ((a[bit >> 3]! & mask) !== (p[bit >> 3]! & mask)) return false;
  }
  return true;
}
