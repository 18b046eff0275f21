import { readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { GroupCommitCheckpointer } from './checkpoint.js';
import { DatastoreError } from './errors.js';
import type { FileCheckpointerOptions } from './file-checkpointer.js';
import { createGroupCommit, type GroupCommitStats } from './group-commit.js';
import { errnoOf, tempPathFor } from './internal/temp-name.js';

/** The file-backed {@link GroupCommitCheckpointer}, with its counters. */
export interface GroupCommitFileCheckpointer extends GroupCommitCheckpointer {
  /** The checkpoint file. */
  readonly path: string;
  /** Commits, writes and failed writes so far (writes < commits when commits were coalesced). */
  stats(): GroupCommitStats;
  /** Resolves once no write is in flight or queued (for a graceful stop); never rejects. */
  idle(): Promise<void>;
}

async function writeDurably(path: string, text: string, mode: number): Promise<void> {
  const tmp = tempPathFor(path);
  const dir = dirname(path);
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(tmp, 'wx', mode);
    await fh.writeFile(text, 'utf8');
    await fh.sync();
    const f = fh;
    fh = undefined;
    await f.close();
    await rename(tmp, path);
  } catch (cause) {
    if (fh !== undefined) await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw new DatastoreError('CheckpointWriteFailed', `cannot write checkpoint ${path}`, { cause });
  }
  let dh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    dh = await open(dir, 'r');
    await dh.sync();
  } catch (cause) {
    throw new DatastoreError('CheckpointWriteFailed', `cannot fsync directory ${dir}`, { cause });
  } finally {
    if (dh !== undefined) await dh.close().catch(() => undefined);
  }
}

/**
 * A {@link GroupCommitCheckpointer} backed by one JSON file, with the same crash-safe write as
 * {@link createFileCheckpointer} (temp file created exclusively with mode 0600, fsync, rename over the
 * checkpoint, fsync of the directory) — but every step runs on libuv's thread pool (`node:fs/promises`),
 * so the event loop never blocks on a disk flush, and changes made while a write is in flight are
 * coalesced into the next one: under load, one write makes many assignments durable.
 *
 * A failed write (the directory is gone or read-only, the disk is full, …) removes its temp file and
 * rejects the commits it was for with `CheckpointWriteFailed`; the file then holds the previous complete
 * checkpoint or, if only the directory fsync failed, the new one. `read` is synchronous (used once, at
 * start-up, before any write); a missing file reads as `undefined`.
 *
 * @example
 * ```ts
 * const ds = new Datastore({
 *   clock: systemClock,
 *   checkpointer: createGroupCommitFileCheckpointer('/var/run/aws-node/ipam.json'),
 * });
 * const change = ds.assignPending({ networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' });
 * await change.durable; // only now tell the runtime about change.result.address
 * ```
 */
export function createGroupCommitFileCheckpointer(
  path: string,
  options: FileCheckpointerOptions = {},
): GroupCommitFileCheckpointer {
  const mode = options.mode ?? 0o600;
  const core = createGroupCommit((text) => writeDurably(path, text, mode));
  return {
    path,
    read(): string | undefined {
      try {
        return readFileSync(path, 'utf8');
      } catch (cause) {
        if (errnoOf(cause) === 'ENOENT') return undefined;
        throw new DatastoreError('CheckpointReadFailed', `cannot read checkpoint ${path}`, { cause });
      }
    },
    commit: core.commit,
    stats: core.stats,
    idle: core.idle,
  };
}
