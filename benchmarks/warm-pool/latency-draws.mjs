#!/usr/bin/env node
// How much the adaptive policy's verdicts depend on one EC2 latency draw. Every EC2 call of a simulated run takes
// its latency from one seeded stream (node-sim.mjs), so one extra call re-deals every later draw, and the report
// judges each trace on one such draw: the trace's own seed. Here each tuning and held-out trace keeps its
// arrivals (and its pod-watch leads) and the whole judge is run again under K latency seeds — the static grid and
// with it the default and the Pareto front, the adaptive policy without and with the pod watch — and the script
// prints, per trace, in how many of the K draws the goal is met, and per set how many traces meet it per draw.
// It also judges each trace once on every run's means over the K draws (every static setting's, the default's and
// the adaptive policy's expected cold starts and idle address-hours): one draw's judge compares the policy with
// the static setting that was best in hindsight of that draw; an operator picks one setting for all of them.
// The first draw is the report's own (the trace's seed). Nothing here chooses anything; held-out traces are
// only reported.
//
//   node benchmarks/warm-pool/latency-draws.mjs [--draws K] [--markdown]
import { commandLine } from '../../scripts/lib/cli.mjs';
import { formatTable, prng } from './lib.mjs';
import { ADAPTIVE_POLICY, simulate } from './node-sim.mjs';
import { judge, traces, verdict } from './report.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "How much the adaptive policy's per-trace verdicts depend on one EC2 latency draw: every tuning and\n" +
    'held-out trace judged again (static grid, default, adaptive without and with the pod watch) under K\n' +
    "latency seeds, its arrivals and pod-watch leads kept; the first draw is the report's own. Each trace is\n" +
    "also judged once on every run's means over the K draws.",
  options: {
    draws: {
      type: 'count',
      default: 10,
      min: 2,
      value: 'K',
      description: "latency draws per trace, the report's own first (≈ 10 s each on a shared 2-core machine)",
    },
    markdown: { type: 'boolean', description: 'print Markdown tables' },
  },
});
const K = args.draws;
const markdown = args.markdown;

/** The trace's own seed (the report's draw), then K − 1 latency seeds drawn from a stream mixed from it. */
function latencySeeds(seed) {
  const next = prng((seed ^ 0x27d4eb2f) >>> 0);
  return [seed, ...Array.from({ length: K - 1 }, () => Math.floor(next() * 2 ** 32))];
}

/** The verdicts of one trace under one latency seed. `leads`: with the watch, its leads re-dealt too. */
function judgeDraw(trace, latencySeed) {
  const r = judge(trace, 'daemon', latencySeed);
  const leadsM = simulate(trace.events, ADAPTIVE_POLICY, latencySeed, { loop: 'daemon', podWatch: true });
  return {
    statics: r.statics,
    def: r.def.m,
    adaptive: { m: r.adaptive.m, v: r },
    watched: { m: r.watched.m, v: r.watched },
    leads: { m: leadsM, v: verdict(r.statics, r.def, leadsM) },
  };
}

const MODES = [
  ['watched', 'with the pod watch'],
  ['adaptive', 'without it'],
  ['leads', "with the pod watch, its leads re-dealt too (the watch's own seed = the latency seed)"],
];

const t0 = performance.now();
const all = traces().map((trace) => ({ trace, seeds: latencySeeds(trace.seed), draws: [] }));
for (let k = 0; k < K; k++) {
  const t = performance.now();
  for (const r of all) r.draws.push(judgeDraw(r.trace, r.seeds[k]));
  process.stderr.write(`draw ${k + 1}/${K}: ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}

/** The range of `xs` as printed: `lo–hi`, or one value when both print the same. */
const span = (xs, f = (x) => String(x)) => {
  const [lo, hi] = [f(Math.min(...xs)), f(Math.max(...xs))];
  return lo === hi ? lo : `${lo}–${hi}`;
};
const pct = (x) => `${Math.round(100 * x)}`;
const metCount = (r, mode) => r.draws.filter((d) => d[mode].v.met).length;
/** Of the draws that miss, how many fail each of the goal's tests (and who dominates most often). */
const why = (r, mode) => {
  const vs = r.draws.map((d) => d[mode].v).filter((v) => !v.met);
  if (vs.length === 0) return '–';
  const by = new Map();
  for (const v of vs) for (const name of v.dominatedBy) by.set(name, (by.get(name) ?? 0) + 1);
  const top = [...by].sort((a, b) => b[1] - a[1])[0];
  const parts = [
    [vs.filter((v) => !v.noMoreCold).length, 'more cold'],
    [vs.filter((v) => !v.halfIdle).length, 'idle > 50 %'],
    [vs.filter((v) => !v.onFront).length, 'dominated', top ? ` (${top[1]} by ${top[0]})` : ''],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, what, who = '']) => `${what}: ${n}${who}`)
    .join(', ');
};
const mark = (v) => (v.met ? 'met' : 'missed');

/** One run's metrics summed over the K draws (the judge's measures only): the means, times K, exact for counts. */
const summed = (ms) => ({
  coldStarts: ms.reduce((a, m) => a + m.coldStarts, 0),
  idleAddressHours: ms.reduce((a, m) => a + m.idleAddressHours, 0),
  waitedPodS: ms.reduce((a, m) => a + m.waitedPodS, 0),
});
/**
 * The goal judged once on each run's totals over the K draws (equivalently its means): every static setting, the
 * default and the adaptive policy compared on expected cold starts and idle address-hours, not on one draw.
 */
for (const r of all) {
  const statics = r.draws[0].statics.map((s, i) => ({
    name: s.name,
    m: summed(r.draws.map((d) => d.statics[i].m)),
  }));
  const def = { m: summed(r.draws.map((d) => d.def)) };
  r.onMeans = {};
  for (const [mode] of MODES) r.onMeans[mode] = verdict(statics, def, summed(r.draws.map((d) => d[mode].m)));
}
/** Why the verdict on the means misses: the test it fails (and who dominates the means). */
const whyMeans = (v) =>
  v.met
    ? 'met'
    : [
        v.noMoreCold ? '' : 'more cold',
        v.halfIdle ? '' : 'idle > 50 %',
        v.onFront ? '' : `dominated by ${v.dominatedBy.join(', ')}`,
      ]
        .filter((x) => x !== '')
        .join('; ');

console.log(
  `warm-pool verdicts under K = ${K} EC2 latency draws per trace (daemon pool loop; arrivals and pod-watch leads fixed; draw 1 = the report's)\n`,
);
const rows = [
  [
    'trace',
    'set',
    `met with watch (of ${K})`,
    'without',
    'leads re-dealt too',
    "report's draw (watch / without)",
    'cold: default',
    'adaptive + watch',
    'adaptive',
    'idle-h: default',
    'idle % of default: + watch',
    'adaptive',
    'misses with watch (draws failing each test)',
    'on the means: with watch / without',
  ],
];
for (const r of all) {
  const d0 = r.draws[0];
  rows.push([
    r.trace.id,
    r.trace.set,
    metCount(r, 'watched'),
    metCount(r, 'adaptive'),
    metCount(r, 'leads'),
    `${mark(d0.watched.v)} / ${mark(d0.adaptive.v)}`,
    span(r.draws.map((d) => d.def.coldStarts)),
    span(r.draws.map((d) => d.watched.m.coldStarts)),
    span(r.draws.map((d) => d.adaptive.m.coldStarts)),
    span(
      r.draws.map((d) => d.def.idleAddressHours),
      (x) => x.toFixed(2),
    ),
    span(
      r.draws.map((d) => d.watched.v.idleRatio),
      pct,
    ),
    span(
      r.draws.map((d) => d.adaptive.v.idleRatio),
      pct,
    ),
    why(r, 'watched'),
    `${whyMeans(r.onMeans.watched)} / ${whyMeans(r.onMeans.adaptive)}`,
  ]);
}
console.log(formatTable(rows, markdown));
console.log('');

for (const set of ['tuning', 'held-out']) {
  const rs = all.filter((r) => r.trace.set === set);
  for (const [mode, label] of MODES) {
    const perDraw = Array.from({ length: K }, (_, k) => rs.filter((r) => r.draws[k][mode].v.met).length);
    const mean = perDraw.reduce((a, b) => a + b, 0) / K;
    console.log(
      `${set} (${rs.length} traces), ${label}: met on ${mean.toFixed(1)} of ${rs.length} on average over K = ${K} draws (min ${Math.min(...perDraw)}, max ${Math.max(...perDraw)}; the report's draw: ${perDraw[0]}; per draw: ${perDraw.join(' ')})`,
    );
    const onMeans = rs.filter((r) => r.onMeans[mode].met);
    const missedOnMeans = rs.filter((r) => !r.onMeans[mode].met).map((r) => r.trace.id);
    console.log(
      `  judged on each run's means over the ${K} draws: met on ${onMeans.length} of ${rs.length} (missed: ${missedOnMeans.length === 0 ? 'none' : missedOnMeans.join(', ')})`,
    );
    if (mode === 'leads') continue;
    const always = rs.filter((r) => metCount(r, mode) === K);
    const never = rs.filter((r) => metCount(r, mode) === 0);
    const flips = rs.filter((r) => metCount(r, mode) > 0 && metCount(r, mode) < K);
    const names = (xs, n) =>
      xs.length === 0 ? 'none' : xs.map((r) => r.trace.id + (n ? ` ${n(r)}/${K}` : '')).join(', ');
    console.log(`  always met: ${always.length}; never met: ${never.length} (${names(never)})`);
    console.log(`  met in some draws: ${flips.length} (${names(flips, (r) => metCount(r, mode))})`);
  }
}
console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`);
