import type { SecurityGroupRule } from '../model.js';

/** The nftables table (family `ip`) holding the security-group checks in the router namespace. */
export const NFT_SG_TABLE = 'vcksg';

/** One interface as the security-group checks see it. */
export interface GuardedEni {
  /** ENI id (`eni-…`). */
  readonly eniId: string;
  /** The packet mark the router's prerouting check gives traffic from this interface (nonzero, unique). */
  readonly mark: number;
  /** Owned addresses and prefixes (`a.b.c.d/32`, `…/28`). */
  readonly owned: readonly string[];
  /** Its security groups. */
  readonly groups: readonly string[];
}

/** What the checks are built from: the plugged interfaces and every group's rules. */
export interface SecurityInput {
  /** Interfaces plugged into the router (attached ENIs and associated branches). */
  readonly enis: readonly GuardedEni[];
  /** Rules by group id. */
  readonly rules: ReadonlyMap<string, readonly SecurityGroupRule[]>;
}

/** The per-interface and per-group objects a rendering created (the next rendering deletes them). */
export interface SecurityObjects {
  /** Chain names. */
  readonly chains: readonly string[];
  /** Set names. */
  readonly sets: readonly string[];
}

const suffix = (id: string): string => id.slice(id.indexOf('-') + 1);

/** Name of the ingress-drop counter of an ENI (`sgdi_…`) — counters outlive the ENI's chains. */
export const ingressCounter = (eniId: string): string => `sgdi_${suffix(eniId)}`;
/** Name of the egress-drop counter of an ENI (`sgdo_…`). */
export const egressCounter = (eniId: string): string => `sgdo_${suffix(eniId)}`;
const memberSet = (groupId: string): string => `gm_${suffix(groupId)}`;

const bare = (e: string): string => (e.endsWith('/32') ? e.slice(0, -3) : e);

/** The nft match of one rule, from the point of view of the ENI it guards (`peer` is saddr in, daddr out). */
export function ruleMatch(rule: SecurityGroupRule): string {
  const dir = rule.isEgress ? 'daddr' : 'saddr';
  const parts: string[] = [];
  if (rule.referencedGroupId !== undefined) parts.push(`ip ${dir} @${memberSet(rule.referencedGroupId)}`);
  else if (rule.cidrIpv4 !== undefined && rule.cidrIpv4 !== '0.0.0.0/0')
    parts.push(`ip ${dir} ${bare(rule.cidrIpv4)}`);
  const p = rule.ipProtocol;
  if (p === 'tcp' || p === 'udp') {
    if (rule.fromPort === 0 && rule.toPort === 65535) parts.push(`meta l4proto ${p}`);
    else if (rule.fromPort === rule.toPort) parts.push(`${p} dport ${rule.fromPort}`);
    else parts.push(`${p} dport ${rule.fromPort}-${rule.toPort}`);
  } else if (p === 'icmp') {
    if (rule.fromPort === -1) parts.push('meta l4proto icmp');
    else {
      parts.push(`icmp type ${rule.fromPort}`);
      if (rule.toPort !== -1) parts.push(`icmp code ${rule.toPort}`);
    }
  } else if (p !== '-1') parts.push(`meta l4proto ${p}`);
  return parts.join(' ');
}

/**
 * One nft transaction that replaces every security-group check with checks for `input` (deleting the chains
 * and sets `previous` created). Statefulness: established and related packets pass; a new flow passes when
 * an egress rule of the sending ENI (marked in prerouting) and an ingress rule of the receiving ENI (by
 * destination address) allow it. Traffic to or from outside the VPC meets only the VPC side's check. Drops
 * count per ENI and direction in named counters that survive re-rendering.
 */
export function nftSecurityGroups(
  input: SecurityInput,
  previous: SecurityObjects,
): { commands: string[]; objects: SecurityObjects } {
  const t = `ip ${NFT_SG_TABLE}`;
  const out: string[] = [
    `add table ${t}`,
    `add chain ${t} sg_check { type filter hook forward priority 10; policy accept; }`,
    `add map ${t} sg_out { type mark : verdict; }`,
    `add map ${t} sg_in { type ipv4_addr : verdict; flags interval; }`,
    `flush chain ${t} sg_check`,
    `flush map ${t} sg_out`,
    `flush map ${t} sg_in`,
  ];
  // `add` first makes each delete safe whether or not an earlier transaction created the object.
  for (const c of previous.chains) out.push(`add chain ${t} ${c}`, `flush chain ${t} ${c}`);
  for (const c of previous.chains) out.push(`delete chain ${t} ${c}`);
  for (const s of previous.sets)
    out.push(`add set ${t} ${s} { type ipv4_addr; flags interval; auto-merge; }`, `delete set ${t} ${s}`);
  const chains: string[] = [];
  const sets: string[] = [];
  const groups = new Set<string>();
  for (const rules of input.rules.values()) {
    for (const r of rules) if (r.referencedGroupId !== undefined) groups.add(r.referencedGroupId);
  }
  for (const g of [...groups].sort()) {
    const name = memberSet(g);
    sets.push(name);
    out.push(`add set ${t} ${name} { type ipv4_addr; flags interval; auto-merge; }`);
    const members = input.enis.filter((e) => e.groups.includes(g)).flatMap((e) => e.owned);
    if (members.length > 0) out.push(`add element ${t} ${name} { ${members.map(bare).join(', ')} }`);
  }
  for (const e of input.enis) {
    const s = suffix(e.eniId);
    const rules = e.groups.flatMap((g) => input.rules.get(g) ?? []);
    for (const [dir, egress, counter] of [
      ['sgi', false, ingressCounter(e.eniId)],
      ['sgo', true, egressCounter(e.eniId)],
    ] as const) {
      const chain = `${dir}_${s}`;
      chains.push(chain);
      out.push(`add counter ${t} ${counter}`, `add chain ${t} ${chain}`);
      const seen = new Set<string>();
      for (const r of rules.filter((x) => x.isEgress === egress)) {
        const m = ruleMatch(r);
        if (seen.has(m)) continue;
        seen.add(m);
        out.push(`add rule ${t} ${chain} ${m} return`.replace('  ', ' '));
      }
      out.push(`add rule ${t} ${chain} counter name ${counter} drop`);
    }
    out.push(`add element ${t} sg_out { ${e.mark} : jump sgo_${s} }`);
    if (e.owned.length > 0) {
      out.push(`add element ${t} sg_in { ${e.owned.map((o) => `${bare(o)} : jump sgi_${s}`).join(', ')} }`);
    }
  }
  out.push(
    `add rule ${t} sg_check ct state established,related accept`,
    `add rule ${t} sg_check meta mark vmap @sg_out`,
    `add rule ${t} sg_check ip daddr vmap @sg_in`,
  );
  return { commands: out, objects: { chains, sets } };
}
