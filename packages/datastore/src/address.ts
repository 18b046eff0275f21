/**
 * The datastore's view of addresses and CIDRs, on `@vpc-cni-kit/ip-address`. Addresses are compared by value and
 * printed in canonical form (dotted quad; RFC 5952 for IPv6, as Go prints them), so a checkpoint written by the
 * reference daemon and one written here name the same address the same way.
 */
import {
  cidrNetwork,
  formatIp,
  isNetwork,
  parseCidr as parseAnyCidr,
  parseIp,
} from '@vpc-cni-kit/ip-address';

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

/** Parses an address of either family; returns its family and value, or `undefined`. */
export function parseAddress(text: string): { family: AddressFamily; value: bigint } | undefined {
  const address = parseIp(text);
  return address === undefined ? undefined : { family: address.family, value: address.value };
}

/** Formats an address value of the given family canonically. */
export function formatAddress(family: AddressFamily, value: bigint): string {
  return formatIp({ family, value });
}

/**
 * Parses `address/bits`. Host bits must be zero (a CIDR names a network, not an address in it).
 * Returns `undefined` for anything else.
 */
export function parseCidr(text: string): ParsedCidr | undefined {
  const c = parseAnyCidr(text);
  if (c === undefined || !isNetwork(c)) return undefined;
  return { family: c.family, text: `${formatIp(c)}/${c.length}`, base: c.value, bits: c.length };
}

/** The canonical CIDR text of the network of `bits` length that contains `value`. */
export function containingCidr(family: AddressFamily, value: bigint, bits: number): string {
  const net = cidrNetwork({ family, value, length: bits });
  return `${formatIp(net)}/${bits}`;
}
