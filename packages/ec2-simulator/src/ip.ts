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

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Parses a dotted-quad IPv4 address; `undefined` if malformed. */
export function parseIpv4(s: string): number | undefined {
  const m = V4.exec(s);
  if (!m) return undefined;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const part = m[i]!;
    if (part.length > 1 && part.startsWith('0')) return undefined;
    const o = Number(part);
    if (o > 255) return undefined;
    n = n * 256 + o;
  }
  return n;
}

/** Formats an unsigned 32-bit number as a dotted quad. */
export function formatIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Parses `a.b.c.d/len`; `undefined` if malformed or if host bits are set. */
export function parseIpv4Cidr(s: string): Ipv4Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const base = parseIpv4(s.slice(0, slash));
  const lenText = s.slice(slash + 1);
  if (base === undefined || !/^\d{1,2}$/.test(lenText)) return undefined;
  const length = Number(lenText);
  if (length > 32) return undefined;
  if (length < 32 && base % 2 ** (32 - length) !== 0) return undefined;
  return { base, length };
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

/** Parses an IPv6 address (with `::` compression; no embedded IPv4); `undefined` if malformed. */
export function parseIpv6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:]+$/.test(s) || s.length < 2) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const groups = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (halves.length === 2 ? groups < 1 : head.length !== 8) return undefined;
  const all = [...head, ...Array<string>(groups).fill('0'), ...tail];
  let n = 0n;
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    n = (n << 16n) | BigInt(Number.parseInt(g, 16));
  }
  return n;
}

/** Formats an IPv6 address in the RFC 5952 canonical form. */
export function formatIpv6(n: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses `addr/len` for IPv6; `undefined` if malformed or if host bits are set. */
export function parseIpv6Cidr(s: string): Ipv6Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const base = parseIpv6(s.slice(0, slash));
  const lenText = s.slice(slash + 1);
  if (base === undefined || !/^\d{1,3}$/.test(lenText)) return undefined;
  const length = Number(lenText);
  if (length > 128) return undefined;
  if (length < 128 && base % (1n << BigInt(128 - length)) !== 0n) return undefined;
  return { base, length };
}

/** Formats an IPv6 CIDR. */
export function formatIpv6Cidr(c: Ipv6Cidr): string {
  return `${formatIpv6(c.base)}/${c.length}`;
}

/** True when `addr` lies inside `cidr`. */
export function ipv6Contains(cidr: Ipv6Cidr, addr: bigint): boolean {
  return addr >= cidr.base && addr < cidr.base + (1n << BigInt(128 - cidr.length));
}
