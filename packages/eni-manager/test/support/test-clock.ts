import type { Clock } from '../../src/index.js';

/** A clock that only moves when slept on or advanced: sleeps resolve at once and add to `now`. */
export class TestClock implements Clock {
  #now: number;
  readonly sleeps: number[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.#now += Math.max(0, ms);
    return Promise.resolve();
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}

/** A repeatable random source cycling through `values`. */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}
