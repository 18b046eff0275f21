/**
 * IPv4 and IPv6 address and CIDR parsing for the datastore. Addresses are compared by value and printed in
 * canonical form (dotted quad; RFC 5952 for IPv6, as Go's `net.IP.String` prints them), so a checkpoint
 * written by the reference daemon and one written here name the same address the same way.
 */

/** An address family: 4 or 6. */
export type AddressFamily = 4 | 6;

/** A parsed CIDR: its family, canonical text, base address (as a bigint) and prefix length. */
export interface ParsedCidr {
  /** 4 or 6. */
  readonly family: AddressFamily;
  /** Canonical text, e.g. `10.0.1.16/28` or `2001:db8:1:2:3::/80`. */
  readonly text: string;
  /** The network address as an unsigned integer. */
  readonly base: bigint;
  /** Prefix length in bits. */
  readonly bits: number;
}

const V4_PART = /^(0|[1-9][0-9]{0,2})$/;

/** Parses a dotted-quad IPv4 address to an unsigned 32-bit integer, or `undefined` if it is not one. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!V4_PART.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** Formats an unsigned 32-bit integer as a dotted-quad IPv4 address. */
export function formatIPv4(value: number): string {
  return `${Math.floor(value / 16777216) % 256}.${Math.floor(value / 65536) % 256}.${Math.floor(value / 256) % 256}.${value % 256}`;
}

const V6_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** Parses an IPv6 address (no zone, no embedded IPv4) to a 128-bit bigint, or `undefined`. */
export function parseIPv6(text: string): bigint | undefined {
  if (text.length === 0 || text.length > 39) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 2 ? (halves[1] === '' ? [] : halves[1]!.split(':')) : [];
  const groups = halves.length === 2 ? head.length + tail.length : head.length;
  if (halves.length === 1 && groups !== 8) return undefined;
  if (halves.length === 2 && groups > 7) return undefined;
  const all = [...head, ...Array<string>(8 - groups).fill('0'), ...tail];
  let value = 0n;
  for (const g of all) {
    if (!V6_GROUP.test(g)) return undefined;
    value = (value << 16n) | BigInt(Number.parseInt(g, 16));
  }
  return value;
}

/** Formats a 128-bit bigint as an IPv6 address in RFC 5952 canonical form. */
export function formatIPv6(value: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses an address of either family; returns its family and value, or `undefined`. */
export function parseAddress(text: string): { family: AddressFamily; value: bigint } | undefined {
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return { family: 4, value: BigInt(v4) };
  const v6 = parseIPv6(text);
  if (v6 !== undefined) return { family: 6, value: v6 };
  return undefined;
}

/** Formats an address value of the given family canonically. */
export function formatAddress(family: AddressFamily, value: bigint): string {
  return family === 4 ? formatIPv4(Number(value)) : formatIPv6(value);
}

/**
 * Parses `address/bits`. Host bits must be zero (a CIDR names a network, not an address in it).
 * Returns `undefined` for anything else.
 */
export function parseCidr(text: string): ParsedCidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addr = parseAddress(text.slice(0, slash));
  const bitsText = text.slice(slash + 1);
  if (addr === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  const width = addr.family === 4 ? 32 : 128;
  if (bits > width) return undefined;
  const hostBits = BigInt(width - bits);
  if ((addr.value & ((1n << hostBits) - 1n)) !== 0n) return undefined;
  return {
    family: addr.family,
    text: `${formatAddress(addr.family, addr.value)}/${bits}`,
    base: addr.value,
    bits,
  };
}

/** The canonical CIDR text of the network of `bits` length that contains `value`. */
export function containingCidr(family: AddressFamily, value: bigint, bits: number): string {
  const width = family === 4 ? 32 : 128;
  const host = BigInt(width - bits);
  const base = (value >> host) << host;
  return `${formatAddress(family, base)}/${bits}`;
}
