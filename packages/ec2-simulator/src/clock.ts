/** A source of time. The simulator reads time only through this, so tests can drive it by hand. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
}

/** The wall clock (`Date.now` and `setTimeout`). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock that only moves when told to. `sleep` resolves once {@link ManualClock.advance} passes its deadline.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: { until: number; resolve: () => void }[] = [];

  /** @param start - the initial time in ms since the epoch */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  /** The current time. */
  now(): number {
    return this.#now;
  }

  /** Resolves when the clock has been advanced by at least `ms`. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.#sleepers.push({ until: this.#now + ms, resolve }));
  }

  /** Moves time forward by `ms` and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due) s.resolve();
  }
}

/** A source of uniformly distributed numbers in [0, 1). */
export type RandomSource = () => number;

/** A small deterministic generator (mulberry32), so a seeded simulator produces the same ids every run. */
export function seededRandom(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
