/**
 * The time a bucket refills on: the wall clock in production, a manual clock in tests. eni-manager's and
 * ec2-simulator's clocks are both of this shape.
 */
export interface BucketClock {
  /** Milliseconds on this clock (only differences matter). */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
}

/** Size and refill rate of one token bucket. */
export interface TokenBucketConfig {
  /** Maximum tokens held (the burst). At least 1. */
  readonly capacity: number;
  /** Tokens added per second. Greater than 0. */
  readonly refillPerSecond: number;
}

/**
 * A token bucket on an injected clock, the model EC2 uses for its API limits: it holds up to `capacity` tokens,
 * refills continuously at `refillPerSecond`, and starts full. A call takes one token. A client waits for one
 * ({@link TokenBucket.take}); a server refuses the call when there is none ({@link TokenBucket.tryTake}).
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #clock: BucketClock;
  #tokens: number;
  #updatedAt: number;

  /** A full bucket. */
  constructor(config: TokenBucketConfig, clock: BucketClock) {
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
