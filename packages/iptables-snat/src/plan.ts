import { COMMENTS, CONNMARK_CHAIN, NFT_TABLE, SNAT_CHAIN } from './names.js';
import { type ResolvedSnatOptions, resolveSnatOptions, type SnatOptions } from './options.js';
import { joinRuleTokens } from './rule-text.js';

/** The iptables tables this package touches. */
export type SnatTable = 'nat' | 'mangle';

/** Rules for one chain, each in the exact text `iptables-save` prints after `-A <chain> `. */
export interface ChainRules {
  /** Table of the chain. */
  readonly table: SnatTable;
  /** Chain name. */
  readonly chain: string;
  /** Rule specifications in order. */
  readonly rules: readonly string[];
}

/** One chain of the nft table, in the text `nft list table` prints (counters left out). */
export interface NftChainPlan {
  /** Chain name. */
  readonly name: string;
  /** Base-chain line (`type … hook … priority …; policy …;`), absent for a regular chain. */
  readonly base?: string | undefined;
  /** Rule lines in order. */
  readonly rules: readonly string[];
}

/** The `ip aws-cni` table of the nftables connmark backend. */
export interface NftTablePlan {
  /** Always `ip`. */
  readonly family: 'ip';
  /** Always `aws-cni`. */
  readonly name: string;
  /** Its chains. */
  readonly chains: readonly NftChainPlan[];
}

/**
 * Desired SNAT/connmark state: the complete content of every owned chain that should exist (any other owned
 * chain is deleted), our rules in built-in chains (others' rules there are never touched), and the nft table
 * (absent → deleted if present).
 */
export interface SnatPlan {
  /** Owned user-defined chains that should exist, with exact content. */
  readonly chains: readonly ChainRules[];
  /** Our rules in built-in chains (`nat PREROUTING`, `nat POSTROUTING`, `mangle PREROUTING`), in order. */
  readonly builtinRules: readonly ChainRules[];
  /** The nft connmark table, when the nftables backend is in use. */
  readonly nft: NftTablePlan | undefined;
}

/** Formats a mark as iptables prints it (`0x80`). */
function hex(mark: number): string {
  return `0x${mark.toString(16)}`;
}

/** Formats a mark as nft prints it (`0x00000080`). */
function hex8(mark: number): string {
  return `0x${mark.toString(16).padStart(8, '0')}`;
}

function comment(text: string): string[] {
  return ['-m', 'comment', '--comment', text];
}

function destination(cidr: string): string[] {
  return cidr === '0.0.0.0/0' ? [] : ['-d', cidr];
}

function snatTarget(o: ResolvedSnatOptions): string[] {
  const target = ['-j', 'SNAT', '--to-source', o.nodeIp];
  if (o.randomizeSnat === 'none') return target;
  if (o.randomizeSnat === 'prng' && o.randomFullySupported) return [...target, '--random-fully'];
  return [...target, '--random'];
}

function restoreMark(mark: number): string[] {
  return ['-j', 'CONNMARK', '--restore-mark', '--nfmask', hex(mark), '--ctmask', hex(mark)];
}

function setMark(mark: number): string[] {
  return ['-j', 'CONNMARK', '--set-xmark', `${hex(mark)}/${hex(mark)}`];
}

/** The `ip aws-cni` table for the given options (exported for golden tests and docs). */
export function planNftConnmark(o: ResolvedSnatOptions): NftTablePlan {
  const cidrs = [...o.vpcCidrs, ...o.excludeSnatCidrs];
  const restore =
    o.connmark === 0xffffffff
      ? 'counter meta mark set ct mark'
      : `counter meta mark set ct mark & ${hex8(o.connmark)}`;
  return {
    family: 'ip',
    name: NFT_TABLE,
    chains: [
      {
        name: 'nat-prerouting',
        base: 'type nat hook prerouting priority dstnat + 10; policy accept;',
        rules: ['fib daddr type local return', `iifname "${o.vethPrefix}*" counter jump snat-mark`, restore],
      },
      {
        name: 'snat-mark',
        rules: [
          ...cidrs.map((cidr) => (cidr === '0.0.0.0/0' ? 'return' : `ip daddr ${nftAddress(cidr)} return`)),
          `ct mark set ct mark | ${hex8(o.connmark)}`,
        ],
      },
    ],
  };
}

function nftAddress(cidr: string): string {
  return cidr.endsWith('/32') ? cidr.slice(0, -3) : cidr;
}

/**
 * Plans the node's SNAT and connmark rules from options, as the reference's `SetupHostNetwork` /
 * `UpdateHostSNATRules` and connmark `Setup`/`Cleanup` would leave them. Pure: validates (throwing
 * `INVALID_OPTION`) and returns data; nothing runs.
 */
export function planSnat(options: SnatOptions | ResolvedSnatOptions): SnatPlan {
  const o = resolveSnatOptions(options);
  const rule = (tokens: string[]) => joinRuleTokens(tokens);
  const chains: ChainRules[] = [];
  const builtinRules: ChainRules[] = [];
  let nft: NftTablePlan | undefined;

  if (!o.externalSnat) {
    chains.push({
      table: 'nat',
      chain: SNAT_CHAIN,
      // The reference inserts each CIDR's RETURN at position 1 (VPC blocks, then exclusions), so they read
      // in reverse order above the SNAT rule; a block associated later lands on top, as here.
      rules: [
        ...[
          ...o.vpcCidrs.map((c) => rule([...destination(c), ...comment(COMMENTS.snatChain), '-j', 'RETURN'])),
          ...o.excludeSnatCidrs.map((c) =>
            rule([...destination(c), ...comment(COMMENTS.snatExclusion), '-j', 'RETURN']),
          ),
        ].reverse(),
        rule([
          '!',
          '-o',
          'vlan+',
          ...comment(COMMENTS.snat),
          '-m',
          'addrtype',
          '!',
          '--dst-type',
          'LOCAL',
          ...snatTarget(o),
        ]),
      ],
    });
    builtinRules.push({
      table: 'nat',
      chain: 'POSTROUTING',
      rules: [rule([...comment(COMMENTS.snatChain), '-j', SNAT_CHAIN])],
    });
    if (o.connmarkBackend === 'iptables') {
      chains.push({
        table: 'nat',
        chain: CONNMARK_CHAIN,
        rules: [
          ...[...o.vpcCidrs, ...o.excludeSnatCidrs]
            .map((c) => rule([...destination(c), ...comment(COMMENTS.connmarkChain), '-j', 'RETURN']))
            .reverse(),
          rule([...comment(COMMENTS.connmark), ...setMark(o.connmark)]),
        ],
      });
      builtinRules.push({
        table: 'nat',
        chain: 'PREROUTING',
        rules: [
          rule(['-i', `${o.vethPrefix}+`, ...comment(COMMENTS.outbound), '-j', CONNMARK_CHAIN]),
          rule([...comment(COMMENTS.connmark), ...restoreMark(o.connmark)]),
        ],
      });
    } else {
      nft = planNftConnmark(o);
    }
  }

  const mangle: string[] = [];
  if (o.nodePortSupport) {
    mangle.push(
      rule([
        '-i',
        o.primaryInterface,
        ...comment(COMMENTS.primaryEni),
        '-m',
        'addrtype',
        '--dst-type',
        'LOCAL',
        '--limit-iface-in',
        ...setMark(o.connmark),
      ]),
    );
  }
  if (o.nodePortSupport || !o.externalSnat) {
    mangle.push(
      rule(['-i', `${o.vethPrefix}+`, ...comment(COMMENTS.primaryEni), ...restoreMark(o.connmark)]),
    );
  }
  if (o.nodePortSupport) {
    mangle.push(rule(['-i', 'vlan+', ...comment(COMMENTS.primaryEni), ...restoreMark(o.connmark)]));
  }
  if (mangle.length > 0) builtinRules.push({ table: 'mangle', chain: 'PREROUTING', rules: mangle });

  return { chains, builtinRules, nft };
}

/** The plan that removes everything this package owns (used by teardown). */
export function emptySnatPlan(): SnatPlan {
  return { chains: [], builtinRules: [], nft: undefined };
}
