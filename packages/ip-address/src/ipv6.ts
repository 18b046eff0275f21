import { formatIpv4, parseIpv4 } from './ipv4.js';

const GROUP = /^[0-9a-fA-F]{1,4}$/;

function groupsOf(half: string, last: boolean): number[] | undefined {
  if (half === '') return [];
  const items = half.split(':');
  const out: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (last && i === items.length - 1 && item.includes('.')) {
      const v4 = parseIpv4(item);
      if (v4 === undefined) return undefined;
      out.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    } else if (GROUP.test(item)) {
      out.push(Number.parseInt(item, 16));
    } else {
      return undefined;
    }
  }
  return out;
}

/**
 * Parses an IPv6 address in any RFC 4291 text form — eight groups of 1–4 hex digits, at most one `::`, an
 * optional dotted-quad tail (`::ffff:10.0.0.1`) — to an unsigned 128-bit bigint. No zone (`%eth0`), no prefix,
 * no brackets; `undefined` for anything else.
 */
export function parseIpv6(text: string): bigint | undefined {
  if (text.length < 2 || text.length > 45) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const compressed = halves.length === 2;
  const head = groupsOf(halves[0]!, !compressed);
  const tail = compressed ? groupsOf(halves[1]!, true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (compressed ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const g of [...head, ...new Array<number>(missing).fill(0), ...tail])
    value = (value << 16n) | BigInt(g);
  return value;
}

/**
 * Formats an unsigned 128-bit bigint as an IPv6 address in the RFC 5952 canonical form: lower-case hex without
 * leading zeros, the longest run of two or more zero groups (the first of equals) shortened to `::`, and
 * IPv4-mapped addresses as `::ffff:a.b.c.d` (RFC 5952 §5) — what iproute2 and Go's `netip` print.
 */
export function formatIpv6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatIpv4(Number(value & 0xffffffffn))}`;
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
