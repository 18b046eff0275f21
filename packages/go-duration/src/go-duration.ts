/**
 * Go's `time.Duration` text in milliseconds: `time.ParseDuration`'s syntax read, `Duration.String()`'s form
 * written. Programs that stand in for Go ones (grpc-health-probe's flags, the resource controller's Event text)
 * take and print durations exactly as the Go programs do.
 */

/** Nanoseconds per unit, in the units `time.ParseDuration` accepts (`µs` as U+00B5 or U+03BC). */
const UNIT_NS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** One term: a decimal number (`1`, `1.5`, `1.`, `.5`) and its unit. */
const TERM = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Milliseconds of a Go duration string, or `undefined` when it is not one. The syntax of Go's
 * `time.ParseDuration`: an optional sign, then one or more decimal numbers each with a unit (`ns`, `us`/`µs`,
 * `ms`, `s`, `m`, `h`), e.g. `5s`, `1.5s`, `300ms`, `1m30s`, `-2h`; `0` alone is zero. A bare number other
 * than `0`, a space, an unknown unit or an empty string is `undefined`.
 */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let ms = 0;
  while (rest !== '') {
    const m = TERM.exec(rest);
    if (m === null) return undefined;
    ms += Number(m[1]) * ((UNIT_NS[m[2] as string] as number) / 1e6);
    rest = rest.slice(m[0].length);
  }
  return sign * ms;
}

/**
 * A duration in milliseconds as Go's `Duration.String()` prints it (rounded to whole nanoseconds): `0s`;
 * under a second in the largest of `ns`, `µs` (U+00B5) and `ms` that fits (`250µs`, `1.5ms`, `500ms`); else hours,
 * minutes and seconds with the seconds' fraction, leading zero units left out (`1.5s`, `1m30s`, `1h0m0s`,
 * `-2m0.5s`). `RangeError` for a value that is not finite.
 */
export function formatGoDuration(ms: number): string {
  if (!Number.isFinite(ms))
    throw new RangeError(`formatGoDuration: not a finite number of milliseconds: ${ms}`);
  const ns = Math.round(Math.abs(ms) * 1e6);
  if (ns === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${decimal(ns, 1e3)}µs`;
  if (ns < 1e9) return `${sign}${decimal(ns, 1e6)}ms`;
  const h = Math.floor(ns / UNIT_NS_H);
  const m = Math.floor((ns - h * UNIT_NS_H) / UNIT_NS_M);
  const s = `${decimal(ns - h * UNIT_NS_H - m * UNIT_NS_M, 1e9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

const UNIT_NS_H = 3600e9;
const UNIT_NS_M = 60e9;

/** `n / per` in decimal, its fraction's trailing zeros (and a fraction of zero) left out; `per` a power of ten. */
function decimal(n: number, per: number): string {
  const whole = Math.floor(n / per);
  const fraction = n - whole * per;
  if (fraction === 0) return String(whole);
  const digits = String(per).length - 1;
  return `${whole}.${String(fraction).padStart(digits, '0').replace(/0+$/, '')}`;
}
