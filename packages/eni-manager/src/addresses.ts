import { checkEniId } from './describe.js';
import type { Ec2Api } from './ec2/client.js';
import { Ec2Fields, invalidEc2Response } from './ec2/response.js';
import { eniError } from './errors.js';
import { ipv4, ipv4Prefix, ipv6Prefix } from './shapes.js';

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
  const f = new Ec2Fields('AssignPrivateIpAddresses');
  const addresses = f.list('AssignedPrivateIpAddresses', out.AssignedPrivateIpAddresses, (a, af) =>
    af.required('PrivateIpAddress', a.PrivateIpAddress, ipv4, 'an IPv4 address'),
  );
  const prefixes = f.list('AssignedIpv4Prefixes', out.AssignedIpv4Prefixes, (p, pf) =>
    pf.required('Ipv4Prefix', p.Ipv4Prefix, ipv4Prefix, 'an IPv4 /28 prefix'),
  );
  const [field, wanted, got] =
    'ipv4Count' in request
      ? ['AssignedPrivateIpAddresses', request.ipv4Count, addresses.length]
      : ['AssignedIpv4Prefixes', request.prefixCount, prefixes.length];
  if (got !== wanted) {
    throw invalidEc2Response(
      'AssignPrivateIpAddresses',
      field,
      `${got} ${field} for ${eniId}, not ${wanted}`,
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
  const f = new Ec2Fields('AssignIpv6Addresses');
  const prefixes = f.list('AssignedIpv6Prefixes', out.AssignedIpv6Prefixes, (p, pf) =>
    pf.required('', p, ipv6Prefix, 'an IPv6 /80 prefix'),
  );
  if (prefixes.length !== wanted) {
    throw invalidEc2Response(
      'AssignIpv6Addresses',
      'AssignedIpv6Prefixes',
      `${prefixes.length} AssignedIpv6Prefixes for ${eniId}, not ${wanted}`,
    );
  }
  return prefixes;
}

/** Releases addresses or prefixes from an ENI in one `UnassignPrivateIpAddresses` call. Validates before sending. */
export async function unassignIpv4(ec2: Ec2Api, eniId: string, request: UnassignRequest): Promise<void> {
  checkEniId(eniId);
  const [values, check, what] =
    'ipv4Addresses' in request
      ? [request.ipv4Addresses, ipv4, 'IPv4 address']
      : [request.ipv4Prefixes, ipv4Prefix, '/28 prefix'];
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
