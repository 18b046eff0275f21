import {
  cidrNetwork,
  parseIpv4 as coreParseIpv4,
  formatIp,
  parseCidr,
  parseIp,
} from '@vpc-cni-kit/ip-address';
import { invalidOption } from './errors.js';

/** Parses a dotted-quad IPv4 address into a 32-bit unsigned number, or `undefined` (`@vpc-cni-kit/ip-address`). */
export const parseIpv4: (text: string) => number | undefined = coreParseIpv4;

/** An IPv4 CIDR in network form (host bits cleared). */
export interface Ipv4Cidr {
  /** Network address. */
  readonly address: string;
  /** Prefix length 0–32. */
  readonly prefix: number;
}

/**
 * Parses `a.b.c.d/n` (or a bare address, taken as /32) and clears host bits, as the reference normalises
 * CIDRs. Throws `INVALID_OPTION` naming `subject` on anything else, including IPv6.
 */
export function normalizeIpv4Cidr(text: string, subject: string): Ipv4Cidr {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  const slash = trimmed.indexOf('/');
  const address = parseIp(slash < 0 ? trimmed : trimmed.slice(0, slash));
  if (address?.family !== 4) throw invalidOption(subject, `not an IPv4 CIDR: ${JSON.stringify(text)}`);
  const c = slash < 0 ? { ...address, length: 32 } : parseCidr(trimmed);
  if (c === undefined) {
    const outOfRange = /^[1-9][0-9]*$/.test(trimmed.slice(slash + 1));
    throw invalidOption(
      subject,
      `${outOfRange ? 'prefix length out of range' : 'not an IPv4 CIDR'}: ${JSON.stringify(text)}`,
    );
  }
  return { address: formatIp(cidrNetwork(c)), prefix: c.length };
}

/** `address/prefix`. */
export function formatCidr(cidr: Ipv4Cidr): string {
  return `${cidr.address}/${cidr.prefix}`;
}

const IFNAME = /^[A-Za-z0-9_.:-]+$/;

/**
 * Validates a Linux interface name (1–15 characters from `[A-Za-z0-9_.:-]`, not `.` or `..`), so that it can
 * be placed in rule text without quoting. Throws `INVALID_OPTION`.
 */
export function validateInterfaceName(name: string, subject: string): string {
  if (name.length < 1 || name.length > 15 || !IFNAME.test(name) || name === '.' || name === '..') {
    throw invalidOption(subject, `not a valid interface name: ${JSON.stringify(name)}`);
  }
  return name;
}

/**
 * Validates a host veth prefix as the reference does: at most 4 characters, not `eth`, `vlan` or `lo`
 * (and characters valid in interface names). Throws `INVALID_OPTION`.
 */
export function validateVethPrefix(prefix: string, subject = 'vethPrefix'): string {
  if (prefix.length < 1 || prefix.length > 4 || !IFNAME.test(prefix)) {
    throw invalidOption(subject, `must be 1–4 interface-name characters: ${JSON.stringify(prefix)}`);
  }
  if (prefix === 'eth' || prefix === 'vlan' || prefix === 'lo') {
    throw invalidOption(subject, `reserved prefix: ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/** Validates a connmark/fwmark bit: an integer with 0 < mark ≤ 2^32−1. Throws `INVALID_OPTION`. */
export function validateMark(mark: number, subject = 'connmark'): number {
  if (!Number.isInteger(mark) || mark <= 0 || mark > 0xffffffff) {
    throw invalidOption(subject, `must be an integer in 1..0xffffffff: ${String(mark)}`);
  }
  return mark;
}
