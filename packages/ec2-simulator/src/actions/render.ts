import type { AssignedAddress, Eni } from '../model.js';
import type { Ec2State } from '../state.js';
import type { XmlObject } from '../xml.js';
import { isoTime, tagSet } from './common.js';

const visible = (list: readonly AssignedAddress[], now: number) => list.filter((a) => a.visibleAt <= now);

/** The attachment status EC2 reports now. */
export function attachmentStatus(eni: Eni, now: number): string | undefined {
  const a = eni.attachment;
  if (!a) return undefined;
  if (a.detachingUntil !== undefined) return 'detaching';
  return now < a.attachedAt ? 'attaching' : 'attached';
}

/** Renders an ENI as EC2's `NetworkInterface` (DescribeNetworkInterfaces, CreateNetworkInterface). */
export function renderEni(state: Ec2State, eni: Eni): XmlObject {
  const now = state.now();
  const sg = (id: string) => ({ groupId: id, groupName: state.securityGroup(id)?.name ?? id });
  const a = eni.attachment;
  const dns = (ip: string) => `ip-${ip.replaceAll('.', '-')}.ec2.internal`;
  const ips = visible(eni.privateIps, now);
  const primary = eni.privateIps[0]!.value;
  return {
    attachment: a
      ? {
          attachTime: isoTime(a.attachTime),
          attachmentId: a.id,
          deleteOnTermination: a.deleteOnTermination,
          deviceIndex: a.deviceIndex,
          networkCardIndex: a.networkCardIndex,
          instanceId: a.instanceId,
          instanceOwnerId: state.accountId,
          status: attachmentStatus(eni, now),
        }
      : undefined,
    availabilityZone: eni.availabilityZone,
    description: eni.description,
    groupSet: eni.groups.map(sg),
    interfaceType: eni.interfaceType,
    ipv6AddressesSet: visible(eni.ipv6Addresses, now).map((x) => ({
      ipv6Address: x.value,
      isPrimaryIpv6: false,
    })),
    macAddress: eni.mac,
    networkInterfaceId: eni.id,
    ownerId: state.accountId,
    privateDnsName: dns(primary),
    privateIpAddress: primary,
    privateIpAddressesSet: ips.map((x) => ({
      primary: x.value === primary,
      privateDnsName: dns(x.value),
      privateIpAddress: x.value,
    })),
    ipv4PrefixSet: visible(eni.ipv4Prefixes, now).map((x) => ({ ipv4Prefix: x.value })),
    ipv6PrefixSet: visible(eni.ipv6Prefixes, now).map((x) => ({ ipv6Prefix: x.value })),
    requesterManaged: false,
    sourceDestCheck: eni.sourceDestCheck,
    status: a ? 'in-use' : 'available',
    subnetId: eni.subnetId,
    tagSet: tagSet(eni.tags),
    vpcId: eni.vpcId,
  };
}
