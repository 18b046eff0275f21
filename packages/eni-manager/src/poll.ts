import { type BackoffPolicy, backoffDelay } from './backoff.js';
import type { Clock, RandomSource } from './clock.js';

/** How {@link pollUntil} paces itself. */
export interface PollOptions {
  /** Backoff between probes. */
  readonly backoff: BackoffPolicy;
  /** Give up once this many ms have passed on the clock. */
  readonly deadlineMs: number;
  /** Clock for the sleeps and the deadline. */
  readonly clock: Clock;
  /** Jitter source. */
  readonly random: RandomSource;
}

/**
 * Probes until `probe` returns `{ done: true }` or the deadline passes, sleeping a jittered, growing delay
 * between probes (never past the deadline). Resolves to the last probe's value and whether it was done.
 */
export async function pollUntil<T>(
  probe: () => Promise<{ done: boolean; value: T }>,
  options: PollOptions,
): Promise<{ done: boolean; value: T; probes: number }> {
  const deadline = options.clock.now() + options.deadlineMs;
  for (let n = 0; ; n++) {
    const result = await probe();
    if (result.done) return { ...result, probes: n + 1 };
    const left = deadline - options.clock.now();
    if (left <= 0) return { ...result, probes: n + 1 };
    await options.clock.sleep(Math.min(left, backoffDelay(options.backoff, n, options.random)));
  }
}
