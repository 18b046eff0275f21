/**
 * IP and MAC address parsing and formatting in the kernel's byte layout. Strings in, bytes out (and back), so the
 * rest of the package can speak the kernel's layout while callers use the text iproute2 prints. The address
 * text itself is `@vpc-cni-kit/ip-address`'s.
 */
import {
  ipFamily as addressFamily,
  type Cidr,
  familyBits,
  formatIp as formatAddress,
  type IpFamily,
  ipFromBytes,
  ipToBytes,
  parseIp as parseAddress,
  parseCidr,
} from '@vpc-cni-kit/ip-address';

/** An address family: 4 (AF_INET) or 6 (AF_INET6). */
export type { IpFamily };

/** A parsed prefix such as `10.0.0.0/24`. */
export interface ParsedPrefix {
  /** 4 or 6. */
  family: IpFamily;
  /** 4 or 16 bytes, network order, exactly as written (host bits are kept). */
  bytes: Uint8Array;
  /** Prefix length in bits. */
  length: number;
}

/** Parses an IPv4 or IPv6 address (no prefix, no zone) into 4 or 16 bytes, or `undefined` when invalid. */
export function parseIp(text: string): Uint8Array | undefined {
  const address = parseAddress(text);
  return address === undefined ? undefined : ipToBytes(address);
}

/** The family of a textual address, or `undefined` when it is not a valid address. */
export function ipFamily(text: string): IpFamily | undefined {
  return addressFamily(text);
}

/**
 * Parses `addr/len` (or a bare address, meaning a host prefix) into a {@link ParsedPrefix}; `undefined`
 * when invalid.
 */
export function parsePrefix(text: string): ParsedPrefix | undefined {
  const c = text.includes('/') ? parseCidr(text) : hostPrefix(text);
  return c === undefined ? undefined : { family: c.family, bytes: ipToBytes(c), length: c.length };
}

function hostPrefix(text: string): Cidr | undefined {
  const address = parseAddress(text);
  return address === undefined ? undefined : { ...address, length: familyBits(address.family) };
}

/** Formats 4 or 16 bytes as an address (IPv6 in RFC 5952 form, as iproute2 prints it). */
export function formatIp(bytes: Uint8Array): string {
  const address = ipFromBytes(bytes);
  if (address === undefined) return formatMac(bytes);
  return formatAddress(address);
}

/** Parses a MAC (`aa:bb:cc:dd:ee:ff`, also `-` separated) into 6 bytes, or `undefined` when invalid. */
export function parseMac(text: string): Uint8Array | undefined {
  const parts = text.split(/[:-]/);
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return undefined;
  return Uint8Array.from(parts, (p) => Number.parseInt(p, 16));
}

/** Formats link-layer address bytes as lower-case colon-separated hex (`aa:bb:...`). */
export function formatMac(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(':');
}
