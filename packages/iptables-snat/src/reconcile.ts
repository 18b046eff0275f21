import { diffSnat, type SnatChangeSet, type SnatState } from './diff.js';
import { SnatError } from './errors.js';
import { NFT_TABLE } from './names.js';
import { parseIptablesSave, parseNftTable, type SavedTable } from './parse.js';
import { emptySnatPlan, type SnatPlan } from './plan.js';
import type { CommandResult, CommandRunner } from './runner.js';

/** Program names used by the reconciler; override for `iptables-legacy-*` or absolute paths. */
export interface SnatCommands {
  /** @defaultValue `'iptables-save'` */
  readonly iptablesSave?: string | undefined;
  /** @defaultValue `'iptables-restore'` */
  readonly iptablesRestore?: string | undefined;
  /** @defaultValue `'nft'` */
  readonly nft?: string | undefined;
}

/** Where and how to read and apply rules. */
export interface SnatTools {
  /** Runs the tools (in the target network namespace). */
  readonly runner: CommandRunner;
  /** Program names. */
  readonly commands?: SnatCommands | undefined;
  /** Seconds `iptables-restore -w` waits for the xtables lock. @defaultValue `5` */
  readonly lockWaitSeconds?: number | undefined;
}

/** What {@link readSnatState} returns. */
export interface SnatRead {
  /** The node's state. */
  readonly state: SnatState;
  /** Number of processes run to read it. */
  readonly processes: number;
}

/** The outcome of {@link reconcileSnat}. */
export interface SnatReconcileResult {
  /** What was (or, with nothing to do, would have been) changed. */
  readonly changeSet: SnatChangeSet;
  /** Number of tool processes run (reads and applies). */
  readonly processes: number;
}

function failed(subject: string, result: CommandResult): SnatError {
  return new SnatError({ code: 'COMMAND_FAILED', subject, exitCode: result.exitCode, stderr: result.stderr });
}

/**
 * Reads our part of the node's state with two processes in one parallel wave: `iptables-save` (its `nat` and
 * `mangle` tables are kept) and one `nft` call chosen by `expectNftTable` (the plan's answer):
 * - expected: `nft list table ip aws-cni`. If that fails, the table is taken as absent (`nft` not installed,
 *   or not there); the diff then replaces it, which works either way and is atomic, and a real error
 *   surfaces from that `nft -f`.
 * - not expected: `nft list tables ip`, which says whether there is a table to delete; its content is not
 *   needed, so it is not read (`nft` undefined, `nftPresent` true).
 * Throws `COMMAND_FAILED` (iptables-save, or `nft list tables` failing other than by being absent) or
 * `PARSE_ERROR`.
 */
export async function readSnatState(tools: SnatTools, expectNftTable = true): Promise<SnatRead> {
  const save = tools.commands?.iptablesSave ?? 'iptables-save';
  const nft = tools.commands?.nft ?? 'nft';
  const [saved, listed] = await Promise.all([
    // One xtables dump for every table: one process is cheaper than one per table.
    tools.runner.run({ file: save, args: [] }),
    tools.runner.run({
      file: nft,
      args: expectNftTable ? ['list', 'table', 'ip', NFT_TABLE] : ['list', 'tables', 'ip'],
    }),
  ]);
  if (saved.exitCode !== 0) throw failed(save, saved);
  const tables: SavedTable[] = parseIptablesSave(saved.stdout).filter(
    (t) => t.name === 'nat' || t.name === 'mangle',
  );
  if (expectNftTable) {
    const table = listed.exitCode === 0 ? parseNftTable(listed.stdout) : undefined;
    return { state: { tables, nft: table, nftPresent: table !== undefined }, processes: 2 };
  }
  if (listed.exitCode !== 0 && listed.exitCode !== -1) throw failed(nft, listed);
  const nftPresent = listed.stdout.split('\n').some((line) => line.trim() === `table ip ${NFT_TABLE}`);
  return { state: { tables, nft: undefined, nftPresent }, processes: 2 };
}

/**
 * Applies a change set: at most one `iptables-restore -w <s> --noflush` and one `nft -f -` (concurrently),
 * each atomic. Returns the number of processes run. Throws `COMMAND_FAILED` (that tool's part is then
 * unchanged).
 */
export async function applySnatChanges(tools: SnatTools, changeSet: SnatChangeSet): Promise<number> {
  const runs: Promise<void>[] = [];
  if (changeSet.iptablesScript !== undefined) {
    const restore = tools.commands?.iptablesRestore ?? 'iptables-restore';
    const wait = tools.lockWaitSeconds ?? 5;
    runs.push(
      tools.runner
        .run({ file: restore, args: ['-w', String(wait), '--noflush'], stdin: changeSet.iptablesScript })
        .then((result) => {
          if (result.exitCode !== 0) throw failed(restore, result);
        }),
    );
  }
  if (changeSet.nftScript !== undefined) {
    const nft = tools.commands?.nft ?? 'nft';
    runs.push(
      tools.runner.run({ file: nft, args: ['-f', '-'], stdin: changeSet.nftScript }).then((result) => {
        if (result.exitCode !== 0) throw failed(nft, result);
      }),
    );
  }
  // The two touch disjoint state (xtables' tables vs `ip aws-cni`), so they run side by side; the first
  // failure is reported once both have finished.
  const settled = await Promise.allSettled(runs);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return runs.length;
}

/**
 * Reconciles the node with a plan: read → diff → apply only what differs. A node that already matches costs
 * the reads and no apply. Safe to call repeatedly.
 */
export async function reconcileSnat(tools: SnatTools, plan: SnatPlan): Promise<SnatReconcileResult> {
  const { state, processes } = await readSnatState(tools, plan.nft !== undefined);
  const changeSet = diffSnat(plan, state);
  const applied = await applySnatChanges(tools, changeSet);
  return { changeSet, processes: processes + applied };
}

/** Removes every rule, chain and nft table this package owns (others' rules are untouched). Idempotent. */
export function teardownSnat(tools: SnatTools): Promise<SnatReconcileResult> {
  return reconcileSnat(tools, emptySnatPlan());
}
