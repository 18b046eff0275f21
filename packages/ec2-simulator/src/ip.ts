/**
 * The simulator's numeric view of addresses and CIDRs (IPv4 as numbers, IPv6 as bigints, CIDRs as networks) on
 * `@vpc-cni-kit/ip-address`, which does all parsing and formatting.
 */
import {
  formatIpv4 as coreFormatIpv4,
  formatIpv6 as coreFormatIpv6,
  parseIpv4 as coreParseIpv4,
  parseIpv6 as coreParseIpv6,
  isNetwork,
  parseCidr,
} from '@vpc-cni-kit/ip-address';

/** An IPv4 CIDR as numbers: `base` is the network address (host bits zero). */
export interface Ipv4Cidr {
  /** Network address as an unsigned 32-bit number. */
  readonly base: number;
  /** Prefix length, 0–32. */
  readonly length: number;
}

/** An IPv6 CIDR as bigints. */
export interface Ipv6Cidr {
  /** Network address as a 128-bit bigint. */
  readonly base: bigint;
  /** Prefix length, 0–128. */
  readonly length: number;
}

/** Parses a dotted-quad IPv4 address; `undefined` if malformed. */
export const parseIpv4: (s: string) => number | undefined = coreParseIpv4;

/** Formats an unsigned 32-bit number as a dotted quad. */
export const formatIpv4: (n: number) => string = coreFormatIpv4;

/** Parses `a.b.c.d/len`; `undefined` if malformed or if host bits are set. */
export function parseIpv4Cidr(s: string): Ipv4Cidr | undefined {
  const c = parseCidr(s);
  if (c?.family !== 4 || !isNetwork(c)) return undefined;
  return { base: Number(c.value), length: c.length };
}

/** Formats an IPv4 CIDR. */
export function formatIpv4Cidr(c: Ipv4Cidr): string {
  return `${formatIpv4(c.base)}/${c.length}`;
}

/** Number of addresses in an IPv4 CIDR. */
export function ipv4Size(c: Ipv4Cidr): number {
  return 2 ** (32 - c.length);
}

/** True when `inner` lies completely inside `outer`. */
export function ipv4Within(inner: Ipv4Cidr, outer: Ipv4Cidr): boolean {
  return (
    inner.length >= outer.length && inner.base >= outer.base && inner.base < outer.base + ipv4Size(outer)
  );
}

/** True when the two CIDRs share any address. */
export function ipv4Overlaps(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  return a.base < b.base + ipv4Size(b) && b.base < a.base + ipv4Size(a);
}

/** Parses an IPv6 address (RFC 4291 text, `::` compression); `undefined` if malformed. */
export const parseIpv6: (s: string) => bigint | undefined = coreParseIpv6;

/** Formats an IPv6 address in the RFC 5952 canonical form. */
export const formatIpv6: (n: bigint) => string = coreFormatIpv6;

/** Parses `addr/len` for IPv6; `undefined` if malformed or if host bits are set. */
export function parseIpv6Cidr(s: string): Ipv6Cidr | undefined {
  const c = parseCidr(s);
  if (c?.family !== 6 || !isNetwork(c)) return undefined;
  return { base: c.value, length: c.length };
}

/** Formats an IPv6 CIDR. */
export function formatIpv6Cidr(c: Ipv6Cidr): string {
  return `${formatIpv6(c.base)}/${c.length}`;
}

/** True when `addr` lies inside `cidr`. */
export function ipv6Contains(cidr: Ipv6Cidr, addr: bigint): boolean {
  return addr >= cidr.base && addr < cidr.base + (1n << BigInt(128 - cidr.length));
}
