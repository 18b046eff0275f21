import type { CheckpointContents, Checkpointer } from '../checkpoint.js';
import type { Clock } from '../clock.js';

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
