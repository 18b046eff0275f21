import { checkEniId } from './describe.js';
import type { Ec2Api } from './ec2/client.js';
import { eniError } from './errors.js';
import { ipv4, ipv4Cidr, ipv6Cidr } from './shapes.js';

/** Add secondary IPv4 addresses. */
export interface AssignAddresses {
  /** How many (1–64). */
  readonly ipv4Count: number;
}

/** Add /28 IPv4 prefixes (prefix delegation). */
export interface AssignPrefixes {
  /** How many (1–64). */
  readonly prefixCount: number;
}

/** What to add to an ENI in one `AssignPrivateIpAddresses` call: secondary addresses or /28 prefixes. */
export type AssignRequest = AssignAddresses | AssignPrefixes;

/** Remove secondary IPv4 addresses. */
export interface UnassignAddresses {
  /** The addresses (at least one). */
  readonly ipv4Addresses: readonly string[];
}

/** Remove /28 IPv4 prefixes. */
export interface UnassignPrefixes {
  /** The prefixes, `a.b.c.d/28` (at least one). */
  readonly ipv4Prefixes: readonly string[];
}

/** What to remove from an ENI in one `UnassignPrivateIpAddresses` call. */
export type UnassignRequest = UnassignAddresses | UnassignPrefixes;

/** The addresses and prefixes EC2 assigned. */
export interface Assigned {
  /** New secondary addresses. */
  readonly ipv4Addresses: readonly string[];
  /** New /28 prefixes. */
  readonly ipv4Prefixes: readonly string[];
}

function countOf(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 64) {
    throw eniError('InvalidInput', `${what} must be an integer in 1..64, got ${value}`);
  }
  return value;
}

/** A top-up: exactly one `AssignPrivateIpAddresses` call. Validates before sending. */
export async function assignIpv4(ec2: Ec2Api, eniId: string, request: AssignRequest): Promise<Assigned> {
  checkEniId(eniId);
  const input =
    'ipv4Count' in request
      ? { NetworkInterfaceId: eniId, SecondaryPrivateIpAddressCount: countOf(request.ipv4Count, 'ipv4Count') }
      : { NetworkInterfaceId: eniId, Ipv4PrefixCount: countOf(request.prefixCount, 'prefixCount') };
  const out = await ec2.call('AssignPrivateIpAddresses', input);
  const addresses = (out.AssignedPrivateIpAddresses ?? []).flatMap((a) =>
    a.PrivateIpAddress === undefined ? [] : [a.PrivateIpAddress],
  );
  const prefixes = (out.AssignedIpv4Prefixes ?? []).flatMap((p) =>
    p.Ipv4Prefix === undefined ? [] : [p.Ipv4Prefix],
  );
  const wanted = 'ipv4Count' in request ? request.ipv4Count : request.prefixCount;
  const got = 'ipv4Count' in request ? addresses.length : prefixes.length;
  if (
    got !== wanted ||
    addresses.some((a) => ipv4(a) === undefined) ||
    prefixes.some((p) => ipv4Cidr(p) === undefined)
  ) {
    throw eniError(
      'Ec2InvalidResponse',
      `AssignPrivateIpAddresses on ${eniId} returned ${got} of ${wanted}`,
      {
        action: 'AssignPrivateIpAddresses',
      },
    );
  }
  return { ipv4Addresses: addresses, ipv4Prefixes: prefixes };
}

/**
 * Delegates `count` IPv6 /80 prefixes (1–64) to an ENI in one `AssignIpv6Addresses` call (`Ipv6PrefixCount`),
 * as the reference's IPv6 mode does for the primary ENI. Returns the new prefixes; throws `Ec2InvalidResponse`
 * when EC2 returns another number of them or anything but /80s.
 */
export async function assignIpv6Prefixes(ec2: Ec2Api, eniId: string, count: number): Promise<string[]> {
  checkEniId(eniId);
  const wanted = countOf(count, 'prefixCount');
  const out = await ec2.call('AssignIpv6Addresses', { NetworkInterfaceId: eniId, Ipv6PrefixCount: wanted });
  const prefixes = out.AssignedIpv6Prefixes ?? [];
  if (prefixes.length !== wanted || prefixes.some((p) => !ipv6Cidr(p)?.endsWith('/80'))) {
    throw eniError(
      'Ec2InvalidResponse',
      `AssignIpv6Addresses on ${eniId} returned ${prefixes.length} /80 prefixes of ${wanted}`,
      { action: 'AssignIpv6Addresses' },
    );
  }
  return [...prefixes];
}

/** Releases addresses or prefixes from an ENI in one `UnassignPrivateIpAddresses` call. Validates before sending. */
export async function unassignIpv4(ec2: Ec2Api, eniId: string, request: UnassignRequest): Promise<void> {
  checkEniId(eniId);
  const [values, check, what] =
    'ipv4Addresses' in request
      ? [request.ipv4Addresses, ipv4, 'IPv4 address']
      : [request.ipv4Prefixes, (v: string) => (ipv4Cidr(v)?.endsWith('/28') ? v : undefined), '/28 prefix'];
  if (values.length === 0) throw eniError('InvalidInput', `nothing to unassign from ${eniId}`);
  const bad = values.find((v) => check(v) === undefined);
  if (bad !== undefined) throw eniError('InvalidInput', `not an ${what}: ${JSON.stringify(bad)}`);
  await ec2.call(
    'UnassignPrivateIpAddresses',
    'ipv4Addresses' in request
      ? { NetworkInterfaceId: eniId, PrivateIpAddresses: [...values] }
      : { NetworkInterfaceId: eniId, Ipv4Prefixes: [...values] },
  );
}
