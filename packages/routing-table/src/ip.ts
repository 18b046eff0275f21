import {
  type Cidr,
  cidrContains,
  cidrNetwork,
  familyBits,
  formatIp,
  type IpFamily,
  ipFamily,
  parseCidr,
  parseIp,
} from '@vpc-cni-kit/ip-address';
import { invalidArgument } from './errors.js';

/** An address family: 4 or 6 (`@vpc-cni-kit/ip-address`'s). */
export type Family = IpFamily;

/** Validates an address and returns it in canonical text (RFC 5952 for IPv6). Throws `INVALID_ARGUMENT`. */
export function canonicalIp(text: string, op: string, family?: Family): string {
  const address = typeof text === 'string' ? parseIp(text.trim()) : undefined;
  if (address === undefined || (family !== undefined && address.family !== family)) {
    throw invalidArgument(op, `not an IPv${family ?? '4/6'} address: ${JSON.stringify(text)}`);
  }
  return formatIp(address);
}

/** The family of an address text. Throws `INVALID_ARGUMENT` when it is not an address. */
export function familyOf(address: string): Family {
  const family = ipFamily(address);
  if (family === undefined)
    throw invalidArgument('familyOf', `not an IP address: ${JSON.stringify(address)}`);
  return family;
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
  const host = trimmed.includes('/') ? undefined : parseIp(trimmed);
  const c: Cidr | undefined = host ? { ...host, length: familyBits(host.family) } : parseCidr(trimmed);
  if (c === undefined) throw invalidArgument(op, `not a CIDR: ${JSON.stringify(text)}`);
  return { address: formatIp(keepHost ? c : cidrNetwork(c)), length: c.length, family: c.family };
}

/** `address/length`. */
export function formatPrefix(p: Prefix): string {
  return `${p.address}/${p.length}`;
}

/** The first usable address of a subnet (network + 1): the AWS subnet gateway. */
export function subnetGateway(subnet: Prefix): string {
  const base = parseIp(subnet.address)!;
  const wrap = 1n << BigInt(familyBits(base.family));
  return formatIp({ family: base.family, value: (base.value + 1n) % wrap });
}

/** True when `address` lies inside `prefix` (same family). */
export function prefixContains(prefix: Prefix, address: string): boolean {
  const a = parseIp(address);
  const p = parseIp(prefix.address);
  if (!a || !p) return false;
  return cidrContains({ ...p, length: prefix.length }, a);
}
