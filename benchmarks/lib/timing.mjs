// Shared helpers for benchmarks: interleaved process timing and summary statistics.
import { spawnSync } from 'node:child_process';

/** Median, p10 and p90 of a list of numbers. */
export function summarize(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { n: s.length, median: at(0.5), p10: at(0.1), p90: at(0.9), min: s[0], max: s.at(-1) };
}

/** The environment for start-up timing: NODE_EXTRA_CA_CERTS unset (a container runtime would not set it). */
export function cleanEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/**
 * Times whole processes, interleaved round-robin so drift on a noisy machine hits every variant alike.
 * `variants` is a list of { name, cmd, args, env?, input? }. Returns { name → summary } in milliseconds.
 */
export function timeProcesses(variants, { runs = 30, warmup = 3 } = {}) {
  const samples = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let i = 0; i < warmup + runs; i++) {
    for (const v of variants) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(v.cmd, v.args ?? [], {
        env: v.env ?? cleanEnv(),
        input: v.input ?? '',
        encoding: 'utf8',
      });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0 && !v.allowFailure) {
        throw new Error(`${v.name} failed (${r.status}): ${r.stderr || r.stdout}`);
      }
      if (i >= warmup) samples[v.name].push(ms);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, summarize(s)]));
}

/** Formats a markdown table of process timings with a ratio column against `baseline`. */
export function table(results, baseline) {
  const base = results[baseline].median;
  const rows = Object.entries(results).map(
    ([name, r]) =>
      `| ${name} | ${r.median.toFixed(1)} | ${r.p10.toFixed(1)}–${r.p90.toFixed(1)} | ${r.median - base >= 0 ? '+' : ''}${(r.median - base).toFixed(1)} | ${(r.median / base).toFixed(2)}× |`,
  );
  return [
    '| variant | median ms | p10–p90 ms | Δ vs baseline ms | ratio |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
