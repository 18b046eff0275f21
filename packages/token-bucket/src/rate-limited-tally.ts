import { TokenBucket, type TokenBucketConfig } from './token-bucket.js';

/**
 * The time a {@link RateLimitedTally} runs on: the wall clock in production ({@link timerClock}), a manual clock in
 * tests.
 */
export interface TallyClock {
  /** Milliseconds on this clock (only differences matter). */
  now(): number;
  /** Calls `run` after `ms` milliseconds of this clock's time; the function returned cancels it. */
  schedule(ms: number, run: () => void): () => void;
}

/**
 * The wall clock for a {@link RateLimitedTally}: `Date.now()` and an unref'd `setTimeout`, so a report still due
 * never keeps a process that is otherwise done alive.
 */
export const timerClock: TallyClock = {
  now: () => Date.now(),
  schedule: (ms, run) => {
    const timer = setTimeout(run, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Counts events and hands the count to `report` no more often than a {@link TokenBucket} allows, so a flood of
 * events becomes a few summary lines instead of one line each. The first event is reported at once (the bucket
 * starts full); while the bucket is empty events are only added up, and their sum is reported as soon as the next
 * token is in, without waiting for another event. With `{ capacity: 1, refillPerSecond: 1 / 60 }` that is at most
 * one report a minute, and every event is in a report within a minute of happening.
 */
export class RateLimitedTally {
  readonly #bucket: TokenBucket;
  readonly #clock: TallyClock;
  readonly #report: (count: number) => void;
  #pending = 0;
  #cancel: (() => void) | undefined;

  /**
   * @param rate - how many reports at once (`capacity`) and how often after that (`refillPerSecond`); the same
   *   checks as {@link TokenBucket}'s constructor (a `RangeError`)
   * @param report - receives the number of events since the last report (at least 1)
   */
  constructor(rate: TokenBucketConfig, clock: TallyClock, report: (count: number) => void) {
    this.#bucket = new TokenBucket(rate, {
      now: () => clock.now(),
      sleep: () => Promise.reject(new Error('a tally never waits on its bucket')),
    });
    this.#clock = clock;
    this.#report = report;
  }

  /** Events counted and not reported yet. */
  get pending(): number {
    return this.#pending;
  }

  /** Counts `count` events (a positive integer, else a `RangeError` and nothing counted). */
  add(count = 1): void {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new RangeError(`a tally adds a positive whole number of events, got ${count}`);
    this.#pending += count;
    if (this.#cancel === undefined) this.#tryReport();
  }

  /** Cancels the report that is due, and reports what is pending at once (a last report, past the rate). */
  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    if (this.#pending > 0) this.#flush();
  }

  #tryReport(): void {
    const wait = this.#bucket.tryTake();
    if (wait === 0) this.#flush();
    else
      this.#cancel = this.#clock.schedule(wait, () => {
        this.#cancel = undefined;
        this.#tryReport();
      });
  }

  #flush(): void {
    const count = this.#pending;
    this.#pending = 0;
    this.#report(count);
  }
}
