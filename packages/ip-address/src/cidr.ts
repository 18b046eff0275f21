import { formatIp, parseIp } from './address.js';
import { familyBits, type IpAddress, type IpFamily } from './family.js';

/** A parsed `address/length`. The address is kept as written: host bits may be set (see {@link cidrNetwork}). */
export interface Cidr {
  /** 4 or 6. */
  readonly family: IpFamily;
  /** The address part as an unsigned integer. */
  readonly value: bigint;
  /** Prefix length in bits: 0–32 for IPv4, 0–128 for IPv6. */
  readonly length: number;
}

const LENGTH = /^(0|[1-9][0-9]{0,2})$/;

/**
 * Parses `address/length` (`10.0.0.0/16`, `2001:db8::/64`). The length is decimal without leading zeros and at
 * most the family's width. Host bits are allowed and kept; callers that need a network check
 * {@link isNetwork}. `undefined` for anything else, including a bare address.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIp(text.slice(0, slash));
  const lengthText = text.slice(slash + 1);
  if (address === undefined || !LENGTH.test(lengthText)) return undefined;
  const length = Number(lengthText);
  if (length > familyBits(address.family)) return undefined;
  return { family: address.family, value: address.value, length };
}

/** Formats `address/length` with the address in canonical form. */
export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr)}/${cidr.length}`;
}

function hostMask(cidr: Cidr): bigint {
  return (1n << BigInt(familyBits(cidr.family) - cidr.length)) - 1n;
}

/** The network of a CIDR: the same prefix with the host bits cleared (`10.0.1.7/24` → `10.0.1.0/24`). */
export function cidrNetwork(cidr: Cidr): Cidr {
  return { family: cidr.family, value: cidr.value & ~hostMask(cidr), length: cidr.length };
}

/** Whether the CIDR names a network: all host bits are zero. */
export function isNetwork(cidr: Cidr): boolean {
  return (cidr.value & hostMask(cidr)) === 0n;
}

/** Whether `address` lies inside `cidr` (same family, same leading `length` bits). */
export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  if (cidr.family !== address.family) return false;
  const mask = ~hostMask(cidr);
  return (cidr.value & mask) === (address.value & mask);
}
