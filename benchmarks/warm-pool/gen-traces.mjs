#!/usr/bin/env node
// Writes the three synthetic traces in ./traces (deterministic: fixed seeds). Re-run to regenerate.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { exponential, formatTrace, prng } from './lib.mjs';
import { poisson } from './shapes.mjs';

commandLine(import.meta.url, {
  summary:
    'Writes the three synthetic traces in benchmarks/warm-pool/traces (fixed seeds: the same files every run).',
});

const dir = new URL('./traces/', import.meta.url).pathname;

/** The shipped traces' generator: `poisson` from shapes.mjs with exponential lifetimes of mean `meanLife`. */
function poissonTrace({ seed, meanLife, ...rest }) {
  return poisson({ ...rest, rand: prng(seed), life: (rand) => exponential(rand, meanLife) });
}

// 1. Steady churn: ~12 concurrent pods (at most 20), mean lifetime 5 min, 1 hour.
const steady = poissonTrace({
  seed: 1,
  duration: 3600,
  rate: () => 12 / 300,
  maxRate: 12 / 300,
  meanLife: 300,
  prefix: 'steady',
  cap: 20,
});
writeFileSync(
  join(dir, 'steady-churn.csv'),
  formatTrace(
    steady,
    'steady churn: Poisson arrivals 0.04/s, exponential lifetime (mean 300 s), at most 20 running, 1 h, seed 1',
  ),
);

// 2. Diurnal ramp: a compressed day of 2 h; target concurrency swings 2 → 20 → 2 (sinusoid), lifetime 10 min.
const meanLife = 600;
const diurnal = poissonTrace({
  seed: 2,
  duration: 7200,
  rate: (t) => (2 + 18 * (0.5 - 0.5 * Math.cos((2 * Math.PI * t) / 7200))) / meanLife,
  maxRate: 20 / meanLife,
  meanLife,
  prefix: 'diurnal',
  cap: 24,
});
writeFileSync(
  join(dir, 'diurnal-ramp.csv'),
  formatTrace(
    diurnal,
    'diurnal ramp: arrivals follow concurrency 2 -> 20 -> 2 over 2 h (sinusoid), lifetime mean 600 s, at most 24 running, seed 2',
  ),
);

// 3. Burst: 5 long-lived pods, then 100 pods within 10 s at t = 60 s (a Job fan-out), each living 240-360 s.
const rand = prng(3);
const burst = [];
for (let i = 1; i <= 5; i++) burst.push({ time: i, event: 'add', pod: `base-${i}` });
for (let i = 1; i <= 100; i++) {
  const start = 60 + rand() * 10;
  burst.push({ time: start, event: 'add', pod: `job-${i}` });
  burst.push({ time: start + 240 + rand() * 120, event: 'del', pod: `job-${i}` });
}
writeFileSync(
  join(dir, 'burst-100.csv'),
  formatTrace(burst, 'burst: 5 base pods, then 100 pods in 10 s at t=60 s living 240-360 s, seed 3'),
);
console.log(`wrote ${steady.length}, ${diurnal.length}, ${burst.length} events to ${dir}`);
