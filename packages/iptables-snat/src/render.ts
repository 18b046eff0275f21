import type { NftTablePlan, SnatPlan, SnatTable } from './plan.js';

/**
 * Renders a plan as `iptables-save` would print our part of it: per table, the owned chain declarations
 * and every planned rule as `-A <chain> <spec>`. Used for golden tests and for showing operators what a
 * node should have; {@link diffSnat} produces the script that is actually applied.
 */
export function renderIptables(plan: SnatPlan): string {
  const out: string[] = [];
  for (const table of ['mangle', 'nat'] as SnatTable[]) {
    const chains = plan.chains.filter((c) => c.table === table);
    const builtin = plan.builtinRules.filter((c) => c.table === table);
    if (chains.length === 0 && builtin.length === 0) continue;
    out.push(`*${table}`);
    for (const c of chains) out.push(`:${c.chain} - [0:0]`);
    for (const c of [...builtin, ...chains]) for (const r of c.rules) out.push(`-A ${c.chain} ${r}`);
    out.push('COMMIT');
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

/** Renders the nft table in the layout `nft list table` prints (without counters) and `nft -f` accepts. */
export function renderNftTable(table: NftTablePlan): string {
  const out = [`table ${table.family} ${table.name} {`];
  table.chains.forEach((chain, i) => {
    if (i > 0) out.push('');
    out.push(`\tchain ${chain.name} {`);
    if (chain.base !== undefined) out.push(`\t\t${chain.base}`);
    for (const rule of chain.rules) out.push(`\t\t${rule}`);
    out.push('\t}');
  });
  out.push('}');
  return `${out.join('\n')}\n`;
}
