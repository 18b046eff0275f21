import { allocIpv4, allocIpv4Prefixes, allocIpv6, takeIpv4, takeIpv4Prefix, Undo } from '../allocation.js';
import { Ec2SimError } from '../errors.js';
import {
  formatIpv4,
  formatIpv6,
  formatIpv6Cidr,
  parseIpv4,
  parseIpv4Cidr,
  parseIpv6,
  parseIpv6Cidr,
} from '../ip.js';
import type { AssignedAddress, Eni } from '../model.js';
import type { AssignIpv4Request, AssignIpv6Request, AssignResult } from '../state-types.js';
import { NO_CHANGE, type StateStore, UNATTACHED_IPV4_LIMIT } from './store.js';

/** AssignPrivateIpAddresses: returns the addresses and prefixes assigned. */
export function assignPrivateIps(store: StateStore, eniId: string, req: AssignIpv4Request): AssignResult {
  const eni = store.requireEni(eniId);
  const subnet = store.requireSubnet(eni.subnetId);
  const limit = ipv4Limit(store, eni);
  const wanted =
    (req.addresses?.length ?? 0) + (req.count ?? 0) + (req.prefixes?.length ?? 0) + (req.prefixCount ?? 0);
  const have = eni.privateIps.length + eni.ipv4Prefixes.length;
  if (have + wanted > limit) {
    throw new Ec2SimError(
      'PrivateIpAddressLimitExceeded',
      `Number of private addresses ${have + wanted} exceeds limit of ${limit} for interface ${eni.id}.`,
    );
  }
  const undo = new Undo();
  const moved: { from: Eni; address: AssignedAddress }[] = [];
  try {
    const addresses: string[] = [];
    for (const text of req.addresses ?? []) {
      const n = parseIpv4(text);
      if (n !== undefined && subnet.ipv4.contains(n) && subnet.ipv4.isUsed(n) && req.allowReassignment) {
        const holder = [...store.enis.values()].find(
          (e) => e.subnetId === subnet.id && e.privateIps.some((a, i) => i > 0 && a.value === text),
        );
        if (holder && holder !== eni) {
          const address = holder.privateIps.find((a) => a.value === text)!;
          moved.push({ from: holder, address });
          addresses.push(text);
          continue;
        }
      }
      addresses.push(takeIpv4(subnet, text, undo));
    }
    for (const a of allocIpv4(subnet, req.count ?? 0, store.pick, undo)) addresses.push(formatIpv4(a));
    const prefixes = [
      ...(req.prefixes ?? []).map((p) => takeIpv4Prefix(subnet, p, undo)),
      ...allocIpv4Prefixes(subnet, req.prefixCount ?? 0, undo),
    ];
    for (const m of moved) {
      m.from.privateIps = m.from.privateIps.filter((a) => a !== m.address);
      store.emit({
        type: 'addresses-unassigned',
        eniId: m.from.id,
        addresses: { ...NO_CHANGE, ipv4: [m.address.value] },
      });
    }
    const mk = store.assigned();
    eni.privateIps = [...eni.privateIps, ...addresses.map(mk)];
    eni.ipv4Prefixes = [...eni.ipv4Prefixes, ...prefixes.map(mk)];
    store.emit({
      type: 'addresses-assigned',
      eniId: eni.id,
      addresses: { ...NO_CHANGE, ipv4: addresses, ipv4Prefixes: prefixes },
    });
    return { addresses, prefixes };
  } catch (e) {
    undo.run();
    throw e;
  }
}

/** UnassignPrivateIpAddresses. Every address/prefix must be on the ENI; the primary cannot be removed. */
export function unassignPrivateIps(
  store: StateStore,
  eniId: string,
  addresses: readonly string[],
  prefixes: readonly string[],
): void {
  const eni = store.requireEni(eniId);
  const subnet = store.requireSubnet(eni.subnetId);
  for (const a of addresses) {
    const i = eni.privateIps.findIndex((p) => p.value === a);
    if (i < 0) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Some of the specified addresses are not assigned to interface ${eni.id}`,
      );
    }
    if (i === 0) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `The primary private IP address ${a} cannot be unassigned.`,
      );
    }
  }
  for (const p of prefixes) {
    if (!eni.ipv4Prefixes.some((x) => x.value === p)) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Some of the specified prefixes are not assigned to interface ${eni.id}`,
      );
    }
  }
  eni.privateIps = eni.privateIps.filter((p) => !addresses.includes(p.value));
  eni.ipv4Prefixes = eni.ipv4Prefixes.filter((p) => !prefixes.includes(p.value));
  for (const a of addresses) subnet.ipv4.release(parseIpv4(a)!);
  for (const p of prefixes) subnet.ipv4.releasePrefix(parseIpv4Cidr(p)!.base);
  store.emit({
    type: 'addresses-unassigned',
    eniId: eni.id,
    addresses: { ...NO_CHANGE, ipv4: [...addresses], ipv4Prefixes: [...prefixes] },
  });
}

/** AssignIpv6Addresses. */
export function assignIpv6(store: StateStore, eniId: string, req: AssignIpv6Request): AssignResult {
  const eni = store.requireEni(eniId);
  const subnet = store.requireSubnet(eni.subnetId);
  const limit = ipv6Limit(store, eni);
  const wanted =
    (req.addresses?.length ?? 0) + (req.count ?? 0) + (req.prefixes?.length ?? 0) + (req.prefixCount ?? 0);
  const have = eni.ipv6Addresses.length + eni.ipv6Prefixes.length;
  if (have + wanted > limit) {
    throw new Ec2SimError(
      'PrivateIpAddressLimitExceeded',
      `Number of IPv6 addresses ${have + wanted} exceeds limit of ${limit} for interface ${eni.id}.`,
    );
  }
  const undo = new Undo();
  try {
    const v6 = allocIpv6(
      subnet,
      {
        ipv6Addresses: req.addresses,
        ipv6Count: req.count,
        ipv6Prefixes: req.prefixes,
        ipv6PrefixCount: req.prefixCount,
      },
      undo,
    );
    const mk = store.assigned();
    eni.ipv6Addresses = [...eni.ipv6Addresses, ...v6.addresses.map(mk)];
    eni.ipv6Prefixes = [...eni.ipv6Prefixes, ...v6.prefixes.map(mk)];
    store.emit({
      type: 'addresses-assigned',
      eniId: eni.id,
      addresses: { ...NO_CHANGE, ipv6: v6.addresses, ipv6Prefixes: v6.prefixes },
    });
    return v6;
  } catch (e) {
    undo.run();
    throw e;
  }
}

/** UnassignIpv6Addresses. */
export function unassignIpv6(
  store: StateStore,
  eniId: string,
  addresses: readonly string[],
  prefixes: readonly string[],
): void {
  const eni = store.requireEni(eniId);
  const subnet = store.requireSubnet(eni.subnetId);
  const canon = (t: string): string => {
    const n = parseIpv6(t);
    if (n === undefined) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 address ${t}`);
    return formatIpv6(n);
  };
  const canonPrefix = (t: string): string => {
    const c = parseIpv6Cidr(t);
    if (!c) throw new Ec2SimError('InvalidParameterValue', `Invalid IPv6 prefix ${t}`);
    return formatIpv6Cidr(c);
  };
  const addrs = addresses.map(canon);
  const pfx = prefixes.map(canonPrefix);
  if (!addrs.every((a) => eni.ipv6Addresses.some((x) => x.value === a))) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Some of the specified addresses are not assigned to interface ${eni.id}`,
    );
  }
  if (!pfx.every((p) => eni.ipv6Prefixes.some((x) => x.value === p))) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Some of the specified prefixes are not assigned to interface ${eni.id}`,
    );
  }
  eni.ipv6Addresses = eni.ipv6Addresses.filter((x) => !addrs.includes(x.value));
  eni.ipv6Prefixes = eni.ipv6Prefixes.filter((x) => !pfx.includes(x.value));
  for (const a of addrs) subnet.ipv6?.release(parseIpv6(a)!);
  for (const p of pfx) subnet.ipv6?.releasePrefix(parseIpv6Cidr(p)!.base);
  store.emit({
    type: 'addresses-unassigned',
    eniId: eni.id,
    addresses: { ...NO_CHANGE, ipv6: addrs, ipv6Prefixes: pfx },
  });
}

function ipv4Limit(store: StateStore, eni: Eni): number {
  const inst = eni.attachment ? store.instances.get(eni.attachment.instanceId) : undefined;
  return inst ? inst.type.ipv4AddressesPerInterface : UNATTACHED_IPV4_LIMIT;
}

function ipv6Limit(store: StateStore, eni: Eni): number {
  const inst = eni.attachment ? store.instances.get(eni.attachment.instanceId) : undefined;
  return inst ? inst.type.ipv6AddressesPerInterface : UNATTACHED_IPV4_LIMIT;
}
