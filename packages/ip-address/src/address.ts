import type { IpAddress, IpFamily } from './family.js';
import { formatIpv4, parseIpv4 } from './ipv4.js';
import { formatIpv6, parseIpv6 } from './ipv6.js';

/** Parses an IPv4 or IPv6 address (no prefix, no zone) to its family and value; `undefined` when invalid. */
export function parseIp(text: string): IpAddress | undefined {
  if (text.includes(':')) {
    const v6 = parseIpv6(text);
    return v6 === undefined ? undefined : { family: 6, value: v6 };
  }
  const v4 = parseIpv4(text);
  return v4 === undefined ? undefined : { family: 4, value: BigInt(v4) };
}

/** The family of a textual address, or `undefined` when it is not a valid address. */
export function ipFamily(text: string): IpFamily | undefined {
  return parseIp(text)?.family;
}

/** Formats an address canonically: a dotted quad, or IPv6 in RFC 5952 form. */
export function formatIp(address: IpAddress): string {
  return address.family === 4 ? formatIpv4(Number(address.value)) : formatIpv6(address.value);
}

/** The address as 4 or 16 bytes in network order (the kernel's layout). */
export function ipToBytes(address: IpAddress): Uint8Array {
  const out = new Uint8Array(address.family === 4 ? 4 : 16);
  let v = address.value;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** The address held in 4 or 16 network-order bytes; `undefined` for any other length. */
export function ipFromBytes(bytes: Uint8Array): IpAddress | undefined {
  if (bytes.length !== 4 && bytes.length !== 16) return undefined;
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return { family: bytes.length === 4 ? 4 : 6, value };
}
