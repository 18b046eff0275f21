import { formatIpv4, parseIpv4Cidr } from '../ip.js';
import { VpcError } from './errors.js';

/** The fixed addresses of a virtual VPC (the same in every run: each run has its own namespaces). */
export const VPC_ADDRESSES = {
  /** IMDS, answered by the router for whichever instance owns the source address. */
  imds: '169.254.169.254',
  /** The EC2 API endpoint, a host on the simulated internet (port 80). */
  ec2: '203.0.113.10',
  /** Another host on the simulated internet (answers ping), for egress checks. */
  internetHost: '203.0.113.1',
  /** Router end of the router–internet link. */
  routerUplink: '198.51.100.1',
  /** Internet end of the router–internet link. */
  internetUplink: '198.51.100.2',
  /** Prefix length of the router–internet link. */
  uplinkPrefixLength: 30,
} as const;

/** MTU of every ENI link, as on EC2 (jumbo frames inside a VPC). */
export const ENI_MTU = 9001;

/** Name of the router's link towards the internet namespace. */
export const ROUTER_UPLINK = 'inet0';

/** The nftables table (family `ip`) in the router namespace. */
export const NFT_TABLE = 'vckvpc';

/** Why the router dropped a packet. */
export type DropReason =
  /** The source address is not owned by the ENI the packet came from. */
  | 'source-dest-check'
  /** The destination is in the VPC but owned by no attached ENI. */
  | 'unassigned-destination'
  /** Towards the internet from an address without a public mapping (missing or wrong SNAT). */
  | 'egress-not-public'
  /** From the internet to an address without a public mapping. */
  | 'ingress-not-public'
  /** No security-group rule of the sending ENI (egress) or the receiving ENI (ingress) allows a new flow. */
  | 'security-group';

/** Every {@link DropReason}. */
export const DROP_REASONS: readonly DropReason[] = [
  'source-dest-check',
  'unassigned-destination',
  'egress-not-public',
  'ingress-not-public',
  'security-group',
];

/** Named nft counter of each global drop reason (source-dest-check is counted per ENI link). */
export const REASON_COUNTERS = {
  'unassigned-destination': 'unowned_dst',
  'egress-not-public': 'egress_not_public',
  'ingress-not-public': 'ingress_not_public',
} as const;

/** A subnet's addressing as the router and an instance's eth0 see it. */
export interface SubnetAddressing {
  /** The subnet CIDR, normalised. */
  readonly cidr: string;
  /** Prefix length. */
  readonly prefixLength: number;
  /** The gateway, base + 1 (the VPC router). */
  readonly gateway: string;
}

/** Gateway and prefix length of a subnet CIDR; throws `VPC_INVALID_OPTIONS` for a bad CIDR. */
export function subnetAddressing(cidr: string): SubnetAddressing {
  const c = parseIpv4Cidr(cidr);
  if (!c || c.length > 28) throw new VpcError('VPC_INVALID_OPTIONS', 'subnet', `bad subnet CIDR ${cidr}`);
  return {
    cidr: `${formatIpv4(c.base)}/${c.length}`,
    prefixLength: c.length,
    gateway: formatIpv4(c.base + 1),
  };
}

/** The IPv4 addresses an ENI owns, as the router needs them. */
export interface EniIpv4 {
  /** Primary private address. */
  readonly primary: string;
  /** Secondary private addresses. */
  readonly secondaries: readonly string[];
  /** Delegated /28 prefixes. */
  readonly prefixes: readonly string[];
}

/** Every owned address and prefix of an ENI as nft set elements / route destinations (`a.b.c.d/32`, `…/28`). */
export function ownedDestinations(eni: EniIpv4): string[] {
  return [eni.primary, ...eni.secondaries].map((a) => `${a}/32`).concat(eni.prefixes);
}

function elements(list: readonly string[]): string {
  return list.map((e) => (e.endsWith('/32') ? e.slice(0, -3) : e)).join(', ');
}

/** nft commands that fill a set with exactly these elements (one transaction with the rest). */
function setContents(set: string, list: readonly string[]): string[] {
  const out = [`flush set ip ${NFT_TABLE} ${set}`];
  if (list.length > 0) out.push(`add element ip ${NFT_TABLE} ${set} { ${elements(list)} }`);
  return out;
}

/** Replaces the VPC CIDR set (after a block was associated or disassociated). */
export function nftVpcCidrs(vpcCidrs: readonly string[]): string[] {
  return setContents('vpc_cidrs', vpcCidrs);
}

/** The base table: counters, sets, the ENI dispatch map and the two hooked chains. */
export function nftBase(vpcCidrs: readonly string[]): string[] {
  const t = `ip ${NFT_TABLE}`;
  const set = (name: string, interval: boolean) =>
    `add set ${t} ${name} { type ipv4_addr; ${interval ? 'flags interval; auto-merge; ' : ''}}`;
  return [
    `add table ${t}`,
    ...Object.values(REASON_COUNTERS).map((c) => `add counter ${t} ${c}`),
    set('vpc_cidrs', true),
    set('owned', true),
    set('public_addrs', false),
    `add map ${t} eni_dispatch { type ifname : verdict; }`,
    `add chain ${t} chk_pre { type filter hook prerouting priority -150; policy accept; }`,
    `add chain ${t} chk_fwd { type filter hook forward priority 0; policy accept; }`,
    `add rule ${t} chk_pre iifname vmap @eni_dispatch`,
    `add rule ${t} chk_pre ip daddr @vpc_cidrs ip daddr != @owned counter name ${REASON_COUNTERS['unassigned-destination']} drop`,
    `add rule ${t} chk_fwd oifname "${ROUTER_UPLINK}" ip saddr != @public_addrs counter name ${REASON_COUNTERS['egress-not-public']} drop`,
    `add rule ${t} chk_fwd iifname "${ROUTER_UPLINK}" ip daddr != @public_addrs counter name ${REASON_COUNTERS['ingress-not-public']} drop`,
    ...setContents('vpc_cidrs', vpcCidrs),
  ];
}

/**
 * The per-ENI check for router link `link`, created on first use, contents replaced: frames from a branch's
 * MAC go to that branch's check (map `brm_<link>`); the rest get the ENI's mark (which the security-group
 * checks read) and, with source/destination check on, must come from an owned address.
 */
export function nftEniUpsert(
  link: string,
  owned: readonly string[],
  sourceDestCheck: boolean,
  isNew: boolean,
  mark: number,
): string[] {
  const t = `ip ${NFT_TABLE}`;
  const out: string[] = [];
  if (isNew) out.push(...checkObjects(link), `add map ${t} brm_${link} { type ether_addr : verdict; }`);
  out.push(
    ...setContents(`src_${link}`, owned),
    `flush chain ${t} eni_${link}`,
    `add rule ${t} eni_${link} ether saddr vmap @brm_${link}`,
    ...markAndCheck(`eni_${link}`, link, sourceDestCheck, mark),
  );
  if (isNew) out.push(`add element ${t} eni_dispatch { "${link}" : jump eni_${link} }`);
  return out;
}

/** The counter, source set and chain of one interface's check. */
function checkObjects(key: string): string[] {
  const t = `ip ${NFT_TABLE}`;
  return [
    `add counter ${t} sdc_${key}`,
    `add set ${t} src_${key} { type ipv4_addr; flags interval; auto-merge; }`,
    `add chain ${t} eni_${key}`,
  ];
}

function markAndCheck(chain: string, key: string, sourceDestCheck: boolean, mark: number): string[] {
  const t = `ip ${NFT_TABLE}`;
  const out = [`add rule ${t} ${chain} meta mark set ${mark}`];
  if (sourceDestCheck) {
    out.push(
      `add rule ${t} ${chain} ip saddr @src_${key} return`,
      `add rule ${t} ${chain} counter name sdc_${key} drop`,
    );
  }
  return out;
}

/** Removes the per-ENI check of router link `link` (its counter stays, so its count is not lost). */
export function nftEniRemove(link: string): string[] {
  const t = `ip ${NFT_TABLE}`;
  return [
    `delete element ${t} eni_dispatch { "${link}" }`,
    `flush chain ${t} eni_${link}`,
    `delete map ${t} brm_${link}`,
    `delete chain ${t} eni_${link}`,
    `delete set ${t} src_${link}`,
  ];
}

/**
 * The check of a branch ENI riding on trunk link `trunkLink`, told apart by its MAC `mac` (where AWS uses
 * the VLAN tag): key `key` names its chain, source set and counter.
 */
export function nftBranchUpsert(
  trunkLink: string,
  key: string,
  mac: string,
  owned: readonly string[],
  sourceDestCheck: boolean,
  isNew: boolean,
  mark: number,
): string[] {
  const t = `ip ${NFT_TABLE}`;
  const out: string[] = [];
  if (isNew) out.push(...checkObjects(key));
  out.push(
    ...setContents(`src_${key}`, owned),
    `flush chain ${t} eni_${key}`,
    ...markAndCheck(`eni_${key}`, key, sourceDestCheck, mark),
  );
  if (isNew) out.push(`add element ${t} brm_${trunkLink} { ${mac} : goto eni_${key} }`);
  return out;
}

/** Removes a branch's check (its counter stays). `trunkGone`: the trunk's map is deleted in the same step. */
export function nftBranchRemove(trunkLink: string, key: string, mac: string, trunkGone = false): string[] {
  const t = `ip ${NFT_TABLE}`;
  return [
    ...(trunkGone ? [] : [`delete element ${t} brm_${trunkLink} { ${mac} }`]),
    `flush chain ${t} eni_${key}`,
    `delete chain ${t} eni_${key}`,
    `delete set ${t} src_${key}`,
  ];
}

/** Replaces the sets of every owned address (for the destination check) and every public address. */
export function nftOwnership(owned: readonly string[], publicAddrs: readonly string[]): string[] {
  return [
    ...setContents('owned', owned),
    ...setContents(
      'public_addrs',
      publicAddrs.map((a) => `${a}/32`),
    ),
  ];
}

/** Link name of the `n`-th ENI plugged into the router (`e1`, `e2`, …). */
export function routerLinkName(n: number): string {
  return `e${n}`;
}

/** The lowest `ethN` name not in `taken`. */
export function nextEthName(taken: ReadonlySet<string>): string {
  for (let i = 0; ; i++) if (!taken.has(`eth${i}`)) return `eth${i}`;
}
