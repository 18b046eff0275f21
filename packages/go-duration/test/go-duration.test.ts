import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatGoDuration, parseGoDuration } from '../src/index.js';

describe('formatGoDuration', () => {
  // What Go's time.Duration.String() prints for the same durations (fmt.Println(d)).
  it.each([
    [0, '0s'],
    [0.000001, '1ns'],
    [0.000999, '999ns'],
    [0.0015, '1.5µs'],
    [0.25, '250µs'],
    [1.5, '1.5ms'],
    [1.000001, '1.000001ms'],
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1000.000001, '1.000000001s'],
    [30_000, '30s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [3_723_500, '1h2m3.5s'],
    [86_400_000, '24h0m0s'],
    [-2500, '-2.5s'],
    [-0.5, '-500µs'],
    [-120_500, '-2m0.5s'],
  ])('%s ms is %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });

  it('rounds to whole nanoseconds, as a Duration holds them', () => {
    expect(formatGoDuration(0.0000004)).toBe('0s');
    expect(formatGoDuration(1.0000006)).toBe('1.000001ms');
  });

  it('refuses what is not a finite number', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
      expect(() => formatGoDuration(bad)).toThrow(RangeError);
  });
});

describe('parseGoDuration', () => {
  it('reads time.ParseDuration syntax into milliseconds', () => {
    expect(parseGoDuration('5s')).toBe(5000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('300ms')).toBe(300);
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1h')).toBe(3_600_000);
    expect(parseGoDuration('2h45m')).toBe(9_900_000);
    expect(parseGoDuration('250us')).toBeCloseTo(0.25);
    expect(parseGoDuration('250µs')).toBeCloseTo(0.25);
    expect(parseGoDuration('250μs')).toBeCloseTo(0.25);
    expect(parseGoDuration('1500ns')).toBeCloseTo(0.0015);
    expect(parseGoDuration('.5s')).toBe(500);
    expect(parseGoDuration('1.s')).toBe(1000);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('+0')).toBe(0);
    expect(parseGoDuration('-1s')).toBe(-1000);
    expect(parseGoDuration('+2m')).toBe(120_000);
  });

  it.each([
    '',
    '-',
    '5',
    '5x',
    '1s2',
    'five seconds',
    '1d',
    's',
    '1 s',
    ' 1s',
    '1s ',
    '1.5',
    '--1s',
    '1sm',
    '.s',
    '1e3s',
  ])('%j is not a duration', (bad) => {
    expect(parseGoDuration(bad)).toBeUndefined();
  });

  it('reads back what formatGoDuration prints, to the nanosecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e14, max: 1e14 }), (ns) => {
        const back = parseGoDuration(formatGoDuration(ns / 1e6));
        expect(back).toBeDefined();
        expect(Math.round((back as number) * 1e6)).toBe(ns === 0 ? 0 : ns);
      }),
    );
  });
});
