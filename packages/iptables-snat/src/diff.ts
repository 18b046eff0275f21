import { isOwnedChain, NFT_TABLE, OWNED_COMMENTS } from './names.js';
import type { SavedTable } from './parse.js';
import type { NftTablePlan, SnatPlan, SnatTable } from './plan.js';
import { renderNftTable } from './render.js';
import { splitRuleTokens } from './rule-text.js';

/** What was read from the node: our tables from `iptables-save` and the nft table, if any. */
export interface SnatState {
  /** `nat` and `mangle` as `iptables-save` printed them (a missing table means empty). */
  readonly tables: readonly SavedTable[];
  /** The `ip aws-cni` table as listed, or `undefined` when it does not exist or was not read. */
  readonly nft: NftTablePlan | undefined;
  /** Whether `ip aws-cni` exists; defaults to `nft !== undefined`. */
  readonly nftPresent?: boolean | undefined;
}

/** A change to a chain as a whole. */
export interface SnatChainChange {
  /** Created, flushed (to be refilled) or deleted. */
  readonly kind: 'create-chain' | 'flush-chain' | 'delete-chain';
  /** Its table. */
  readonly table: SnatTable;
  /** Its name. */
  readonly chain: string;
}

/** A rule added to or deleted from a chain. */
export interface SnatRuleChange {
  /** Added or deleted. */
  readonly kind: 'add-rule' | 'delete-rule';
  /** Its table. */
  readonly table: SnatTable;
  /** Its chain. */
  readonly chain: string;
  /** The rule specification as `iptables-save` prints it. */
  readonly rule: string;
}

/** The nft connmark table replaced whole or deleted. */
export interface SnatNftChange {
  /** Replaced or deleted. */
  readonly kind: 'replace-nft-table' | 'delete-nft-table';
  /** `ip aws-cni`. */
  readonly table: string;
}

/** One change, for logs and tests. */
export type SnatChange = SnatChainChange | SnatRuleChange | SnatNftChange;

/** The difference between a plan and the node, and the scripts that close it. */
export interface SnatChangeSet {
  /** Every change, in the order it is applied. Empty when the node already matches. */
  readonly changes: readonly SnatChange[];
  /** Input for `iptables-restore --noflush` (one call, atomic), or `undefined` when nothing changes. */
  readonly iptablesScript: string | undefined;
  /** Input for `nft -f -` (one call, atomic), or `undefined` when nothing changes. */
  readonly nftScript: string | undefined;
}

/** True when the rule in a built-in chain of `table` belongs to us (by comment, or by jumping to our chain). */
export function isOwnedBuiltinRule(table: string, spec: string): boolean {
  const tokens = splitRuleTokens(spec) ?? [];
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i];
    const next = tokens[i + 1]!;
    if (token === '--comment' && (OWNED_COMMENTS[table] ?? []).includes(next)) return true;
    if ((token === '-j' || token === '-g') && isOwnedChain(next)) return true;
  }
  return false;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameNft(a: NftTablePlan, b: NftTablePlan): boolean {
  if (a.chains.length !== b.chains.length) return false;
  return a.chains.every((chain) => {
    const other = b.chains.find((c) => c.name === chain.name);
    return other !== undefined && other.base === chain.base && sameList(other.rules, chain.rules);
  });
}

function diffTable(table: SnatTable, plan: SnatPlan, saved: SavedTable | undefined, changes: SnatChange[]) {
  const lines: string[] = [];
  const chainsNow = saved?.chains ?? [];
  const rulesNow = saved?.rules ?? [];
  const declare: string[] = [];
  const deletes: string[] = [];
  const removeChains: string[] = [];
  const adds: string[] = [];

  // Owned user chains: create or rewrite the planned ones, flush and delete the rest.
  const planned = plan.chains.filter((c) => c.table === table);
  for (const want of planned) {
    const exists = chainsNow.some((c) => c.name === want.chain);
    const have = rulesNow.filter((r) => r.chain === want.chain).map((r) => r.spec);
    if (exists && sameList(have, want.rules)) continue;
    declare.push(want.chain);
    changes.push({ kind: exists ? 'flush-chain' : 'create-chain', table, chain: want.chain });
    for (const rule of want.rules) {
      adds.push(`-A ${want.chain} ${rule}`);
      changes.push({ kind: 'add-rule', table, chain: want.chain, rule });
    }
  }
  const stale = chainsNow.filter(
    (c) => !c.builtin && isOwnedChain(c.name) && !planned.some((p) => p.chain === c.name),
  );

  // Our rules in built-in chains: when our subsequence differs, delete ours and append the planned ones.
  const userChains = new Set(chainsNow.filter((c) => !c.builtin).map((c) => c.name));
  const builtinNames = new Set([
    ...chainsNow.filter((c) => c.builtin).map((c) => c.name),
    ...rulesNow.filter((r) => !userChains.has(r.chain)).map((r) => r.chain),
    ...plan.builtinRules.filter((c) => c.table === table).map((c) => c.chain),
  ]);
  for (const chain of builtinNames) {
    const want = plan.builtinRules.find((c) => c.table === table && c.chain === chain)?.rules ?? [];
    const have = rulesNow
      .filter((r) => r.chain === chain && isOwnedBuiltinRule(table, r.spec))
      .map((r) => r.spec);
    if (sameList(have, want)) continue;
    for (const rule of have) {
      deletes.push(`-D ${chain} ${rule}`);
      changes.push({ kind: 'delete-rule', table, chain, rule });
    }
    for (const rule of want) {
      adds.push(`-A ${chain} ${rule}`);
      changes.push({ kind: 'add-rule', table, chain, rule });
    }
  }

  for (const chain of stale) {
    declare.push(chain.name); // declaring a chain under --noflush flushes it
    removeChains.push(`-X ${chain.name}`);
    changes.push({ kind: 'delete-chain', table, chain: chain.name });
  }
  if (declare.length + deletes.length + adds.length === 0) return lines;
  lines.push(
    `*${table}`,
    ...declare.map((c) => `:${c} - [0:0]`),
    ...deletes,
    ...removeChains,
    ...adds,
    'COMMIT',
  );
  return lines;
}

/**
 * Compares a plan with what was read and returns the changes plus the two scripts that make them: one
 * `iptables-restore --noflush` input covering `mangle` and `nat`, and one `nft -f` input. Pure.
 *
 * Owned chains whose content differs are rewritten whole (declaring a chain under `--noflush` flushes it);
 * owned chains not in the plan are flushed and deleted; rules of ours in built-in chains are compared as an
 * ordered subsequence and, when different, deleted and re-appended. Other software's rules are left alone.
 * The nft table is replaced whole (`table` + `delete table` + definition in one atomic file) when any chain,
 * base-chain setting or rule differs.
 */
export function diffSnat(plan: SnatPlan, state: SnatState): SnatChangeSet {
  const changes: SnatChange[] = [];
  const lines: string[] = [];
  for (const table of ['mangle', 'nat'] as SnatTable[]) {
    lines.push(
      ...diffTable(
        table,
        plan,
        state.tables.find((t) => t.name === table),
        changes,
      ),
    );
  }
  let nftScript: string | undefined;
  const nftPresent = state.nftPresent ?? state.nft !== undefined;
  if (plan.nft === undefined && nftPresent) {
    nftScript = `delete table ip ${NFT_TABLE}\n`;
    changes.push({ kind: 'delete-nft-table', table: `ip ${NFT_TABLE}` });
  } else if (plan.nft !== undefined && (state.nft === undefined || !sameNft(plan.nft, state.nft))) {
    nftScript = `table ip ${NFT_TABLE} {}\ndelete table ip ${NFT_TABLE}\n${renderNftTable(plan.nft)}`;
    changes.push({ kind: 'replace-nft-table', table: `ip ${NFT_TABLE}` });
  }
  return {
    changes,
    iptablesScript: lines.length === 0 ? undefined : `${lines.join('\n')}\n`,
    nftScript,
  };
}
