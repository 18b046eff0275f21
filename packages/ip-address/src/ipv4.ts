const OCTET = /^(0|[1-9][0-9]{0,2})$/;

/**
 * Parses a dotted-quad IPv4 address (`10.0.1.7`) to an unsigned 32-bit number. Exactly four decimal octets of
 * 0–255 without leading zeros (`01.2.3.4` is refused: some parsers read it as octal), no prefix, no spaces;
 * `undefined` for anything else.
 */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Formats an unsigned 32-bit number as a dotted quad. */
export function formatIpv4(value: number): string {
  return `${Math.floor(value / 0x1000000) % 256}.${Math.floor(value / 0x10000) % 256}.${Math.floor(value / 0x100) % 256}.${value % 256}`;
}
