import type { RandomSource } from './clock.js';

/**
 * Jittered exponential backoff: attempt `n` (0-based) waits `min(maxMs, baseMs × factor^n)`, stretched by up to
 * `jitter` of itself (the reference's `wait.Backoff` shape: 100 ms → 1 min, ×2, jitter 0.15 for the IMDS wait).
 */
export interface BackoffPolicy {
  /** First delay, in milliseconds. */
  readonly baseMs: number;
  /** Ceiling for the un-jittered delay, in milliseconds. */
  readonly maxMs: number;
  /** Growth per attempt; at least 1. */
  readonly factor: number;
  /** Fraction of the delay added at random, in `[0, 1]`. */
  readonly jitter: number;
}

/** The reference's policy for waiting on IMDS after an attach (100 ms → 60 s, ×2, jitter 0.15). */
export const imdsWaitBackoff: BackoffPolicy = { baseMs: 100, maxMs: 60_000, factor: 2, jitter: 0.15 };

/** Default policy for retrying a throttled or transient EC2 call (200 ms → 20 s, ×2, jitter 0.5). */
export const ec2RetryBackoff: BackoffPolicy = { baseMs: 200, maxMs: 20_000, factor: 2, jitter: 0.5 };

/**
 * The delay before retry `attempt` (0 for the first retry). Pure: the jitter comes from `random`.
 * The result is always finite, non-negative and at most `maxMs × (1 + jitter)`.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: RandomSource): number {
  const factor = Math.max(1, policy.factor);
  const base = Math.max(0, policy.baseMs);
  const cap = Math.max(base, policy.maxMs);
  const n = Math.max(0, Math.floor(attempt));
  // Growth is computed in the log domain so a large attempt number cannot overflow to Infinity.
  const raw = n * Math.log(factor) > Math.log(cap / Math.max(base, 1e-9)) ? cap : base * factor ** n;
  const delay = Math.min(cap, raw);
  const r = Math.min(Math.max(random(), 0), 1);
  const jitter = Math.min(Math.max(policy.jitter, 0), 1);
  return delay * (1 + jitter * r);
}
