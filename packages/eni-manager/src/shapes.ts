/**
 * Shape checks for values read from IMDS and EC2: the one set both parsers use (IMDS in
 * `imds/discovery.ts`, EC2 in `ec2/response.ts` and its callers), and the one callers' inputs are checked with.
 * Each returns the value when it has the expected shape and `undefined` otherwise; callers turn `undefined`
 * into a typed error (`ImdsInvalidResponse`, `Ec2InvalidResponse` or `InvalidInput`). Addresses and CIDRs are
 * checked by `@vpc-cni-kit/ip-address`.
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

/** A delegated IPv4 prefix: an IPv4 CIDR of exactly /28 (what EC2 assigns), host bits zero. */
export function ipv4Prefix(value: string): string | undefined {
  return ipv4Cidr(value)?.endsWith('/28') ? value : undefined;
}

/** A delegated IPv6 prefix: an IPv6 CIDR of exactly /80 (what EC2 assigns). */
export function ipv6Prefix(value: string): string | undefined {
  return ipv6Cidr(value)?.endsWith('/80') ? value : undefined;
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

/** A non-negative integer written in decimal (a device number or network card index, as IMDS writes it). */
export function decimal(value: string): number | undefined {
  return /^\d{1,9}$/.test(value) ? index(Number(value)) : undefined;
}

/** A non-negative safe integer (a device or network card index, a count, as EC2 returns it). */
export function index(value: number): number | undefined {
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** A positive safe integer (a limit such as an ENI or address count per instance type). */
export function positive(value: number): number | undefined {
  return Number.isSafeInteger(value) && value >= 1 ? value : undefined;
}

/** An instance type, `family.size` (`m5.large`, `c7gn.metal-48xl`). */
export function instanceType(value: string): string | undefined {
  return /^[a-z0-9-]+\.[a-z0-9-]+$/.test(value) ? value : undefined;
}

/** An AWS region name, e.g. `us-west-2`. */
export function region(value: string): string | undefined {
  return /^[a-z]{2}(-[a-z0-9]+)+$/.test(value) ? value : undefined;
}

/** An availability zone name: a region followed by a letter, e.g. `us-west-2a`. */
export function zone(value: string): string | undefined {
  return /^[a-z]{2}(-[a-z0-9]+)+[a-z]$/.test(value) ? value : undefined;
}
