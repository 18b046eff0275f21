import type { Datastore } from '@vpc-cni-kit/datastore';
import type { ImdsEni } from '@vpc-cni-kit/eni-manager';
import type { Logger } from './logger.js';
import { StartError } from './start-error.js';

/** What {@link primaryIpv6Prefix} reads and may change. */
export interface PrimaryPrefixDeps {
  /** The primary ENI as IMDS shows it. */
  primary: ImdsEni;
  /** The primary ENI's /80 prefixes as EC2 lists them; absent in IMDS-only mode (IMDS's list is used). */
  describePrefixes?: () => Promise<readonly string[]>;
  /** Delegates one /80 to the primary ENI; absent when the daemon may not change EC2 state. */
  assignPrefix?: () => Promise<readonly string[]>;
  log: Logger;
}

/**
 * IPv6 mode needs the primary ENI in a subnet with an IPv6 CIDR: checked right after discovery, before the
 * node is changed in any way. Throws `Ipv6SubnetMissing`.
 */
export function requireIpv6Subnet(primary: ImdsEni): void {
  if (primary.subnetIpv6Cidrs.length === 0) {
    throw new StartError(
      'Ipv6SubnetMissing',
      `ENABLE_IPv6=true, but the primary ENI's subnet ${primary.subnetId} has no IPv6 CIDR (IMDS subnet-ipv6-cidr-blocks); launch the node in a dual-stack subnet`,
    );
  }
}

/**
 * IPv6 mode's one /80 on the primary ENI (the reference's `assignIPv6Prefix`): the first prefix EC2 lists
 * (IMDS in IMDS-only mode), or a new one (`AssignIpv6Addresses Ipv6PrefixCount=1`) when there is none. Further
 * prefixes are left alone and unused. Throws a {@link StartError} when no prefix can be had.
 */
export async function primaryIpv6Prefix(deps: PrimaryPrefixDeps): Promise<string> {
  const { primary } = deps;
  let prefixes = deps.describePrefixes ? await deps.describePrefixes() : primary.ipv6Prefixes;
  if (prefixes.length === 0) {
    if (deps.assignPrefix === undefined) {
      throw new StartError(
        'Ipv6PrefixMissing',
        `ENABLE_IPv6=true, but ${primary.eniId} has no IPv6 /80 prefix and this daemon may not assign one (DISABLE_NETWORK_RESOURCE_PROVISIONING or ENABLE_IMDS_ONLY_MODE); delegate one or allow provisioning`,
      );
    }
    prefixes = await deps.assignPrefix();
    deps.log.info('IPv6 prefix assigned to the primary ENI', { eni: primary.eniId, prefix: prefixes[0] });
  } else if (prefixes.length > 1) {
    deps.log.info('the primary ENI has more than one IPv6 prefix; only the first is used', {
      eni: primary.eniId,
      used: prefixes[0],
      ignored: prefixes.slice(1).join(','),
    });
  }
  return prefixes[0]!;
}

/**
 * Records the primary ENI and its /80 in the datastore (IPv6 mode's whole pool: table main, no secondary
 * addresses, nothing else attached is used).
 */
export function adoptPrimaryIpv6(datastore: Datastore, primary: ImdsEni, prefix: string): void {
  if (!datastore.eniIds().includes(primary.eniId)) {
    datastore.addEni({
      id: primary.eniId,
      deviceNumber: primary.deviceNumber,
      networkCard: primary.networkCard,
      routeTableId: 254,
      subnetId: primary.subnetId,
      isPrimary: true,
    });
  }
  const known = datastore.stats().enis.find((e) => e.id === primary.eniId)?.cidrs ?? [];
  if (!known.some((c) => c.cidr === prefix)) datastore.addCidr(primary.eniId, prefix);
}
