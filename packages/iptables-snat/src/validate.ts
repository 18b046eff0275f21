import { invalidOption } from './errors.js';

/** Parses a dotted-quad IPv4 address into a 32-bit unsigned number, or `undefined`. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** Formats a 32-bit unsigned number as a dotted quad. */
export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

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
  const trimmed = text.trim();
  const [addr, len, extra] = trimmed.split('/');
  const base = addr === undefined ? undefined : parseIpv4(addr);
  if (base === undefined || extra !== undefined || (len !== undefined && !/^(0|[1-9][0-9]?)$/.test(len))) {
    throw invalidOption(subject, `not an IPv4 CIDR: ${JSON.stringify(text)}`);
  }
  const prefix = len === undefined ? 32 : Number(len);
  if (prefix > 32) throw invalidOption(subject, `prefix length out of range: ${JSON.stringify(text)}`);
  const size = 2 ** (32 - prefix);
  return { address: formatIpv4(base - (base % size)), prefix };
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
