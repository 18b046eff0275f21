import { TokenBucket } from '@vpc-cni-kit/token-bucket';
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

/** Token buckets keyed by family (`@vpc-cni-kit/token-bucket`), each created full on its family's first call. */
export class TokenBuckets {
  readonly #limits: RateLimits;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, TokenBucket>();

  /**
   * @param limits - per-family limits
   * @param clock - time source
   */
  constructor(limits: RateLimits, clock: Clock) {
    this.#limits = limits;
    this.#clock = clock;
    // A limit no bucket can serve (burst < 1, refill <= 0) is a RangeError now, not on the first call.
    for (const family of Object.keys(limits) as (keyof RateLimits)[]) this.#bucket(family);
    this.#buckets.clear();
  }

  /** Takes one token from the family's bucket; false when it is empty (the call is throttled). */
  take(family: keyof RateLimits): boolean {
    return this.#bucket(family).tryTake() === 0;
  }

  /** Tokens left in each bucket that has been used (for the state dump). */
  levels(): Record<string, number> {
    return Object.fromEntries([...this.#buckets].map(([k, b]) => [k, Math.floor(b.available())]));
  }

  /** Refills every bucket. */
  reset(): void {
    this.#buckets.clear();
  }

  #bucket(family: keyof RateLimits): TokenBucket {
    let bucket = this.#buckets.get(family);
    if (bucket === undefined) {
      const limit = this.#limits[family];
      bucket = new TokenBucket(
        { capacity: limit.burst, refillPerSecond: limit.refillPerSecond },
        this.#clock,
      );
      this.#buckets.set(family, bucket);
    }
    return bucket;
  }
}
