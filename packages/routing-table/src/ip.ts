import {
  type Cidr,
  cidrContains,
  cidrNetwork,
  familyBits,
  formatIp as formatAddress,
  parseIp as parseAddress,
  parseCidr,
} from '@vpc-cni-kit/ip-address';
import { formatIp, parseIp } from '@vpc-cni-kit/netlink';
import { invalidArgument } from './errors.js';

/** An address family: 4 or 6. */
export type Family = 4 | 6;

/**
 * Parses an IPv4 or IPv6 address into bytes, or `undefined` (netlink's parser: one implementation for the
 * whole stack).
 */
export const parseIpBytes: (text: string) => Uint8Array | undefined = parseIp;

/** Formats 4 or 16 bytes as text; IPv6 in RFC 5952 form (lower case, longest zero run compressed). */
export const formatIpBytes: (bytes: Uint8Array) => string = formatIp;

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
  const trimmed = text.trim();
  const host = trimmed.includes('/') ? undefined : parseAddress(trimmed);
  const c: Cidr | undefined = host ? { ...host, length: familyBits(host.family) } : parseCidr(trimmed);
  if (c === undefined) throw invalidArgument(op, `not a CIDR: ${JSON.stringify(text)}`);
  return { address: formatAddress(keepHost ? c : cidrNetwork(c)), length: c.length, family: c.family };
}

/** `address/length`. */
export function formatPrefix(p: Prefix): string {
  return `${p.address}/${p.length}`;
}

/** The first usable address of a subnet (network + 1): the AWS subnet gateway. */
export function subnetGateway(subnet: Prefix): string {
  const base = parseAddress(subnet.address)!;
  const wrap = 1n << BigInt(familyBits(base.family));
  return formatAddress({ family: base.family, value: (base.value + 1n) % wrap });
}

/** True when `address` lies inside `prefix` (same family). */
export function prefixContains(prefix: Prefix, address: string): boolean {
  const a = parseAddress(address);
  const p = parseAddress(prefix.address);
  if (!a || !p) return false;
  return cidrContains({ ...p, length: prefix.length }, a);
}
