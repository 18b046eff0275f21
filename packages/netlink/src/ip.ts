/**
 * Tiny, dependency-free IP and MAC address parsing and formatting. Strings in, bytes out (and back), so the
 * rest of the package can speak the kernel's byte layout while callers use the text iproute2 prints.
 */

/** An address family: 4 (AF_INET) or 6 (AF_INET6). */
export type IpFamily = 4 | 6;

/** A parsed prefix such as `10.0.0.0/24`. */
export interface ParsedPrefix {
  /** 4 or 6. */
  family: IpFamily;
  /** 4 or 16 bytes, network order, exactly as written (host bits are kept). */
  bytes: Uint8Array;
  /** Prefix length in bits. */
  length: number;
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | undefined {
  if (text.length < 2 || text.length > 45) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const items = half.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIpv4(item);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
        out.push(Number.parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  } else {
    all = head;
  }
  if (all.length !== 8) return undefined;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** Parses an IPv4 or IPv6 address (no prefix, no zone) into 4 or 16 bytes, or `undefined` when invalid. */
export function parseIp(text: string): Uint8Array | undefined {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text);
}

/** The family of a textual address, or `undefined` when it is not a valid address. */
export function ipFamily(text: string): IpFamily | undefined {
  const b = parseIp(text);
  return b === undefined ? undefined : b.length === 4 ? 4 : 6;
}

/**
 * Parses `addr/len` (or a bare address, meaning a host prefix) into a {@link ParsedPrefix}; `undefined`
 * when invalid.
 */
export function parsePrefix(text: string): ParsedPrefix | undefined {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const bytes = parseIp(addr);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  let length = max;
  if (slash >= 0) {
    const l = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(l)) return undefined;
    length = Number(l);
    if (length > max) return undefined;
  }
  return { family: bytes.length === 4 ? 4 : 6, bytes, length };
}

/** Formats 4 or 16 bytes as an address (IPv6 in RFC 5952 form, as iproute2 prints it). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(':');
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return `::ffff:${formatIp(bytes.subarray(12))}`;
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
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
