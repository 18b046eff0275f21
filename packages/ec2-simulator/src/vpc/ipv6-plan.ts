/**
 * The IPv6 half of the virtual VPC (used when the VPC has an IPv6 block): fixed addresses, the router's
 * next hop towards an ENI, and the `ip6` nftables checks (source/destination check and unowned destinations).
 * Security groups are not applied to IPv6 packets (their rules here are IPv4 only).
 */
import { formatIpv6, parseIpv6 } from '../ip.js';

/** The fixed IPv6 addresses of a virtual VPC with an IPv6 block. */
export const VPC_IPV6_ADDRESSES = {
  /** What every ENI's IPv6 default route points at, as on AWS (`fe80:ec2::1`, on the router's end of each ENI). */
  gateway: 'fe80:ec2::1',
  /** An IPv6 host on the simulated internet (answers ping and TCP); it has no IPv4 address. */
  internetHost: '2001:db8:ff::1',
  /** Router end of the router–internet link. */
  routerUplink: '2001:db8:fe::1',
  /** Internet end of the router–internet link. */
  internetUplink: '2001:db8:fe::2',
  /** Prefix length of the router–internet link. */
  uplinkPrefixLength: 64,
  /** The block the addresses above come from (a VPC IPv6 block must not overlap it). */
  reserved: '2001:db8:fe::/47',
} as const;

/** The nftables table (family `ip6`) in the router namespace. */
export const NFT6_TABLE = 'vckvpc6';

/** Counter of IPv6 packets to a VPC address no ENI owns. */
export const UNOWNED6_COUNTER = 'unowned_dst';

/**
 * The modified-EUI-64 link-local address of a MAC (`fe80::…ff:fe…`, RFC 5952 form), what a Linux interface with
 * that MAC configures by default: the router's next hop for every IPv6 address and prefix of the ENI.
 */
export function eui64LinkLocal(mac: string): string {
  const b = mac.split(':').map((x) => Number.parseInt(x, 16));
  if (b.length !== 6 || b.some((x) => !(x >= 0 && x <= 255))) throw new Error(`bad MAC ${mac}`);
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  const text = `fe80::${hex(b[0]! ^ 2, b[1]!)}:${hex(b[2]!, 0xff)}:${hex(0xfe, b[3]!)}:${hex(b[4]!, b[5]!)}`;
  // RFC 5952 form, as `ip -6 route` prints it.
  return formatIpv6(parseIpv6(text)!);
}

/** The IPv6 addresses an ENI owns. */
export interface EniIpv6 {
  /** Addresses (the first is the ENI's primary IPv6 address). */
  readonly addresses: readonly string[];
  /** Delegated /80 prefixes. */
  readonly prefixes: readonly string[];
}

/** No IPv6 at all. */
export const NO_IPV6: EniIpv6 = { addresses: [], prefixes: [] };

/** Every owned IPv6 address and prefix as route destinations (`…/128`, `…/80`). */
export function ownedIpv6Destinations(eni: EniIpv6): string[] {
  return eni.addresses.map((a) => `${a}/128`).concat(eni.prefixes);
}

const T = `ip6 ${NFT6_TABLE}`;

function setContents(set: string, list: readonly string[]): string[] {
  const out = [`flush set ${T} ${set}`];
  if (list.length > 0) out.push(`add element ${T} ${set} { ${list.join(', ')} }`);
  return out;
}

/** The base `ip6` table: the VPC block set, the owned set, the ENI dispatch map and the prerouting check. */
export function nft6Base(vpcCidrs: readonly string[]): string[] {
  const set = (name: string) => `add set ${T} ${name} { type ipv6_addr; flags interval; auto-merge; }`;
  return [
    `add table ${T}`,
    `add counter ${T} ${UNOWNED6_COUNTER}`,
    set('vpc_cidrs'),
    set('owned'),
    `add map ${T} eni_dispatch { type ifname : verdict; }`,
    `add chain ${T} chk_pre { type filter hook prerouting priority -150; policy accept; }`,
    `add rule ${T} chk_pre iifname vmap @eni_dispatch`,
    `add rule ${T} chk_pre ip6 daddr @vpc_cidrs ip6 daddr != @owned counter name ${UNOWNED6_COUNTER} drop`,
    ...setContents('vpc_cidrs', vpcCidrs),
  ];
}

/** Replaces the set of every owned IPv6 address and prefix. */
export function nft6Ownership(owned: readonly string[]): string[] {
  return setContents('owned', owned);
}

/**
 * The IPv6 source/destination check of router link `link` (created when `isNew`, contents replaced): with
 * the check on, a packet must come from an owned address or a link-local one (neighbour discovery).
 */
export function nft6EniUpsert(
  link: string,
  owned: readonly string[],
  sourceDestCheck: boolean,
  isNew: boolean,
): string[] {
  const out: string[] = [];
  if (isNew)
    out.push(
      `add counter ${T} sdc_${link}`,
      `add set ${T} src_${link} { type ipv6_addr; flags interval; auto-merge; }`,
      `add chain ${T} eni_${link}`,
    );
  out.push(...setContents(`src_${link}`, owned), `flush chain ${T} eni_${link}`);
  if (sourceDestCheck)
    out.push(
      `add rule ${T} eni_${link} ip6 saddr @src_${link} return`,
      `add rule ${T} eni_${link} ip6 saddr fe80::/10 return`,
      `add rule ${T} eni_${link} counter name sdc_${link} drop`,
    );
  if (isNew) out.push(`add element ${T} eni_dispatch { "${link}" : jump eni_${link} }`);
  return out;
}

/** Removes the IPv6 check of router link `link` (its counter stays). */
export function nft6EniRemove(link: string): string[] {
  return [
    `delete element ${T} eni_dispatch { "${link}" }`,
    `flush chain ${T} eni_${link}`,
    `delete chain ${T} eni_${link}`,
    `delete set ${T} src_${link}`,
  ];
}
