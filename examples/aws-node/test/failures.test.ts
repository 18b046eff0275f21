/** The daemon's recent-failures ring: bounded, newest first, each with its time. */
import { describe, expect, it } from 'vitest';
import { FailureRing } from '../src/daemon/failures.js';

describe('FailureRing', () => {
  it('lists newest first, and once full each failure replaces the oldest', () => {
    let t = Date.UTC(2026, 0, 1);
    const ring = new FailureRing(3, () => t);
    expect(ring.list()).toEqual([]);
    for (const code of ['A', 'B']) {
      ring.record({ source: 'pool', action: 'assign', code, reason: `r${code}` });
      t += 1000;
    }
    expect(ring.list().map((f) => f.code)).toEqual(['B', 'A']);
    for (const code of ['C', 'D', 'E']) {
      ring.record({ source: 'reconcile', action: 'nodeIPPoolReconcile', code, reason: `r${code}` });
      t += 1000;
    }
    const list = ring.list();
    expect(list.map((f) => f.code)).toEqual(['E', 'D', 'C']);
    expect(list[0]).toEqual({
      time: '2026-01-01T00:00:04.000Z',
      source: 'reconcile',
      action: 'nodeIPPoolReconcile',
      code: 'E',
      reason: 'rE',
    });
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new FailureRing(0)).toThrow(RangeError);
    expect(() => new FailureRing(1.5)).toThrow(RangeError);
  });
});
