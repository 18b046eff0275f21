/**
 * Shape checks for values read from IMDS and EC2. Each returns the value when it has the expected shape and
 * `undefined` otherwise; callers turn `undefined` into a typed error. Addresses are checked by
 * `@vpc-cni-kit/ip-address`.
 */
import { isNetwork, parseCidr, parseIpv4, parseIpv6 } from '@vpc-cni-kit/ip-address';

/** A dotted-quad IPv4 address. */
export function ipv4(value: string): string | undefined {
  return parseIpv4(value) === undefined ? undefined : value;
}

/** An IPv4 CIDR `a.b.c.d/n` whose host bits are zero. */
export function ipv4Cidr(value: string): string | undefined {
  const c = parseCidr(value);
  return c?.family === 4 && isNetwork(c) ? value : undefined;
}

/** An IPv6 address in RFC 4291 text form. */
export function ipv6(value: string): string | undefined {
  return parseIpv6(value) === undefined ? undefined : value;
}

/** An IPv6 CIDR `addr/n` (prefix length 0–128; host bits are not checked). */
export function ipv6Cidr(value: string): string | undefined {
  return parseCidr(value)?.family === 6 ? value : undefined;
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
