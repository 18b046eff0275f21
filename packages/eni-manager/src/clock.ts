/**
 * Time as this package sees it. Every wait and every age check goes through a `Clock`, so tests can run a
 * throttling storm or a five-minute leak window without waiting and without patching `Date.now`.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
}

/** A source of uniformly distributed numbers in `[0, 1)`, injected wherever jitter is applied. */
export type RandomSource = () => number;

/** The wall clock: `Date.now()` and `setTimeout`. What a daemon passes in production. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};
