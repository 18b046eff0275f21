import type { ActionFamily } from './actions/common.js';
import type { Clock } from './clock.js';

/** Capacity and refill of one token bucket. */
export interface BucketLimit {
  /** Maximum tokens (burst). */
  readonly burst: number;
  /** Tokens added per second. */
  readonly refillPerSecond: number;
}

/** Bucket per family, plus `unbounded-describe` for unfiltered, unpaginated Describe* calls. */
export type RateLimits = Readonly<Record<ActionFamily | 'unbounded-describe', BucketLimit>>;

/** AWS's published per-account, per-Region limits ("Request throttling for the Amazon EC2 API"). */
export const AWS_RATE_LIMITS: RateLimits = {
  describe: { burst: 100, refillPerSecond: 20 },
  'unbounded-describe': { burst: 50, refillPerSecond: 10 },
  mutating: { burst: 50, refillPerSecond: 5 },
  'eni-lifecycle': { burst: 100, refillPerSecond: 5 },
  'ipv4-assign': { burst: 100, refillPerSecond: 5 },
  'ipv6-assign': { burst: 100, refillPerSecond: 5 },
  'modify-eni': { burst: 100, refillPerSecond: 5 },
  tags: { burst: 100, refillPerSecond: 10 },
};

/** Token buckets keyed by family, refilled continuously from an injected clock. */
export class TokenBuckets {
  readonly #limits: RateLimits;
  readonly #clock: Clock;
  readonly #state = new Map<string, { tokens: number; at: number }>();

  /**
   * @param limits - per-family limits
   * @param clock - time source
   */
  constructor(limits: RateLimits, clock: Clock) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Takes one token from the family's bucket; false when it is empty (the call is throttled). */
  take(family: keyof RateLimits): boolean {
    const limit = this.#limits[family];
    const now = this.#clock.now();
    const s = this.#state.get(family) ?? { tokens: limit.burst, at: now };
    s.tokens = Math.min(limit.burst, s.tokens + ((now - s.at) / 1000) * limit.refillPerSecond);
    s.at = now;
    this.#state.set(family, s);
    if (s.tokens < 1) return false;
    s.tokens -= 1;
    return true;
  }

  /** Tokens left in each bucket that has been used (for the state dump). */
  levels(): Record<string, number> {
    return Object.fromEntries([...this.#state].map(([k, v]) => [k, Math.floor(v.tokens)]));
  }

  /** Refills every bucket. */
  reset(): void {
    this.#state.clear();
  }
}
