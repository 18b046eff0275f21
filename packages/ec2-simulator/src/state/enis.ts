import {
  allocIpv4,
  allocIpv4Prefixes,
  allocIpv6,
  checkIpv6Modes,
  takeIpv4,
  takeIpv4Prefix,
  Undo,
} from '../allocation.js';
import { Ec2SimError } from '../errors.js';
import { formatIpv4, parseIpv4, parseIpv4Cidr, parseIpv6, parseIpv6Cidr } from '../ip.js';
import type { AssignedAddress, Eni } from '../model.js';
import type { CreateEniRequest } from '../state-types.js';
import { type StateStore, UNATTACHED_IPV4_LIMIT } from './store.js';
import { associationOfBranch, associationsOf, dropAssociation } from './trunks.js';

/**
 * CreateNetworkInterface. With a `clientToken` seen before: the same request returns the same ENI, a
 * different one fails with `IdempotentParameterMismatch`.
 */
export function createNetworkInterface(
  store: StateStore,
  req: CreateEniRequest,
  internal: { primary?: boolean } = {},
): Eni {
  store.settle();
  const seen = store.clientTokens.replay(req.clientToken, req);
  const existing = seen.id === undefined ? undefined : store.enis.get(seen.id);
  if (existing) return existing;
  const subnet = store.requireSubnet(req.subnetId);
  const groups = store.checkGroups(req.groups, subnet.vpcId);
  const tags = store.checkTags(req.tags ?? []);
  if (req.description !== undefined && req.description.length > 255) {
    throw new Ec2SimError('InvalidParameterValue', 'Description must be at most 255 characters.');
  }
  const ipv4Modes = [
    req.secondaryCount !== undefined,
    (req.addresses ?? []).some((a) => !a.primary) || (req.addresses?.length ?? 0) > 1,
    req.ipv4Prefixes !== undefined && req.ipv4Prefixes.length > 0,
    req.ipv4PrefixCount !== undefined,
  ].filter(Boolean).length;
  if (ipv4Modes > 1) {
    throw new Ec2SimError(
      'InvalidParameterCombination',
      'Specify only one of SecondaryPrivateIpAddressCount, PrivateIpAddresses, Ipv4Prefixes and Ipv4PrefixCount.',
    );
  }
  checkIpv6Modes(req);
  const explicitPrimary = (req.addresses ?? []).filter((a) => a.primary);
  if (explicitPrimary.length > 1 || (explicitPrimary.length === 1 && req.primaryAddress !== undefined)) {
    if (!(explicitPrimary.length === 1 && explicitPrimary[0]!.address === req.primaryAddress)) {
      throw new Ec2SimError('InvalidParameterValue', 'Only one primary private IP address can be specified.');
    }
  }
  const primaryText = req.primaryAddress ?? explicitPrimary[0]?.address;
  const secondaryTexts = (req.addresses ?? []).filter((a) => !a.primary).map((a) => a.address);
  const slots =
    1 +
    secondaryTexts.length +
    (req.secondaryCount ?? 0) +
    (req.ipv4Prefixes?.length ?? 0) +
    (req.ipv4PrefixCount ?? 0);
  if (slots > UNATTACHED_IPV4_LIMIT) {
    throw new Ec2SimError(
      'PrivateIpAddressLimitExceeded',
      `Number of private addresses ${slots} exceeds limit of ${UNATTACHED_IPV4_LIMIT}.`,
    );
  }
  const undo = new Undo();
  try {
    const now = store.now();
    const visibleAt = now + store.timing.eventualConsistencyMs;
    const mk = (value: string): AssignedAddress => ({
      value,
      visibleAt,
      imdsVisibleAt: Math.max(visibleAt, now + store.timing.imdsDelayMs),
    });
    const privateIps: AssignedAddress[] = [];
    if (primaryText !== undefined) privateIps.push(mk(takeIpv4(subnet, primaryText, undo)));
    else privateIps.push(mk(formatIpv4(allocIpv4(subnet, 1, store.pick, undo)[0]!)));
    for (const t of secondaryTexts) privateIps.push(mk(takeIpv4(subnet, t, undo)));
    for (const a of allocIpv4(subnet, req.secondaryCount ?? 0, store.pick, undo))
      privateIps.push(mk(formatIpv4(a)));
    const ipv4Prefixes = [
      ...(req.ipv4Prefixes ?? []).map((p) => takeIpv4Prefix(subnet, p, undo)),
      ...allocIpv4Prefixes(subnet, req.ipv4PrefixCount ?? 0, undo),
    ].map(mk);
    const v6 = allocIpv6(subnet, req, undo);
    const eni: Eni = {
      id: store.ids.id('eni'),
      subnetId: subnet.id,
      vpcId: subnet.vpcId,
      availabilityZone: subnet.availabilityZone,
      mac: store.ids.mac(),
      interfaceType: req.interfaceType ?? 'interface',
      description: req.description ?? '',
      groups,
      tags,
      sourceDestCheck: true,
      privateIps,
      ipv4Prefixes,
      ipv6Addresses: v6.addresses.map(mk),
      ipv6Prefixes: v6.prefixes.map(mk),
      attachment: undefined,
      createdAt: now,
      visibleAt: internal.primary ? now : visibleAt,
      primary: internal.primary ?? false,
    };
    store.enis.set(eni.id, eni);
    store.clientTokens.remember(req.clientToken, seen.fingerprint, eni.id);
    store.emit({
      type: 'eni-created',
      eniId: eni.id,
      subnetId: eni.subnetId,
      vpcId: eni.vpcId,
      mac: eni.mac,
      interfaceType: eni.interfaceType,
      addresses: store.addressesOf(eni),
    });
    return eni;
  } catch (e) {
    undo.run();
    throw e;
  }
}

/** DeleteNetworkInterface: only `available` interfaces; frees every address and prefix. */
export function deleteNetworkInterface(store: StateStore, eniId: string): void {
  const eni = store.requireEni(eniId);
  if (eni.attachment) {
    throw new Ec2SimError(
      'InvalidNetworkInterface.InUse',
      `The network interface ${eni.id} is currently in use.`,
    );
  }
  if (associationsOf(store, eni.id).length > 0) {
    throw new Ec2SimError(
      'DependencyViolation',
      `Trunk interface ${eni.id} still has branch interfaces associated.`,
    );
  }
  const association = associationOfBranch(store, eni.id);
  if (association) dropAssociation(store, association);
  const subnet = store.requireSubnet(eni.subnetId);
  for (const a of eni.privateIps) subnet.ipv4.release(parseIpv4(a.value)!);
  for (const p of eni.ipv4Prefixes) subnet.ipv4.releasePrefix(parseIpv4Cidr(p.value)!.base);
  for (const a of eni.ipv6Addresses) subnet.ipv6?.release(parseIpv6(a.value)!);
  for (const p of eni.ipv6Prefixes) subnet.ipv6?.releasePrefix(parseIpv6Cidr(p.value)!.base);
  store.enis.delete(eni.id);
  store.emit({ type: 'eni-deleted', eniId: eni.id, mac: eni.mac, addresses: store.addressesOf(eni) });
}

/** ModifyNetworkInterfaceAttribute (Attachment.DeleteOnTermination). */
export function setDeleteOnTermination(
  store: StateStore,
  eniId: string,
  attachmentId: string,
  value: boolean,
): void {
  const eni = store.requireEni(eniId);
  if (eni.attachment?.id !== attachmentId) {
    throw new Ec2SimError(
      'InvalidAttachmentID.NotFound',
      `The attachment ID '${attachmentId}' does not exist`,
    );
  }
  eni.attachment.deleteOnTermination = value;
}

/** ModifyNetworkInterfaceAttribute (Groups). */
export function setGroups(store: StateStore, eniId: string, groups: readonly string[]): void {
  const eni = store.requireEni(eniId);
  const checked = store.checkGroups(groups, eni.vpcId);
  eni.groups = checked;
  store.emit({ type: 'security-groups-changed', eniId: eni.id, groups: checked });
}

/** ModifyNetworkInterfaceAttribute (Description / SourceDestCheck). */
export function setAttribute(
  store: StateStore,
  eniId: string,
  attr: { description?: string; sourceDestCheck?: boolean },
): void {
  const eni = store.requireEni(eniId);
  if (attr.description !== undefined) {
    if (attr.description.length > 255) {
      throw new Ec2SimError('InvalidParameterValue', 'Description must be at most 255 characters.');
    }
    eni.description = attr.description;
  }
  if (attr.sourceDestCheck !== undefined) eni.sourceDestCheck = attr.sourceDestCheck;
}
