/** The reference's SNAT chain in the `nat` table. */
export const SNAT_CHAIN = 'AWS-SNAT-CHAIN-0';
/** The reference's connmark chain in the `nat` table (iptables connmark backend). */
export const CONNMARK_CHAIN = 'AWS-CONNMARK-CHAIN-0';
/** Prefixes of `nat` chains this package owns; any chain with one of them that is not planned is deleted. */
export const OWNED_CHAIN_PREFIXES: readonly string[] = ['AWS-SNAT-CHAIN', 'AWS-CONNMARK-CHAIN'];
/** The nft table of the nftables connmark backend (`table ip aws-cni`). */
export const NFT_TABLE = 'aws-cni';

/** The reference's rule comments; operators' tooling recognises rules by them. */
export const COMMENTS = {
  /** POSTROUTING jump and per-VPC-CIDR RETURN rules. */
  snatChain: 'AWS SNAT CHAIN',
  /** RETURN rules for excluded CIDRs. */
  snatExclusion: 'AWS SNAT CHAIN EXCLUSION',
  /** The SNAT rule itself. */
  snat: 'AWS, SNAT',
  /** mangle PREROUTING node-port rules. */
  primaryEni: 'AWS, primary ENI',
  /** nat PREROUTING jump to the connmark chain. */
  outbound: 'AWS, outbound connections',
  /** The connmark set/restore rules. */
  connmark: 'AWS, CONNMARK',
  /** RETURN rules in the connmark chain. */
  connmarkChain: 'AWS CONNMARK CHAIN',
} as const;

/**
 * Comments that mark a rule in a built-in chain as ours, per table. Such rules that are not planned are
 * deleted; so are rules in built-in chains that jump to an owned chain.
 */
export const OWNED_COMMENTS: Readonly<Record<string, readonly string[]>> = {
  nat: [COMMENTS.snatChain, COMMENTS.outbound, COMMENTS.connmark],
  mangle: [COMMENTS.primaryEni],
};

/** True when `chain` is one of ours by name. */
export function isOwnedChain(chain: string): boolean {
  return OWNED_CHAIN_PREFIXES.some((prefix) => chain.startsWith(prefix));
}
