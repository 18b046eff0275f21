#!/usr/bin/env node
import { ADAPTIVE_DEFAULTS } from '@vpc-cni-kit/warm-pool';
// Can any setting of the adaptive policy meet the goal on `burst-100`? The goal there is a corner: no more cold
// starts than the default (9) and at most half its idle address-hours. This sweeps the settings that move the
// policy along its cold-start × idle trade-off on that trace (how long the start-up prior lasts, how long a surge
// is kept warm, the warm floor, the hysteresis band, how fast the peak is forgotten) and runs each with the pod
// watch and with the owner hint (exact foresight of the 100-pod fan-out from its first pod seen bound: the upper
// bound of owner-hint.mjs). It prints the points no other point dominates and the goal's corner; then, for each
// setting that meets the goal on burst-100 with the pod watch, how many of the other 16 tuning traces it meets
// with the watch. A measurement, not a tuning round: nothing is chosen here and no held-out trace is read.
//
//   node benchmarks/warm-pool/burst-corner.mjs [--markdown]
import { commandLine } from '../../scripts/lib/cli.mjs';
import { dominates, staticGrid } from './grid.mjs';
import { formatTable } from './lib.mjs';
import { ADAPTIVE_POLICY, simulate } from './node-sim.mjs';
import { traces, verdict } from './report.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Can any setting of the adaptive policy meet the goal on burst-100? Sweeps the settings that trade its cold\n' +
    'starts against its idle addresses there, with the pod watch and with an exact owner hint, and prints the\n' +
    "points no other point dominates against the goal's corner, and what the settings that meet it cost on the\n" +
    'other tuning traces.',
  options: { markdown: { type: 'boolean', description: 'print Markdown tables' } },
});

const trace = traces().find((t) => t.id === 'burst-100');
// Its job-N pods carry their Job as `owner` (traces() names it from the pod names, shippedOwner).
const { events } = trace;
const statics = staticGrid().map((p) => ({ name: p.name, m: simulate(events, p, trace.seed) }));
const def = statics.find((r) => r.name === 'WARM_ENI_TARGET=1');

/** The sweep: every combination of these values (the shipped value of each is in it). */
const AXES = {
  startupHalfLifeMs: [1, 30_000, 60_000, 90_000, 120_000, 240_000],
  surgeHalfLifeMs: [1_000, 60_000, 300_000],
  minWarm: [1, 2, 3],
  band: [0.25, 0.5, 1],
  peakHalfLifeMs: [5_000, 15_000],
};
let settings = [{}];
for (const [key, values] of Object.entries(AXES))
  settings = settings.flatMap((s) => values.map((v) => ({ ...s, [key]: v })));

const t0 = performance.now();
const points = [];
for (const adaptive of settings)
  for (const ownerHint of [false, true]) {
    const m = simulate(events, { ...ADAPTIVE_POLICY, adaptive }, trace.seed, { podWatch: true, ownerHint });
    points.push({ adaptive, ownerHint, m, v: verdict(statics, def, m) });
  }
const wallS = (performance.now() - t0) / 1000;

const corner = { cold: def.m.coldStarts, idle: def.m.idleAddressHours / 2 };
const label = (a) =>
  Object.entries(a)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
const describe = (p) => [
  p.ownerHint ? 'watch + owner hint' : 'pod watch',
  label(p.adaptive),
  p.m.coldStarts,
  p.m.idleAddressHours.toFixed(3),
  `${Math.round(100 * p.v.idleRatio)} %`,
  p.v.met ? 'met' : p.m.coldStarts > corner.cold ? 'more cold' : 'idle > 50 %',
];
const header = ['signal', 'setting', 'cold starts', 'idle address-hours', 'of the default', 'goal'];

for (const ownerHint of [false, true]) {
  const mine = points.filter((p) => p.ownerHint === ownerHint);
  const front = mine
    .filter((p) => !mine.some((q) => q !== p && dominates(q.m, p.m)))
    .sort((a, b) => a.m.coldStarts - b.m.coldStarts || a.m.idleAddressHours - b.m.idleAddressHours);
  const seen = new Set();
  const unique = front.filter((p) => {
    const k = `${p.m.coldStarts}/${p.m.idleAddressHours.toFixed(4)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const met = mine.filter((p) => p.v.met).length;
  console.log(
    `\nburst-100, ${ownerHint ? 'pod watch + exact owner hint' : 'pod watch'}: ${mine.length} settings, ${met} meet the goal; ` +
      `the points no other setting beats on both (one row per distinct point):`,
  );
  console.log(formatTable([header, ...unique.map(describe)], args.markdown));
}
// What the settings that meet burst-100 with the pod watch do on the other tuning traces (with the watch).
const isShipped = (a) => Object.entries(a).every(([k, v]) => ADAPTIVE_DEFAULTS[k] === v);
const winners = points.filter((p) => !p.ownerHint && p.v.met && !isShipped(p.adaptive));
const others = traces().filter((t) => t.set === 'tuning' && t.id !== trace.id);
const grids = new Map(
  others.map((t) => [t.id, staticGrid().map((p) => ({ name: p.name, m: simulate(t.events, p, t.seed) }))]),
);
const shipped = { adaptive: {} };
/** Settings with the same burst-100 point and the same misses elsewhere are one row (the first one named). */
const groups = new Map();
for (const p of [shipped, ...winners]) {
  const missed = [];
  for (const t of others) {
    const grid = grids.get(t.id);
    const d = grid.find((r) => r.name === 'WARM_ENI_TARGET=1');
    const m = simulate(t.events, { ...ADAPTIVE_POLICY, adaptive: p.adaptive }, t.seed, { podWatch: true });
    const v = verdict(grid, d, m);
    if (!v.met)
      missed.push(
        `${t.id} (${m.coldStarts}/${d.m.coldStarts}${v.halfIdle ? '' : ', idle > 50 %'}${v.onFront ? '' : ', dominated'})`,
      );
  }
  const own =
    p.m ?? simulate(events, { ...ADAPTIVE_POLICY, adaptive: p.adaptive }, trace.seed, { podWatch: true });
  const point = `${own.coldStarts} / ${own.idleAddressHours.toFixed(3)}`;
  const key = p === shipped ? 'shipped' : `${point}|${missed.join(', ')}`;
  const group = groups.get(key);
  if (group !== undefined) group.count += 1;
  else groups.set(key, { p, point, missed, count: 1 });
}
const costRows = [
  ['setting', 'burst-100 cold / idle', 'other tuning traces met', 'missed (cold starts / default)'],
];
for (const g of [...groups.values()].sort((a, b) => a.missed.length - b.missed.length)) {
  const name = g.p === shipped ? 'shipped defaults' : label(g.p.adaptive);
  costRows.push([
    g.count > 1 ? `${name} (and ${g.count - 1} more alike)` : name,
    g.point,
    `${others.length - g.missed.length} of ${others.length}`,
    g.missed.join(', ') || '–',
  ]);
}
console.log(
  `\nthe shipped defaults and the ${winners.length} other settings that meet the goal on burst-100 with the pod watch, ` +
    'on the other tuning traces (with the watch; settings with the same results are one row):',
);
console.log(formatTable(costRows, args.markdown));

const best = statics
  .filter((r) => r.m.coldStarts <= corner.cold)
  .sort((a, b) => a.m.idleAddressHours - b.m.idleAddressHours)[0];
console.log(
  `\nthe goal's corner: ≤ ${corner.cold} cold starts (the default's) and ≤ ${corner.idle.toFixed(3)} idle address-hours ` +
    `(half the default's ${def.m.idleAddressHours.toFixed(3)}); the least idle static setting with ≤ ${corner.cold} cold ` +
    `starts: ${best.name}, ${best.m.idleAddressHours.toFixed(3)}. ${points.length} runs in ${wallS.toFixed(1)} s.`,
);
