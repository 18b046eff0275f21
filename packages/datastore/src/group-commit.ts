import type { CheckpointContents } from './checkpoint.js';
import { DatastoreError, isDatastoreError } from './errors.js';

/** Counters of a {@link GroupCommit}, for tests and metrics. */
export interface GroupCommitStats {
  /** `commit` calls so far. */
  readonly commits: number;
  /** Writes attempted so far (each satisfies every commit made before it started). */
  readonly writes: number;
  /** Writes that failed. */
  readonly failedWrites: number;
}

/** The coalescing core of a {@link GroupCommitCheckpointer}: `commit` plus counters and an idle wait. */
export interface GroupCommit {
  /** See {@link GroupCommitCheckpointer.commit}. */
  commit(contents: CheckpointContents): Promise<void>;
  /** Counters so far. */
  stats(): GroupCommitStats;
  /** Resolves once no write is in flight and none is queued (never rejects). */
  idle(): Promise<void>;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

function asWriteFailure(cause: unknown): DatastoreError {
  if (isDatastoreError(cause, 'CheckpointWriteFailed')) return cause;
  return new DatastoreError('CheckpointWriteFailed', 'the checkpoint could not be written', { cause });
}

/**
 * Group commit over any asynchronous text writer: at most one `write` runs at a time; a `commit` made while
 * one runs waits for the next write, which stores the newest contents and satisfies every commit queued
 * behind the running one. The first commit on an idle writer starts its write at once (synchronously
 * serializing the contents and issuing the first I/O), so work the caller does next overlaps the write.
 * A failed write rejects exactly the commits it was meant to satisfy, with a `CheckpointWriteFailed`
 * {@link DatastoreError} (the writer's error as `cause`); later commits get a fresh attempt. After each
 * write, `written(ok)` of the contents it serialized is called before the commits settle and before the
 * next snapshot (see {@link CheckpointContents.written}).
 *
 * @param write Stores the text durably (a rejection means it may or may not have been stored, but what is
 *   stored is a complete checkpoint).
 *
 * @example
 * ```ts
 * const core = createGroupCommit(async (text) => { await store(text); });
 * const checkpointer = { read: () => undefined, commit: core.commit };
 * ```
 */
export function createGroupCommit(write: (text: string) => Promise<void>): GroupCommit {
  let latest: CheckpointContents | undefined;
  let queued: Waiter[] = [];
  let running = false;
  let idleWaiters: (() => void)[] = [];
  let commits = 0;
  let writes = 0;
  let failedWrites = 0;

  async function drain(): Promise<void> {
    running = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      writes += 1;
      const contents = latest!;
      let ok = true;
      let err: DatastoreError | undefined;
      try {
        // Serialize first: the snapshot covers every change made before the commits in `batch`.
        await write(contents.serialize());
      } catch (e) {
        ok = false;
        failedWrites += 1;
        err = asWriteFailure(e);
      }
      // Before anything else (the next snapshot included): let the owner settle or undo the changes.
      try {
        contents.written?.(ok);
      } catch {}
      for (const w of batch) {
        if (ok) w.resolve();
        else w.reject(err);
      }
    }
    running = false;
    const done = idleWaiters;
    idleWaiters = [];
    for (const f of done) f();
  }

  return {
    commit(contents: CheckpointContents): Promise<void> {
      commits += 1;
      latest = contents;
      const p = new Promise<void>((resolve, reject) => {
        queued.push({ resolve, reject });
      });
      if (!running) void drain();
      return p;
    },
    stats: () => ({ commits, writes, failedWrites }),
    idle(): Promise<void> {
      if (!running) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
