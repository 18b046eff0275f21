import { describe, expect, it } from 'vitest';
import { RateLimitedTally, type TallyClock, timerClock } from '../src/index.js';

/** A clock that moves only when advanced, running what is scheduled as its time comes. */
class ManualTallyClock implements TallyClock {
  at = 0;
  readonly due: { at: number; run: () => void }[] = [];
  now(): number {
    return this.at;
  }
  schedule(ms: number, run: () => void): () => void {
    const entry = { at: this.at + ms, run };
    this.due.push(entry);
    return () => {
      const i = this.due.indexOf(entry);
      if (i >= 0) this.due.splice(i, 1);
    };
  }
  advance(ms: number): void {
    const until = this.at + ms;
    for (;;) {
      this.due.sort((a, b) => a.at - b.at);
      const next = this.due[0];
      if (next === undefined || next.at > until) break;
      this.due.shift();
      this.at = next.at;
      next.run();
    }
    this.at = until;
  }
}

const ONCE_A_MINUTE = { capacity: 1, refillPerSecond: 1 / 60 };

describe('RateLimitedTally', () => {
  it('reports the first event at once, sums a flood, and reports the sum when the next token is in', () => {
    const clock = new ManualTallyClock();
    const reports: [number, number][] = [];
    const tally = new RateLimitedTally(ONCE_A_MINUTE, clock, (n) => reports.push([clock.now(), n]));
    tally.add();
    expect(reports).toEqual([[0, 1]]);
    for (let i = 0; i < 999; i++) {
      clock.advance(10);
      tally.add();
    }
    // 9 990 ms in: one report so far, the rest waiting for the minute.
    expect(reports).toEqual([[0, 1]]);
    expect(tally.pending).toBe(999);
    clock.advance(60_000 - clock.now());
    expect(reports).toEqual([
      [0, 1],
      [60_000, 999],
    ]);
    // Quiet for ten minutes: nothing more, nothing scheduled; the next event is reported at once.
    clock.advance(600_000);
    expect(reports).toHaveLength(2);
    expect(clock.due).toHaveLength(0);
    tally.add(3);
    expect(reports.at(-1)).toEqual([660_000, 3]);
  });

  it('never reports twice within the refill interval, and loses no event', () => {
    const clock = new ManualTallyClock();
    const reports: [number, number][] = [];
    const tally = new RateLimitedTally(ONCE_A_MINUTE, clock, (n) => reports.push([clock.now(), n]));
    let added = 0;
    for (let t = 0; t < 10 * 60_000; t += 777) {
      clock.advance(777);
      tally.add(2);
      added += 2;
    }
    clock.advance(60_000);
    for (let i = 1; i < reports.length; i++)
      expect(reports[i]![0] - reports[i - 1]![0]).toBeGreaterThanOrEqual(60_000);
    expect(reports.reduce((sum, [, n]) => sum + n, 0)).toBe(added);
  });

  it('stop() cancels the report due and reports what is pending at once', () => {
    const clock = new ManualTallyClock();
    const reports: number[] = [];
    const tally = new RateLimitedTally(ONCE_A_MINUTE, clock, (n) => reports.push(n));
    tally.add();
    tally.add(4);
    expect(clock.due).toHaveLength(1);
    tally.stop();
    expect(reports).toEqual([1, 4]);
    expect(clock.due).toHaveLength(0);
    tally.stop();
    expect(reports).toEqual([1, 4]);
  });

  it('refuses a count that is not a positive whole number, and a bad rate, with a RangeError', () => {
    const tally = new RateLimitedTally(ONCE_A_MINUTE, new ManualTallyClock(), () => {
      throw new Error('nothing is reported');
    });
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => tally.add(bad)).toThrow(RangeError);
    expect(tally.pending).toBe(0);
    expect(() => new RateLimitedTally({ capacity: 0, refillPerSecond: 1 }, timerClock, () => {})).toThrow(
      RangeError,
    );
  });

  it('timerClock runs what it schedules, and cancels it', async () => {
    const ran: string[] = [];
    timerClock.schedule(5, () => ran.push('kept'));
    const cancel = timerClock.schedule(5, () => ran.push('cancelled'));
    cancel();
    await new Promise((r) => setTimeout(r, 30));
    expect(ran).toEqual(['kept']);
  });
});
