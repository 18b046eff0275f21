/**
 * IP address checks for CNI results and configs, on `@vpc-cni-kit/ip-address` (dependency-free and without
 * `node:net`: this package sits on every CNI plugin's start path).
 */
import {
  ipFamily as addressFamily,
  parseCidr as parseAnyCidr,
  parseIpv4,
  parseIpv6,
} from '@vpc-cni-kit/ip-address';

/** Whether `s` is a dotted-quad IPv4 address (no leading zeros, no CIDR suffix). */
export function isIPv4(s: string): boolean {
  return typeof s === 'string' && parseIpv4(s) !== undefined;
}

/** Whether `s` is an IPv6 address in any RFC 4291 text form (including `::` and an embedded IPv4 tail). */
export function isIPv6(s: string): boolean {
  return typeof s === 'string' && parseIpv6(s) !== undefined;
}

/** The IP family of `s` (4 or 6), or `undefined` when it is not an address. */
export function ipFamily(s: string): 4 | 6 | undefined {
  return typeof s === 'string' ? addressFamily(s) : undefined;
}

/** A parsed `address/prefix`. */
export interface Cidr {
  /** The address part exactly as written (host bits may be set, as in a CNI result's `address`). */
  address: string;
  /** Prefix length in bits. */
  prefixLength: number;
  /** 4 or 6. */
  family: 4 | 6;
}

/** Parses `a.b.c.d/n` or `x::y/n`; returns `undefined` when it is not a valid CIDR. */
export function parseCidr(s: string): Cidr | undefined {
  const c = typeof s === 'string' ? parseAnyCidr(s) : undefined;
  if (c === undefined) return undefined;
  return { address: s.slice(0, s.indexOf('/')), prefixLength: c.length, family: c.family };
}
