import type { NetworkInterface } from '@aws-sdk/client-ec2';
import { awsId, index, ipv4, ipv4Prefix, ipv6, ipv6Prefix, mac, zone } from '../shapes.js';
import { Ec2Fields } from './response.js';

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

/**
 * Flattens the SDK's `NetworkInterface` from `action`'s response after checking every member this package uses
 * with the shape checks IMDS values pass (ids by prefix, MAC, IPv4/IPv6 addresses, /28 and /80 prefixes, zone,
 * device and network card indexes). Throws `Ec2InvalidResponse` naming `action` and the field (its path under
 * `path`, e.g. `NetworkInterfaces[2].MacAddress`) when one is missing or malformed.
 *
 * @param ni The interface as the SDK returned it.
 * @param action The EC2 action that returned it.
 * @param path Where it sits in the response: `NetworkInterface` (CreateNetworkInterface) or `NetworkInterfaces[i]`.
 */
export function toEc2Eni(ni: NetworkInterface, action: string, path = 'NetworkInterface'): Ec2Eni {
  const f = new Ec2Fields(action, path);
  const eniId = f.required('NetworkInterfaceId', ni.NetworkInterfaceId, (v) => awsId('eni', v), 'an ENI id');
  const addresses = f.list('PrivateIpAddresses', ni.PrivateIpAddresses, (a, af) => ({
    address: af.required('PrivateIpAddress', a.PrivateIpAddress, ipv4, 'an IPv4 address'),
    primary: a.Primary === true,
  }));
  const primaryIpv4 =
    addresses.find((a) => a.primary)?.address ??
    f.required('PrivateIpAddress', ni.PrivateIpAddress, ipv4, 'an IPv4 address');
  const tags: Record<string, string> = {};
  for (const tag of ni.TagSet ?? []) if (tag.Key !== undefined) tags[tag.Key] = tag.Value ?? '';
  const att = ni.Attachment;
  const af = f.at('Attachment');
  return {
    eniId,
    // EC2 writes MACs in lower case; the check below then holds it to the form IMDS uses.
    mac: f.required('MacAddress', ni.MacAddress?.toLowerCase(), mac, 'a MAC address'),
    status: f.present('Status', ni.Status),
    subnetId: f.required('SubnetId', ni.SubnetId, (v) => awsId('subnet', v), 'a subnet id'),
    vpcId: f.required('VpcId', ni.VpcId, (v) => awsId('vpc', v), 'a VPC id'),
    availabilityZone: f.optional('AvailabilityZone', ni.AvailabilityZone, zone, 'an availability zone'),
    description: ni.Description ?? '',
    interfaceType: ni.InterfaceType ?? 'interface',
    primaryIpv4,
    secondaryIpv4: addresses.filter((a) => !a.primary && a.address !== primaryIpv4).map((a) => a.address),
    ipv4Prefixes: f.list('Ipv4Prefixes', ni.Ipv4Prefixes, (p, pf) =>
      pf.required('Ipv4Prefix', p.Ipv4Prefix, ipv4Prefix, 'an IPv4 /28 prefix'),
    ),
    ipv6Addresses: f.list('Ipv6Addresses', ni.Ipv6Addresses, (a, pf) =>
      pf.required('Ipv6Address', a.Ipv6Address, ipv6, 'an IPv6 address'),
    ),
    ipv6Prefixes: f.list('Ipv6Prefixes', ni.Ipv6Prefixes, (p, pf) =>
      pf.required('Ipv6Prefix', p.Ipv6Prefix, ipv6Prefix, 'an IPv6 /80 prefix'),
    ),
    securityGroupIds: f.list('Groups', ni.Groups, (g, gf) =>
      gf.required('GroupId', g.GroupId, (v) => awsId('sg', v), 'a security group id'),
    ),
    tags,
    attachment:
      att?.AttachmentId === undefined
        ? undefined
        : {
            attachmentId: af.required(
              'AttachmentId',
              att.AttachmentId,
              (v) => awsId('eni-attach', v),
              'an attachment id',
            ),
            instanceId: af.optional('InstanceId', att.InstanceId, (v) => awsId('i', v), 'an instance id'),
            deviceIndex: af.required('DeviceIndex', att.DeviceIndex, index, 'a device index'),
            networkCardIndex:
              af.optional('NetworkCardIndex', att.NetworkCardIndex, index, 'a network card index') ?? 0,
            status: att.Status ?? 'attached',
            deleteOnTermination: att.DeleteOnTermination === true,
          },
  };
}
