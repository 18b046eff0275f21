import type { CheckpointContents, Checkpointer, GroupCommitCheckpointer } from '../checkpoint.js';
import type { Clock } from '../clock.js';
import { createGroupCommit, type GroupCommitStats } from '../group-commit.js';

/**
 * A {@link Checkpointer} that keeps the checkpoint text in memory, for tests. It serializes on every write
 * (as a real adapter does), counts writes, and can be told to fail: `failWrites(n)` makes the next `n`
 * writes throw, `failReads()` makes reads throw. Seed it with `text` to test restores.
 */
export class InMemoryCheckpointer implements Checkpointer {
  /** The last successfully written (or seeded) checkpoint text; `undefined` = no checkpoint. */
  text: string | undefined;
  /** Number of successful writes. */
  writes = 0;
  private failingWrites = 0;
  private failingReads = false;

  constructor(initial?: string) {
    this.text = initial;
  }

  /** Makes the next `count` writes throw an `Error` (default 1). */
  failWrites(count = 1): void {
    this.failingWrites = count;
  }

  /** Makes reads throw until called with `false`. */
  failReads(fail = true): void {
    this.failingReads = fail;
  }

  /** The stored checkpoint, parsed as JSON (or `undefined`). */
  json(): unknown {
    return this.text === undefined ? undefined : JSON.parse(this.text);
  }

  read(): string | undefined {
    if (this.failingReads) throw new Error('InMemoryCheckpointer: read failure (injected)');
    return this.text;
  }

  write(contents: CheckpointContents): void {
    if (this.failingWrites > 0) {
      this.failingWrites -= 1;
      throw new Error('InMemoryCheckpointer: write failure (injected)');
    }
    this.text = contents.serialize();
    this.writes += 1;
  }
}

/**
 * A {@link GroupCommitCheckpointer} that keeps the checkpoint text in memory, for tests, on the same
 * coalescing core as the file adapter. Writes complete asynchronously (after a macrotask), and can be
 * held in flight with `hold()` until `release()`, so a test decides which changes share a write;
 * `failWrites(n)` makes the next `n` writes fail (the stored text is left as it was).
 */
export class InMemoryGroupCommitCheckpointer implements GroupCommitCheckpointer {
  /** The last successfully written (or seeded) checkpoint text; `undefined` = no checkpoint. */
  text: string | undefined;
  /** Every successfully written text, oldest first. */
  readonly history: string[] = [];
  private failingWrites = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private readonly core = createGroupCommit(async (text) => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.gate !== undefined) await this.gate;
    if (this.failingWrites > 0) {
      this.failingWrites -= 1;
      throw new Error('InMemoryGroupCommitCheckpointer: write failure (injected)');
    }
    this.text = text;
    this.history.push(text);
  });

  constructor(initial?: string) {
    this.text = initial;
  }

  /** Makes the next `count` writes fail (default 1). */
  failWrites(count = 1): void {
    this.failingWrites = count;
  }

  /** Holds writes in flight (a started write does not complete) until {@link release}. */
  hold(): void {
    if (this.gate !== undefined) return;
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  /** Lets held writes complete. */
  release(): void {
    const open = this.open;
    this.gate = undefined;
    this.open = undefined;
    open?.();
  }

  /** Commits, writes and failed writes so far. */
  stats(): GroupCommitStats {
    return this.core.stats();
  }

  /** Resolves once no write is in flight or queued. */
  idle(): Promise<void> {
    return this.core.idle();
  }

  /** The stored checkpoint, parsed as JSON (or `undefined`). */
  json(): unknown {
    return this.text === undefined ? undefined : JSON.parse(this.text);
  }

  read(): string | undefined {
    return this.text;
  }

  commit(contents: CheckpointContents): Promise<void> {
    return this.core.commit(contents);
  }
}

/** A {@link Clock} that only moves when told to. Starts at `start` ms (default 1 700 000 000 000). */
export class ManualClock implements Clock {
  private t: number;

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.t += ms;
  }

  /** Sets the time. */
  set(ms: number): void {
    this.t = ms;
  }
}
