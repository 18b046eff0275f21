/**
 * Shape checks for values read from IMDS and EC2. Each returns the value when it has the expected shape and
 * `undefined` otherwise; callers turn `undefined` into a typed error.
 */

const IPV4_OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);

/** A dotted-quad IPv4 address. */
export function ipv4(value: string): string | undefined {
  return IPV4.test(value) ? value : undefined;
}

/** An IPv4 CIDR `a.b.c.d/n` whose host bits are zero. */
export function ipv4Cidr(value: string): string | undefined {
  const [address, bits, extra] = value.split('/');
  if (extra !== undefined || address === undefined || bits === undefined || ipv4(address) === undefined)
    return undefined;
  if (!/^\d{1,2}$/.test(bits)) return undefined;
  const length = Number(bits);
  if (length > 32) return undefined;
  const hostMask = length === 32 ? 0 : 0xffffffff >>> length;
  return (ipv4ToNumber(address) & hostMask) === 0 ? value : undefined;
}

/** An IPv6 address (loose check: hex groups and colons, at most one `::`). */
export function ipv6(value: string): string | undefined {
  if (!/^[0-9a-fA-F:]{2,39}$/.test(value) || (value.match(/::/g)?.length ?? 0) > 1) return undefined;
  return value;
}

/** An IPv6 CIDR (loose address check, prefix length 0–128). */
export function ipv6Cidr(value: string): string | undefined {
  const [address, bits, extra] = value.split('/');
  if (extra !== undefined || address === undefined || bits === undefined || ipv6(address) === undefined)
    return undefined;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= 128 ? value : undefined;
}

/** A lower-case MAC address `0a:1b:2c:3d:4e:5f`. */
export function mac(value: string): string | undefined {
  return /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(value) ? value : undefined;
}

/** An AWS resource id with the given prefix, e.g. `eni-0123abcd` for `eni`. */
export function awsId(
  prefix: 'eni' | 'subnet' | 'vpc' | 'sg' | 'i' | 'eni-attach',
  value: string,
): string | undefined {
  return new RegExp(`^${prefix}-[0-9a-f]{8,17}$`).test(value) ? value : undefined;
}

/** A non-negative integer written in decimal. */
export function decimal(value: string): number | undefined {
  return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** The 32-bit number for a dotted-quad IPv4 address (assumed valid). */
export function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0) >>> 0;
}
