import { close, constants, fsync, openSync, write } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { createTempFile, tempPathFor } from '@vpc-cni-kit/regular-file';
import type { GroupCommitCheckpointer } from './checkpoint.js';
import { DatastoreError } from './errors.js';
import type { FileCheckpointerOptions } from './file-checkpointer.js';
import { createGroupCommit, type GroupCommitStats } from './group-commit.js';
import { isMemoryBacked } from './internal/memory-fs.js';
import { readCheckpointFile } from './internal/read-file.js';
import { writeFileDurablySync } from './internal/write-sync.js';

/** The file-backed {@link GroupCommitCheckpointer}, with its counters. */
export interface GroupCommitFileCheckpointer extends GroupCommitCheckpointer {
  /** The checkpoint file. */
  readonly path: string;
  /** Commits, writes and failed writes so far (writes < commits when commits were coalesced). */
  stats(): GroupCommitStats;
  /** Resolves once no write is in flight or queued (for a graceful stop); never rejects. */
  idle(): Promise<void>;
  /** Whether writes run in the `commit` call (see {@link GroupCommitFileCheckpointerOptions.inline}). */
  readonly inline: boolean;
}

/** Options for {@link createGroupCommitFileCheckpointer}. */
export interface GroupCommitFileCheckpointerOptions extends FileCheckpointerOptions {
  /**
   * What a completed write survives (default `'power-loss'`).
   * - `'power-loss'`: the temp file is written `O_SYNC` and the directory is fsynced after the rename, so
   *   the checkpoint survives a kernel crash or a power loss. Costs two disk flushes per write.
   * - `'process-crash'`: no disk flush. The rename is still atomic, so a process that is killed (SIGKILL,
   *   OOM) always restarts from a complete, current checkpoint; after a power loss the file may be an older
   *   one (or, on file systems without ext4's rename-over flush, empty). Only for state that a reboot makes
   *   moot anyway — e.g. pod assignments validated at restore against host veths, which a reboot removes.
   */
  readonly durability?: 'power-loss' | 'process-crash';
  /**
   * Write in the `commit` call instead of on libuv's thread pool. The default is `true` when the checkpoint's
   * directory is on a memory-backed file system (tmpfs, ramfs — `/var/run` on most Linux nodes, where the
   * reference keeps `ipam.json`): there `O_SYNC` and `fsync` flush nothing, the whole crash-safe sequence
   * takes microseconds, and the thread pool would only add round trips, each waiting for a worker and then
   * for the event loop to be scheduled. `false` elsewhere, where a disk flush would block the event loop.
   * The guarantees are the same either way.
   */
  readonly inline?: boolean;
}

const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const writeAsync = promisify(write);

/**
 * The crash-safe write with as few thread-pool round trips as possible, since each one waits for a turn of
 * the event loop (and the caller usually keeps the loop busy right after committing). Opening the temp
 * file and the directory are done in the call (microseconds: no data is flushed); the temp file is opened
 * `O_SYNC`, so its write returns only once durable (as write + fsync would) and runs on the thread pool
 * while the caller works; then the rename (with the close alongside) and the directory fsync, so the
 * rename survives a power loss.
 */
async function writeDurably(path: string, text: string, mode: number, flush: boolean): Promise<void> {
  const tmp = tempPathFor(path);
  const dir = dirname(path);
  let fd: number | undefined;
  let dfd: number | undefined;
  try {
    if (flush) dfd = openSync(dir, 'r');
    // Exclusive create; with flush every write is durable (data and metadata) before it returns: write + fsync.
    fd = createTempFile(tmp, mode, flush ? constants.O_SYNC : 0);
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < buf.length) off += (await writeAsync(fd, buf, off, buf.length - off, null)).bytesWritten;
    const closing = closeAsync(fd);
    fd = undefined;
    await Promise.all([rename(tmp, path), closing]);
  } catch (cause) {
    if (fd !== undefined) await closeAsync(fd).catch(() => undefined);
    if (fd !== undefined || dfd !== undefined) await unlink(tmp).catch(() => undefined);
    if (dfd !== undefined) await closeAsync(dfd).catch(() => undefined);
    throw new DatastoreError('CheckpointWriteFailed', `cannot write checkpoint ${path}`, { cause });
  }
  if (dfd === undefined) return;
  try {
    await fsyncAsync(dfd);
  } catch (cause) {
    throw new DatastoreError('CheckpointWriteFailed', `cannot fsync directory ${dir}`, { cause });
  } finally {
    // Off the critical path: the write is durable once the directory fsync returned.
    closeAsync(dfd).catch(() => undefined);
  }
}

/**
 * A {@link GroupCommitCheckpointer} backed by one JSON file, with the same crash-safe write as
 * {@link createFileCheckpointer} (temp file created exclusively with mode 0600 and written durably — `O_SYNC`,
 * equivalent to write + fsync — renamed over the checkpoint, fsync of the directory), but every step that
 * waits for the disk runs on libuv's thread pool (only the two `open`s, which flush nothing, run in the
 * call), so the event loop never blocks on a disk flush; and changes made while a write is in flight are
 * coalesced into the next one: under load, one write makes many assignments durable. On a memory-backed
 * file system the write runs in the call instead ({@link GroupCommitFileCheckpointerOptions.inline}). See
 * {@link GroupCommitFileCheckpointerOptions.durability} for a write that survives a killed process but not
 * a power loss.
 *
 * A failed write (the directory is gone or read-only, the disk is full, …) removes its temp file and
 * rejects the commits it was for with `CheckpointWriteFailed`; the file then holds the previous complete
 * checkpoint or, if only the directory fsync failed, the new one. `read` is synchronous (used once, at
 * start-up, before any write); a missing file reads as `undefined`, and a path that is not a regular file is
 * `CheckpointReadFailed` with its `fileType`, at once (as {@link createFileCheckpointer}'s).
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
  options: GroupCommitFileCheckpointerOptions = {},
): GroupCommitFileCheckpointer {
  const mode = options.mode ?? 0o600;
  const durability = options.durability ?? 'power-loss';
  if (durability !== 'power-loss' && durability !== 'process-crash') {
    throw new DatastoreError('InvalidArgument', `durability must be 'power-loss' or 'process-crash'`);
  }
  const flush = durability === 'power-loss';
  const inline = options.inline ?? isMemoryBacked(dirname(path));
  const core = createGroupCommit(
    inline
      ? async (text) => writeFileDurablySync(path, text, mode, flush)
      : (text) => writeDurably(path, text, mode, flush),
  );
  return {
    path,
    inline,
    read(): string | undefined {
      return readCheckpointFile(path);
    },
    commit: core.commit,
    stats: core.stats,
    idle: core.idle,
  };
}
