import { SnatError } from './errors.js';
import type { NftChainPlan, NftTablePlan } from './plan.js';

/** A chain declaration read from `iptables-save`. */
export interface SavedChain {
  /** Chain name. */
  readonly name: string;
  /** True when it has a policy (a built-in chain), false for `-` (user-defined). */
  readonly builtin: boolean;
}

/** A rule read from `iptables-save`. */
export interface SavedRule {
  /** Its chain. */
  readonly chain: string;
  /** The text after `-A <chain> `. */
  readonly spec: string;
}

/** One table as read from `iptables-save`. */
export interface SavedTable {
  /** Table name. */
  readonly name: string;
  /** Chains in the order printed. */
  readonly chains: readonly SavedChain[];
  /** Rules in the order printed. */
  readonly rules: readonly SavedRule[];
}

function parseError(subject: string, detail: string): SnatError {
  return new SnatError({ code: 'PARSE_ERROR', subject, detail });
}

/**
 * Parses `iptables-save` output into tables. Throws `PARSE_ERROR` on a line it does not understand, so a
 * misread never turns into a wrong apply.
 */
export function parseIptablesSave(text: string): SavedTable[] {
  const tables: {
    name: string;
    chains: { name: string; builtin: boolean }[];
    rules: { chain: string; spec: string }[];
  }[] = [];
  let current: (typeof tables)[number] | undefined;
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trimEnd();
    if (line === '' || line.startsWith('#')) continue;
    const where = `line ${i + 1}: ${JSON.stringify(line.slice(0, 120))}`;
    if (line.startsWith('*')) {
      if (current) throw parseError('iptables-save', `table started before COMMIT at ${where}`);
      current = { name: line.slice(1), chains: [], rules: [] };
      continue;
    }
    if (!current) throw parseError('iptables-save', `outside a table at ${where}`);
    if (line === 'COMMIT') {
      tables.push(current);
      current = undefined;
      continue;
    }
    const decl = /^:(\S+) (\S+)/.exec(line);
    if (decl) {
      current.chains.push({ name: decl[1]!, builtin: decl[2] !== '-' });
      continue;
    }
    const rule = /^(?:\[\d+:\d+\] )?-A (\S+) ?(.*)$/.exec(line);
    if (rule) {
      current.rules.push({ chain: rule[1]!, spec: rule[2]! });
      continue;
    }
    throw parseError('iptables-save', `unexpected ${where}`);
  }
  if (current) throw parseError('iptables-save', `table ${current.name} has no COMMIT`);
  return tables;
}

/**
 * Parses `nft list table` output for one table into the shape of an {@link NftTablePlan}, with counters'
 * values dropped (`counter packets 3 bytes 180` → `counter`) so it compares with a plan.
 */
export function parseNftTable(text: string): NftTablePlan {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const head = /^table (ip) (\S+) \{$/.exec(lines[0] ?? '');
  if (!head || lines[lines.length - 1] !== '}') throw parseError('nft', 'not a single table listing');
  const chains: { name: string; base?: string; rules: string[] }[] = [];
  let chain: (typeof chains)[number] | undefined;
  for (const line of lines.slice(1, -1)) {
    const open = /^chain (\S+) \{$/.exec(line);
    if (open) {
      if (chain) throw parseError('nft', `nested chain at ${JSON.stringify(line)}`);
      chain = { name: open[1]!, rules: [] };
      continue;
    }
    if (!chain) throw parseError('nft', `outside a chain: ${JSON.stringify(line)}`);
    if (line === '}') {
      chains.push(chain);
      chain = undefined;
      continue;
    }
    if (line.startsWith('type ') && chain.rules.length === 0 && chain.base === undefined) {
      chain.base = line;
      continue;
    }
    chain.rules.push(line.replace(/\bcounter packets \d+ bytes \d+/g, 'counter'));
  }
  if (chain) throw parseError('nft', `chain ${chain.name} not closed`);
  return { family: 'ip', name: head[2]!, chains: chains as NftChainPlan[] };
}
