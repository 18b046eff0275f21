import { type BackoffPolicy, imdsWaitBackoff } from './backoff.js';
import type { Clock, RandomSource } from './clock.js';
import type { Ec2Api } from './ec2/client.js';

/** Deadlines and pacing for the waits inside ENI operations. */
export interface EniTimings {
  /** How long to wait for a new ENI to show in IMDS. Default 30 s. */
  readonly imdsWaitMs: number;
  /** Backoff while waiting on IMDS. Default the reference's (100 ms → 1 min, ×2, jitter 0.15). */
  readonly imdsBackoff: BackoffPolicy;
  /** How long to wait for a detached ENI to become `available`. Default 60 s. */
  readonly detachWaitMs: number;
  /** Backoff while waiting for `available` and between delete retries. Default 200 ms → 10 s, ×2, jitter 0.2. */
  readonly detachBackoff: BackoffPolicy;
}

/** Defaults for {@link EniTimings}. */
export const defaultEniTimings: EniTimings = {
  imdsWaitMs: 30_000,
  imdsBackoff: imdsWaitBackoff,
  detachWaitMs: 60_000,
  detachBackoff: { baseMs: 200, maxMs: 10_000, factor: 2, jitter: 0.2 },
};

/** What the ENI operations share: the EC2 port, time, randomness and timings. */
export interface EniContext {
  readonly ec2: Ec2Api;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly timings: EniTimings;
}
