/**
 * Go's `time.ParseDuration` syntax, which grpc-health-probe's `-connect-timeout` and `-rpc-timeout` take:
 * an optional sign, then one or more decimal numbers each with a unit (`ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`,
 * `h`), e.g. `5s`, `1.5s`, `300ms`, `1m30s`; `0` alone is zero.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const TERM = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/** Milliseconds of a Go duration string, or `undefined` when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const m = TERM.exec(rest);
    if (m === null) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** A duration in milliseconds as Go prints one (`5s`, `1.5s`, `300ms`, `1m30s`), for messages. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (Math.abs(ms) < 1000) return `${+ms.toFixed(6)}ms`;
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${+(rest / 1000).toFixed(9)}s`;
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}`;
}
