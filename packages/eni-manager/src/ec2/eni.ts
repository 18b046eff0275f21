import type { NetworkInterface } from '@aws-sdk/client-ec2';
import { eniError } from '../errors.js';

/** An ENI's attachment to an instance. */
export interface Ec2EniAttachment {
  /** `eni-attach-…` id. */
  readonly attachmentId: string;
  /** The instance. */
  readonly instanceId: string | undefined;
  /** Device index on its network card. */
  readonly deviceIndex: number;
  /** Network card index (0 when EC2 leaves it out). */
  readonly networkCardIndex: number;
  /** `attaching`, `attached`, `detaching`, … */
  readonly status: string;
  /** Whether terminating the instance deletes the ENI. */
  readonly deleteOnTermination: boolean;
}

/** An ENI as EC2's DescribeNetworkInterfaces reports it, validated and flattened. */
export interface Ec2Eni {
  /** `eni-…` id. */
  readonly eniId: string;
  /** MAC address, lower case. */
  readonly mac: string;
  /** `available`, `in-use`, `attaching`, `detaching`, … */
  readonly status: string;
  /** Subnet id. */
  readonly subnetId: string;
  /** VPC id. */
  readonly vpcId: string;
  /** Availability zone. */
  readonly availabilityZone: string | undefined;
  /** Description (`aws-K8S-<instance>` for ENIs this package created). */
  readonly description: string;
  /** `interface`, `trunk`, `efa`, `efa-only`, `branch`, … */
  readonly interfaceType: string;
  /** Primary private address. */
  readonly primaryIpv4: string;
  /** Secondary private addresses (the primary excluded). */
  readonly secondaryIpv4: readonly string[];
  /** Delegated IPv4 prefixes. */
  readonly ipv4Prefixes: readonly string[];
  /** IPv6 addresses. */
  readonly ipv6Addresses: readonly string[];
  /** Delegated IPv6 /80 prefixes. */
  readonly ipv6Prefixes: readonly string[];
  /** Security group ids. */
  readonly securityGroupIds: readonly string[];
  /** Tags as a map. */
  readonly tags: Readonly<Record<string, string>>;
  /** The attachment, when attached (or attaching/detaching). */
  readonly attachment: Ec2EniAttachment | undefined;
}

function need<T>(value: T | undefined | null, what: string, action: string): T {
  if (value === undefined || value === null || value === '') {
    throw eniError('Ec2InvalidResponse', `${action} returned a network interface without ${what}`, {
      action,
    });
  }
  return value;
}

/** Flattens the SDK's `NetworkInterface`; throws `Ec2InvalidResponse` when a required member is missing. */
export function toEc2Eni(ni: NetworkInterface, action: string): Ec2Eni {
  const eniId = need(ni.NetworkInterfaceId, 'NetworkInterfaceId', action);
  const addresses = ni.PrivateIpAddresses ?? [];
  const primary = addresses.find((a) => a.Primary === true)?.PrivateIpAddress ?? ni.PrivateIpAddress;
  const tags: Record<string, string> = {};
  for (const tag of ni.TagSet ?? []) if (tag.Key !== undefined) tags[tag.Key] = tag.Value ?? '';
  const att = ni.Attachment;
  return {
    eniId,
    mac: need(ni.MacAddress, 'MacAddress', action).toLowerCase(),
    status: need(ni.Status, 'Status', action),
    subnetId: need(ni.SubnetId, 'SubnetId', action),
    vpcId: need(ni.VpcId, 'VpcId', action),
    availabilityZone: ni.AvailabilityZone,
    description: ni.Description ?? '',
    interfaceType: ni.InterfaceType ?? 'interface',
    primaryIpv4: need(primary, 'a primary private address', action),
    secondaryIpv4: addresses
      .filter((a) => a.Primary !== true && a.PrivateIpAddress !== undefined && a.PrivateIpAddress !== primary)
      .map((a) => a.PrivateIpAddress!),
    ipv4Prefixes: (ni.Ipv4Prefixes ?? []).flatMap((p) => (p.Ipv4Prefix === undefined ? [] : [p.Ipv4Prefix])),
    ipv6Addresses: (ni.Ipv6Addresses ?? []).flatMap((a) =>
      a.Ipv6Address === undefined ? [] : [a.Ipv6Address],
    ),
    ipv6Prefixes: (ni.Ipv6Prefixes ?? []).flatMap((p) => (p.Ipv6Prefix === undefined ? [] : [p.Ipv6Prefix])),
    securityGroupIds: (ni.Groups ?? []).flatMap((g) => (g.GroupId === undefined ? [] : [g.GroupId])),
    tags,
    attachment:
      att?.AttachmentId === undefined
        ? undefined
        : {
            attachmentId: att.AttachmentId,
            instanceId: att.InstanceId,
            deviceIndex: need(att.DeviceIndex, 'Attachment.DeviceIndex', action),
            networkCardIndex: att.NetworkCardIndex ?? 0,
            status: att.Status ?? 'attached',
            deleteOnTermination: att.DeleteOnTermination === true,
          },
  };
}
