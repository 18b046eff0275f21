import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BucketClock, TokenBucket } from '../src/index.js';

/** A clock that moves only when slept on or advanced: sleeps resolve at once and add to `now`. */
class TestClock implements BucketClock {
  constructor(private at = 1_000_000) {}
  now(): number {
    return this.at;
  }
  sleep(ms: number): Promise<void> {
    this.at += Math.max(0, ms);
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

describe('TokenBucket', () => {
  it('serves the burst at once, then one token per refill interval', async () => {
    const clock = new TestClock();
    const bucket = new TokenBucket({ capacity: 3, refillPerSecond: 2 }, clock);
    const start = clock.now();
    for (let i = 0; i < 3; i++) expect(await bucket.take()).toBe(0);
    expect(clock.now()).toBe(start);
    expect(await bucket.take()).toBe(500);
    expect(await bucket.take()).toBe(500);
    expect(clock.now() - start).toBe(1000);
  });

  it('tryTake takes nothing and says how long to wait when empty', () => {
    const clock = new TestClock();
    const bucket = new TokenBucket({ capacity: 1, refillPerSecond: 4 }, clock);
    expect(bucket.tryTake()).toBe(0);
    expect(bucket.tryTake()).toBe(250);
    clock.advance(100);
    expect(bucket.tryTake()).toBe(150);
    clock.advance(150);
    expect(bucket.tryTake()).toBe(0);
  });

  it('never holds more than its capacity, however long it idles', () => {
    const clock = new TestClock();
    const bucket = new TokenBucket({ capacity: 5, refillPerSecond: 10 }, clock);
    clock.advance(3_600_000);
    expect(bucket.available()).toBe(5);
  });

  it('drain empties it so the next take waits a full refill', async () => {
    const clock = new TestClock();
    const bucket = new TokenBucket({ capacity: 10, refillPerSecond: 1 }, clock);
    bucket.drain();
    expect(await bucket.take()).toBe(1000);
  });

  it('rejects a bucket that could never serve', () => {
    const clock = new TestClock();
    expect(() => new TokenBucket({ capacity: 0, refillPerSecond: 1 }, clock)).toThrow(RangeError);
    expect(() => new TokenBucket({ capacity: 1, refillPerSecond: 0 }, clock)).toThrow(RangeError);
  });

  it('property: n takes starting full never finish before (n - capacity) / rate seconds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 60 }),
        async (cap, rate, n) => {
          const clock = new TestClock(0);
          const bucket = new TokenBucket({ capacity: cap, refillPerSecond: rate }, clock);
          for (let i = 0; i < n; i++) await bucket.take();
          expect(clock.now()).toBeGreaterThanOrEqual(Math.floor((Math.max(0, n - cap) / rate) * 1000) - n);
        },
      ),
    );
  });
});
