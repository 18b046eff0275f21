// Trace shapes for the warm-pool simulator: each is a function of a seed, so the same shape can be drawn with
// seeds the adaptive policy was tuned on and with seeds it never saw (HELD_OUT_SEEDS).
import { exponential, prng } from './lib.mjs';

/** Seeds the adaptive policy's defaults were tuned on. */
export const TUNING_SEEDS = [1, 2];
/** Seeds never used while tuning: the held-out check. */
export const HELD_OUT_SEEDS = [1001, 1002, 1003];

/** Pods arrive as a Poisson process with rate(t) (per s) and live `life(rand)` s; at most `cap` at once. */
export function poisson({ rand, duration, rate, maxRate, life, prefix, cap, from = 0 }) {
  const events = [];
  const ends = [];
  let t = from;
  let n = 0;
  for (;;) {
    t += exponential(rand, 1 / maxRate);
    if (t >= duration) break;
    if (rand() > rate(t) / maxRate) continue;
    if (ends.filter((e) => e > t).length >= cap) continue;
    const l = Math.max(5, life(rand));
    n += 1;
    const pod = `${prefix}-${n}`;
    events.push({ time: t, event: 'add', pod });
    if (t + l < duration) events.push({ time: t + l, event: 'del', pod });
    ends.push(t + l);
  }
  return events;
}

const expLife = (mean) => (rand) => exponential(rand, mean);

/** A node that runs CronJobs: light churn (0.01 pods/s, lifetimes mean 10 min, at most 8) and 6 long-running pods, 2 h. */
function cronNode(rand) {
  const events = poisson({
    rand,
    duration: 7200,
    rate: () => 0.01,
    maxRate: 0.01,
    life: expLife(600),
    prefix: 'svc',
    cap: 8,
  });
  for (let i = 1; i <= 6; i++) events.push({ time: i * 2, event: 'add', pod: `base-${i}` });
  return events;
}

/**
 * Each shape: a description and a generator `(seed) → events`. Concurrency stays within one m5.large. An add
 * event may name its pod's `owner` (a Job created with all its pods at once: a batch Job, a CronJob's run); pods
 * a ReplicaSet replaces one at a time carry none. With the pod watch node-sim.mjs passes a bound pod's owner as
 * a Job's (`observation.boundJobPods`); its `ownerHint` option (owner-hint.mjs) also counts an owner's pods to
 * come.
 */
export const SHAPES = {
  'steady-churn': {
    what: 'Poisson arrivals 0.04/s, exponential lifetimes (mean 5 min), at most 20 running, 1 h',
    gen: (seed) =>
      poisson({
        rand: prng(seed),
        duration: 3600,
        rate: () => 0.04,
        maxRate: 0.04,
        life: expLife(300),
        prefix: 'steady',
        cap: 20,
      }),
  },
  diurnal: {
    what: 'a compressed day of 3 h with a morning and an evening peak: concurrency 3 → 22 → 8 → 24 → 3, lifetimes mean 10 min',
    gen: (seed) => {
      const level = (t) => {
        const x = t / 10800;
        return 3 + 19 * Math.exp(-(((x - 0.3) / 0.1) ** 2)) + 21 * Math.exp(-(((x - 0.72) / 0.1) ** 2));
      };
      return poisson({
        rand: prng(seed),
        duration: 10800,
        rate: (t) => level(t) / 600,
        maxRate: 25 / 600,
        life: expLife(600),
        prefix: 'diurnal',
        cap: 26,
      });
    },
  },
  'flash-crowd': {
    what: '6 pods of background churn; at a random minute between 20 and 40 the arrival rate jumps 20× for 3 min (to ~24 pods), 1 h',
    gen: (seed) => {
      const rand = prng(seed);
      const at = 1200 + rand() * 1200;
      return poisson({
        rand,
        duration: 3600,
        rate: (t) => (t >= at && t < at + 180 ? 0.4 : 0.02),
        maxRate: 0.4,
        life: (r) => (r() < 0.5 ? exponential(r, 300) : 240 + r() * 600),
        prefix: 'flash',
        cap: 26,
      });
    },
  },
  'batch-jobs': {
    what: 'Jobs arrive at random (mean every 8 min), each fanning out 4–14 pods within 5 s that run 1–4 min, 2 h',
    gen: (seed) => {
      const rand = prng(seed);
      const events = [];
      let t = 0;
      let job = 0;
      for (;;) {
        t += exponential(rand, 480);
        if (t > 7200) break;
        job += 1;
        const n = 4 + Math.floor(rand() * 11);
        for (let i = 1; i <= n; i++) {
          const start = t + rand() * 5;
          const pod = `job${job}-${i}`;
          events.push({ time: start, event: 'add', pod, owner: `job${job}` });
          events.push({ time: start + 60 + rand() * 180, event: 'del', pod });
        }
      }
      return events;
    },
  },
  'slow-drift': {
    what: 'concurrency drifts from 4 to 24 over 2 h and back to 10 in the third hour, lifetimes mean 15 min',
    gen: (seed) => {
      const level = (t) => (t < 7200 ? 4 + (20 * t) / 7200 : 24 - (14 * (t - 7200)) / 3600);
      return poisson({
        rand: prng(seed),
        duration: 10800,
        rate: (t) => level(t) / 900,
        maxRate: 24 / 900,
        life: expLife(900),
        prefix: 'drift',
        cap: 26,
      });
    },
  },
  'cronjob-spikes': {
    what: '6 long-running pods with light churn; every 15 min a CronJob starts 10 pods within 2 s that run 30–90 s, 2 h',
    gen: (seed) => {
      const rand = prng(seed);
      const events = cronNode(rand);
      for (let k = 1; k * 900 < 7200; k++) {
        for (let i = 1; i <= 10; i++) {
          const start = k * 900 + rand() * 2;
          const pod = `cron${k}-${i}`;
          events.push({ time: start, event: 'add', pod, owner: `cron${k}` });
          events.push({ time: start + 30 + rand() * 60, event: 'del', pod });
        }
      }
      return events;
    },
  },
  'node-draining': {
    what: 'a node filling to ~22 pods with churn; at 40 min it is drained (every pod evicted within 60 s) and stays cordoned 20 min, 1 h',
    gen: (seed) => {
      const rand = prng(seed);
      const drainAt = 2400;
      const raw = poisson({
        rand,
        duration: drainAt,
        rate: (t) => (t < 300 ? 0.08 : 0.02),
        maxRate: 0.08,
        life: expLife(1500),
        prefix: 'app',
        cap: 24,
      });
      const live = new Set();
      for (const e of raw.sort((a, b) => a.time - b.time)) {
        if (e.event === 'add') live.add(e.pod);
        else live.delete(e.pod);
      }
      for (const pod of live) raw.push({ time: drainAt + rand() * 60, event: 'del', pod });
      raw.push({ time: 3600, event: 'add', pod: 'after-uncordon' });
      return raw;
    },
  },
  'aligned-cronjobs': {
    what: '6 long-running pods with light churn; three single-pod CronJobs every 1, 5 and 10 min start at the top of the minute (within 2 s), so every 10 min all three fire together; each pod runs 10–40 s, 2 h',
    gen: (seed) => {
      const rand = prng(seed);
      const events = cronNode(rand);
      for (const [name, period] of [
        ['every1m', 60],
        ['every5m', 300],
        ['every10m', 600],
      ]) {
        for (let k = 1; k * period < 7200; k++) {
          const start = k * period + rand() * 2;
          const pod = `${name}-${k}`;
          events.push({ time: start, event: 'add', pod, owner: pod });
          events.push({ time: start + 10 + rand() * 30, event: 'del', pod });
        }
      }
      return events;
    },
  },
};

/** The shapes already shipped as CSV files under traces/ (seed fixed when they were written). */
export const SHIPPED = ['steady-churn.csv', 'diurnal-ramp.csv', 'burst-100.csv'];

/**
 * The owner of a shipped trace's pod, from its name (the CSV has no owner column): `burst-100`'s `job-N` pods are
 * one Job's fan-out (gen-traces.mjs); every other shipped pod has none.
 */
export function shippedOwner(trace, pod) {
  return trace === 'burst-100' && /^job-\d+$/.test(pod) ? 'job' : undefined;
}
