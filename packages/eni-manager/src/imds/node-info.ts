/** One ENI as IMDS shows it under `network/interfaces/macs/<mac>/`. */
export interface ImdsEni {
  /** MAC address, lower case. */
  readonly mac: string;
  /** `eni-…` id. */
  readonly eniId: string;
  /** `device-number` (0 for the primary ENI). */
  readonly deviceNumber: number;
  /** `network-card` (0 when IMDS has no such field). */
  readonly networkCard: number;
  /** `subnet-id`. */
  readonly subnetId: string;
  /** `subnet-ipv4-cidr-block`. */
  readonly subnetIpv4Cidr: string;
  /** `vpc-id`. */
  readonly vpcId: string;
  /** `vpc-ipv4-cidr-blocks` (primary CIDR first). */
  readonly vpcIpv4Cidrs: readonly string[];
  /** `security-group-ids`. */
  readonly securityGroupIds: readonly string[];
  /** `local-ipv4s`: the ENI's primary address first, then its secondary addresses. */
  readonly ipv4Addresses: readonly string[];
  /** `ipv4-prefix`: delegated /28 prefixes. */
  readonly ipv4Prefixes: readonly string[];
  /** `ipv6s`. */
  readonly ipv6Addresses: readonly string[];
  /** `ipv6-prefix`: delegated /80 prefixes. */
  readonly ipv6Prefixes: readonly string[];
  /** `subnet-ipv6-cidr-blocks` (empty when the subnet has no IPv6 CIDR). */
  readonly subnetIpv6Cidrs: readonly string[];
  /** `vpc-ipv6-cidr-blocks` (empty when the VPC has no IPv6 block). */
  readonly vpcIpv6Cidrs: readonly string[];
}

/** What a node learns about itself from IMDS at start-up. */
export interface NodeInfo {
  /** `instance-id`. */
  readonly instanceId: string;
  /** `instance-type`, e.g. `m5.large`. */
  readonly instanceType: string;
  /** `placement/availability-zone`. */
  readonly availabilityZone: string;
  /** `placement/region`, or the zone without its letter when IMDS lacks that path. */
  readonly region: string;
  /** `local-ipv4`: the primary address of the primary ENI. */
  readonly localIpv4: string;
  /** `ipv6`: the primary ENI's IPv6 address, when it has one. */
  readonly localIpv6: string | undefined;
  /** `mac`: the primary ENI's MAC. */
  readonly primaryMac: string;
  /** The primary ENI (the one with {@link NodeInfo.primaryMac}). */
  readonly primaryEni: ImdsEni;
  /** Every attached ENI, ordered by network card, then device number. */
  readonly enis: readonly ImdsEni[];
}
