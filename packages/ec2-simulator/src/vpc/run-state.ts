import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNetlinkError, netnsDel, netnsList } from '@vpc-cni-kit/netlink';
import { VpcError } from './errors.js';
import { checkRunId, isRunId, runIdOfNetns, VPC_NETNS_PREFIX, VPC_STATE_DIR } from './names.js';

/** What a run records under `<stateDir>/<runId>/state.json`. */
export interface RunRecord {
  /** Format version. */
  readonly version: 1;
  /** Run id. */
  readonly runId: string;
  /** Process that owns the run. */
  readonly pid: number;
  /** That process's start time (clock ticks after boot, /proc/PID/stat field 22), to spot pid reuse. */
  readonly pidStart: string;
  /** The owner stops the run on SIGTERM (`vpc-sim up` does), so `down --run` may signal it. */
  readonly stopsOnSigterm: boolean;
  /** Namespaces created so far (names under /run/netns). */
  readonly namespaces: readonly string[];
  /** The run's description (the JSON `vpc-sim up` prints), once it is up. */
  readonly description?: unknown;
}

/** A run found on disk. */
export interface RunStatus {
  /** Its record. */
  readonly record: RunRecord;
  /** True while the owning process is alive. */
  readonly alive: boolean;
}

/** The start time of a process, or `undefined` when it does not exist. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Writes a run record atomically (temp file + rename). */
export function writeRunRecord(stateDir: string, record: RunRecord): void {
  const dir = join(stateDir, record.runId);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const tmp = join(dir, 'state.json.tmp');
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, join(dir, 'state.json'));
}

function readRecord(stateDir: string, runId: string): RunRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(join(stateDir, runId, 'state.json'), 'utf8')) as RunRecord;
    if (r.version !== 1 || r.runId !== runId || !Array.isArray(r.namespaces) || typeof r.pid !== 'number') {
      return undefined;
    }
    return r;
  } catch {
    return undefined;
  }
}

/** Every run recorded in `stateDir`, with whether its process is alive. */
export function listRuns(stateDir: string = VPC_STATE_DIR): RunStatus[] {
  if (!existsSync(stateDir)) return [];
  const out: RunStatus[] = [];
  for (const id of readdirSync(stateDir)) {
    if (!isRunId(id)) continue;
    const record = readRecord(stateDir, id);
    if (!record) continue;
    const start = processStart(record.pid);
    out.push({ record, alive: start !== undefined && start === record.pidStart });
  }
  return out;
}

/**
 * Removes what a run created: its namespaces (those recorded and any `vckvpc-<run>-*` left behind) and its
 * state directory. Links die with their namespaces; nothing of a run lives in the root namespace.
 * Returns the namespaces deleted.
 */
export function removeRunResources(runId: string, stateDir: string = VPC_STATE_DIR): string[] {
  checkRunId('down', runId);
  const record = readRecord(stateDir, runId);
  const names = new Set(record?.namespaces ?? []);
  for (const n of netnsList()) if (runIdOfNetns(n) === runId) names.add(n);
  const deleted: string[] = [];
  for (const n of names) {
    if (!n.startsWith(`${VPC_NETNS_PREFIX}${runId}-`)) continue;
    try {
      netnsDel(n);
      deleted.push(n);
    } catch (e) {
      if (!(isNetlinkError(e) && e.code === 'ENOENT')) throw e;
    }
  }
  rmSync(join(stateDir, runId), { recursive: true, force: true });
  return deleted;
}

/**
 * Stops a run: SIGTERM to its process when alive (it cleans up after itself), waiting up to `timeoutMs`,
 * then removes whatever is left. `VPC_RUN_NOT_FOUND` when there is neither a record nor a namespace;
 * `VPC_RUN_BUSY` (changing nothing) when a live owner does not stop on SIGTERM (a test or program using
 * `startVirtualVpc`: close the run there).
 */
export async function downRun(
  runId: string,
  options: { stateDir?: string; timeoutMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<string[]> {
  checkRunId('down', runId);
  const stateDir = options.stateDir ?? VPC_STATE_DIR;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const run = listRuns(stateDir).find((r) => r.record.runId === runId);
  const orphaned = netnsList().some((n) => runIdOfNetns(n) === runId);
  if (!run && !orphaned) throw new VpcError('VPC_RUN_NOT_FOUND', 'down', `no run ${runId}`);
  if (run?.alive && (run.record.stopsOnSigterm !== true || run.record.pid === process.pid)) {
    throw new VpcError(
      'VPC_RUN_BUSY',
      'down',
      `run ${runId} belongs to live process ${run.record.pid}; close it there`,
    );
  }
  if (run?.alive) {
    try {
      process.kill(run.record.pid, 'SIGTERM');
    } catch {
      // it exited meanwhile
    }
    const deadline = (options.timeoutMs ?? 15_000) / 100;
    for (let i = 0; i < deadline && processStart(run.record.pid) === run.record.pidStart; i++)
      await sleep(100);
  }
  return removeRunResources(runId, stateDir);
}

/**
 * Cleans up crashed runs: every recorded run whose process is gone, and every `vckvpc-<run>-*` namespace
 * whose run has no record. Live runs are left alone. Returns the run ids cleaned.
 */
export function downAllStale(stateDir: string = VPC_STATE_DIR): string[] {
  const runs = listRuns(stateDir);
  const live = new Set(runs.filter((r) => r.alive).map((r) => r.record.runId));
  const recorded = new Set(runs.map((r) => r.record.runId));
  const stale = new Set(runs.filter((r) => !r.alive).map((r) => r.record.runId));
  for (const n of netnsList()) {
    const id = runIdOfNetns(n);
    if (id !== undefined && !live.has(id) && !recorded.has(id)) stale.add(id);
  }
  // A record that failed to parse still names a directory; leave it (it may be a run starting up).
  for (const id of stale) removeRunResources(id, stateDir);
  return [...stale];
}
