import type { Clock } from './clock.js';

/** Size and refill rate of one token bucket. */
export interface TokenBucketConfig {
  /** Maximum tokens held (the burst). At least 1. */
  readonly capacity: number;
  /** Tokens added per second. Greater than 0. */
  readonly refillPerSecond: number;
}

/**
 * A client-side token bucket on an injected clock, the same model EC2 uses for its own limits. A call takes one
 * token; with none left, {@link TokenBucket.take} sleeps on the clock until one has refilled.
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #clock: Clock;
  #tokens: number;
  #updatedAt: number;

  /** A full bucket. */
  constructor(config: TokenBucketConfig, clock: Clock) {
    if (!(config.capacity >= 1) || !(config.refillPerSecond > 0)) {
      throw new RangeError(
        `token bucket needs capacity >= 1 and refillPerSecond > 0, got ${JSON.stringify(config)}`,
      );
    }
    this.#capacity = config.capacity;
    this.#refillPerMs = config.refillPerSecond / 1000;
    this.#clock = clock;
    this.#tokens = config.capacity;
    this.#updatedAt = clock.now();
  }

  /** Tokens available now (fractional while refilling). */
  available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Takes a token if one is available and returns 0; otherwise takes nothing and returns the ms until one is. */
  tryTake(): number {
    this.#refill();
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.#tokens) / this.#refillPerMs);
  }

  /** Takes a token, sleeping on the clock until one is available. Resolves to the milliseconds waited. */
  async take(): Promise<number> {
    let waited = 0;
    for (;;) {
      const wait = this.tryTake();
      if (wait === 0) return waited;
      await this.#clock.sleep(wait);
      waited += wait;
    }
  }

  /** Empties the bucket: used when EC2 itself says `RequestLimitExceeded`, so this client slows down too. */
  drain(): void {
    this.#refill();
    this.#tokens = Math.min(this.#tokens, 0);
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#updatedAt = now;
    this.#tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#refillPerMs);
  }
}
