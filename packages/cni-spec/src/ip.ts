/**
 * Tiny, dependency-free IP address checks. This package sits on every CNI plugin's start path, so it avoids
 * both `node:net` and third-party address libraries.
 */

const v4Octet = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const v4Re = new RegExp(`^${v4Octet}(\\.${v4Octet}){3}$`);
const hexGroup = /^[0-9a-fA-F]{1,4}$/;

/** Whether `s` is a dotted-quad IPv4 address (no leading zeros, no CIDR suffix). */
export function isIPv4(s: string): boolean {
  return v4Re.test(s);
}

/** Whether `s` is an IPv6 address in any RFC 4291 text form (including `::` and an embedded IPv4 tail). */
export function isIPv6(s: string): boolean {
  if (s.length < 2 || s.length > 45 || s.includes('%')) return false;
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string): string[] | undefined => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return false;
  const all = [...head, ...tail];
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i] ?? '';
    if (i === all.length - 1 && g.includes('.')) {
      if (!isIPv4(g)) return false;
      count += 2;
    } else if (hexGroup.test(g)) {
      count += 1;
    } else {
      return false;
    }
  }
  return halves.length === 2 ? count < 8 : count === 8;
}

/** The IP family of `s` (4 or 6), or `undefined` when it is not an address. */
export function ipFamily(s: string): 4 | 6 | undefined {
  if (isIPv4(s)) return 4;
  if (isIPv6(s)) return 6;
  return undefined;
}

/** A parsed `address/prefix`. */
export interface Cidr {
  address: string;
  prefixLength: number;
  family: 4 | 6;
}

/** Parses `a.b.c.d/n` or `x::y/n`; returns `undefined` when it is not a valid CIDR. */
export function parseCidr(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const address = s.slice(0, slash);
  const len = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(len)) return undefined;
  const family = ipFamily(address);
  if (family === undefined) return undefined;
  const prefixLength = Number(len);
  if (prefixLength > (family === 4 ? 32 : 128)) return undefined;
  return { address, prefixLength, family };
}
