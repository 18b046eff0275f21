import type { AddressAllocation } from './address-pool.js';
import type { RandomSource } from './clock.js';
import { Ec2SimError } from './errors.js';
import {
  formatIpv4,
  formatIpv4Cidr,
  formatIpv6,
  formatIpv6Cidr,
  parseIpv4,
  parseIpv4Cidr,
  parseIpv6,
  parseIpv6Cidr,
} from './ip.js';
import type { Subnet } from './model.js';

/** How free IPv4 addresses are picked. */
export interface AddressPick {
  /** Sequential or random. */
  readonly how: AddressAllocation;
  /** Random source for random picks. */
  readonly random: RandomSource;
}

/** Undo log so a failing multi-step mutation leaves state unchanged. */
export class Undo {
  readonly #steps: (() => void)[] = [];

  /** Records a step that reverses one change. */
  add(step: () => void): void {
    this.#steps.push(step);
  }

  /** Reverses every recorded change, newest first. */
  run(): void {
    for (const s of this.#steps.reverse()) s();
  }
}

/** Rejects more than one way of asking for IPv6 (`InvalidParameterCombination`). */
export function checkIpv6Modes(req: {
  ipv6Addresses?: readonly string[] | undefined;
  ipv6Count?: number | undefined;
  ipv6Prefixes?: readonly string[] | undefined;
  ipv6PrefixCount?: number | undefined;
}): void {
  const n = [
    (req.ipv6Addresses?.length ?? 0) > 0,
    req.ipv6Count !== undefined,
    (req.ipv6Prefixes?.length ?? 0) > 0,
    req.ipv6PrefixCount !== undefined,
  ].filter(Boolean).length;
  if (n > 1) {
    throw new Ec2SimError(
      'InvalidParameterCombination',
      'Specify only one of Ipv6Addresses, Ipv6AddressCount, Ipv6Prefixes and Ipv6PrefixCount.',
    );
  }
}

/** Takes one explicit IPv4 address of the subnet (checked: inside, not reserved, free). */
export function takeIpv4(subnet: Subnet, text: string, undo: Undo): string {
  const n = parseIpv4(text);
  if (n === undefined) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv4 address ${text}`);
  if (!subnet.ipv4.contains(n)) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Address ${text} does not fall within the subnet's address range (${subnet.cidrBlock})`,
    );
  }
  if (subnet.ipv4.isReserved(n)) {
    throw new Ec2SimError('InvalidParameterValue', `Address ${text} is in subnet's reserved address range`);
  }
  if (subnet.ipv4.isUsed(n)) {
    throw new Ec2SimError('InvalidIPAddress.InUse', `The specified address ${text} is already in use.`);
  }
  subnet.ipv4.take(n);
  undo.add(() => subnet.ipv4.release(n));
  return formatIpv4(n);
}

/** Picks `count` free IPv4 addresses. */
export function allocIpv4(subnet: Subnet, count: number, pick: AddressPick, undo: Undo): number[] {
  if (count === 0) return [];
  const got = subnet.ipv4.allocate(count, pick.how, pick.random, subnet.id);
  undo.add(() => {
    for (const a of got) subnet.ipv4.release(a);
  });
  return got;
}

/** Takes one explicit, aligned, completely free /28. */
export function takeIpv4Prefix(subnet: Subnet, text: string, undo: Undo): string {
  const c = parseIpv4Cidr(text);
  if (c?.length !== 28)
    throw new Ec2SimError('InvalidParameterValue', `Invalid IPv4 prefix ${text} (expecting an aligned /28)`);
  if (!subnet.ipv4.contains(c.base) || !subnet.ipv4.contains(c.base + 15)) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Prefix ${text} does not fall within subnet ${subnet.cidrBlock}`,
    );
  }
  if (!subnet.ipv4.prefixFree(c.base)) {
    throw new Ec2SimError(
      'InvalidIPAddress.InUse',
      `The prefix ${text} overlaps addresses in use or reserved.`,
    );
  }
  subnet.ipv4.takePrefix(c.base);
  undo.add(() => subnet.ipv4.releasePrefix(c.base));
  return formatIpv4Cidr(c);
}

/** Picks `count` aligned free /28 prefixes. */
export function allocIpv4Prefixes(subnet: Subnet, count: number, undo: Undo): string[] {
  if (count === 0) return [];
  const got = subnet.ipv4.allocatePrefixes(count);
  undo.add(() => {
    for (const b of got) subnet.ipv4.releasePrefix(b);
  });
  return got.map((base) => formatIpv4Cidr({ base, length: 28 }));
}

/** Takes explicit IPv6 addresses and /80 prefixes and picks counted ones, all or nothing. */
export function allocIpv6(
  subnet: Subnet,
  req: {
    ipv6Addresses?: readonly string[] | undefined;
    ipv6Count?: number | undefined;
    ipv6Prefixes?: readonly string[] | undefined;
    ipv6PrefixCount?: number | undefined;
  },
  undo: Undo,
): { addresses: string[]; prefixes: string[] } {
  checkIpv6Modes(req);
  const wants =
    (req.ipv6Addresses?.length ?? 0) +
    (req.ipv6Count ?? 0) +
    (req.ipv6Prefixes?.length ?? 0) +
    (req.ipv6PrefixCount ?? 0);
  if (wants === 0) return { addresses: [], prefixes: [] };
  const pool = subnet.ipv6;
  if (!pool) {
    throw new Ec2SimError('InvalidParameterValue', `Subnet ${subnet.id} does not have an IPv6 CIDR block.`);
  }
  const addresses: string[] = [];
  for (const t of req.ipv6Addresses ?? []) {
    const n = parseIpv6(t);
    if (n === undefined) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 address ${t}`);
    if (!pool.contains(n))
      throw new Ec2SimError('InvalidParameterValue', `Address ${t} is not in subnet ${subnet.ipv6CidrBlock}`);
    if (pool.isUsed(n))
      throw new Ec2SimError('InvalidIPAddress.InUse', `The specified address ${t} is already in use.`);
    pool.take(n);
    undo.add(() => pool.release(n));
    addresses.push(formatIpv6(n));
  }
  const picked = pool.allocate(req.ipv6Count ?? 0);
  undo.add(() => {
    for (const a of picked) pool.release(a);
  });
  addresses.push(...picked.map(formatIpv6));
  const prefixes: string[] = [];
  for (const t of req.ipv6Prefixes ?? []) {
    const c = parseIpv6Cidr(t);
    if (c?.length !== 80)
      throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 prefix ${t} (expecting a /80)`);
    if (!pool.prefixFree(c.base))
      throw new Ec2SimError('InvalidIPAddress.InUse', `The prefix ${t} is in use or outside the subnet.`);
    pool.takePrefix(c.base);
    undo.add(() => pool.releasePrefix(c.base));
    prefixes.push(formatIpv6Cidr(c));
  }
  const got = pool.allocatePrefixes(req.ipv6PrefixCount ?? 0);
  undo.add(() => {
    for (const b of got) pool.releasePrefix(b);
  });
  prefixes.push(...got.map((base) => formatIpv6Cidr({ base, length: 80 })));
  return { addresses, prefixes };
}
