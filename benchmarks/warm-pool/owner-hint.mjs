#!/usr/bin/env node
// The owner hint's upper bound on one node: the adaptive policy with its shipped settings and the pod watch, with
// and without the hint that, when the daemon first sees a pod of a Job bound, counts that Job's pods still to come
// in `bound` (at most the room left on the node). A measurement of a signal, not a policy change and not a tuning
// round: no setting is chosen here. The daemon reads only an owner's kind (a bound pod of a Job, ADR 0047), never
// its size. Owners: batch-jobs' Jobs, cronjob-spikes' and aligned-cronjobs' runs (shapes.mjs) and burst-100's
// fan-out (named in report.mjs's traces by shippedOwner); pods a ReplicaSet replaces one at a time carry none. On a one-node trace every pod of a Job lands on this node: hence an upper bound.
//
//   node benchmarks/warm-pool/owner-hint.mjs [--markdown] [--dev]
import { commandLine } from '../../scripts/lib/cli.mjs';
import { staticGrid } from './grid.mjs';
import { formatTable } from './lib.mjs';
import { ADAPTIVE_POLICY, simulate } from './node-sim.mjs';
import { traces, verdict } from './report.mjs';
import { HELD_OUT_SEEDS, SHAPES, TUNING_SEEDS } from './shapes.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "The owner hint's upper bound on one node: the adaptive policy (shipped settings) with the pod watch, without\n" +
    "and with `bound` counting a Job's pods still to come from its first pod seen bound; the goal's verdict on the\n" +
    'tuning and held-out traces.',
  options: {
    markdown: { type: 'boolean', description: 'print Markdown tables' },
    dev: {
      type: 'boolean',
      description: 'also every shape on development seeds 3-42 (280 traces), summarised per shape (≈ 1 min)',
    },
  },
});

/** Development seeds: neither tuning nor held-out (as `tune.mjs --dev-seeds 3-42`). */
const DEV_SEEDS = Array.from({ length: 40 }, (_, i) => 3 + i);
if (DEV_SEEDS.some((s) => TUNING_SEEDS.includes(s) || HELD_OUT_SEEDS.includes(s)))
  throw new Error('owner-hint.mjs: development seeds overlap tuning or held-out seeds');

/** The grid, the default, and the adaptive policy with the pod watch, without and with the owner hint. */
function judge(trace) {
  const statics = staticGrid().map((p) => ({ name: p.name, m: simulate(trace.events, p, trace.seed) }));
  const def = statics.find((r) => r.name === 'WARM_ENI_TARGET=1');
  const run = (ownerHint) => {
    const m = simulate(trace.events, ADAPTIVE_POLICY, trace.seed, { podWatch: true, ownerHint });
    return { m, ...verdict(statics, def, m) };
  };
  return { trace, def, watch: run(false), hint: run(true) };
}

const goal = (v) =>
  v.met
    ? 'met'
    : `MISSED${v.onFront ? '' : ' (dominated)'}${v.noMoreCold ? '' : ' (more cold)'}${v.halfIdle ? '' : ' (idle > 50%)'}`;
const cell = (m) => `${m.coldStarts} / ${m.waitedPodS.toFixed(1)} / ${m.idleAddressHours.toFixed(2)}`;
const pct = (v) => `${Math.round(100 * (v.idleRatio - 1))}%`;

const t0 = performance.now();
const results = traces()
  .filter((t) => t.set === 'tuning' || t.set === 'held-out')
  .map((t) => judge(t));
const rows = [
  [
    'trace',
    'set',
    'default cold / waited / idle-h',
    'pod watch cold / waited / idle-h',
    'idle vs default',
    'goal',
    'watch + owner hint cold / waited / idle-h',
    'idle vs default',
    'goal',
    'EC2 default / watch / hint',
  ],
];
for (const r of results)
  rows.push([
    r.trace.id,
    r.trace.set,
    cell(r.def.m),
    cell(r.watch.m),
    pct(r.watch),
    goal(r.watch),
    cell(r.hint.m),
    pct(r.hint),
    goal(r.hint),
    `${r.def.m.ec2Mutating} / ${r.watch.m.ec2Mutating} / ${r.hint.m.ec2Mutating}`,
  ]);
console.log(
  '## The pod watch without and with the owner hint (goal: on the front, ≤ 50% of default idle, ≤ default cold)',
);
console.log(formatTable(rows, args.markdown));
for (const set of ['tuning', 'held-out']) {
  const rs = results.filter((r) => r.trace.set === set);
  const met = (k) => rs.filter((r) => r[k].met).length;
  console.log(
    `${set}: goal met on ${met('watch')}/${rs.length} with the pod watch, ${met('hint')}/${rs.length} with the owner hint`,
  );
}

if (args.dev) {
  const byShape = [
    [
      'shape (40 seeds each)',
      'met: watch / + hint',
      'cold starts: watch / + hint / default',
      'idle, % of default: watch / + hint',
      'EC2: watch / + hint',
    ],
  ];
  const total = { n: 0, met: [0, 0], cold: [0, 0, 0], idle: [0, 0, 0], ec2: [0, 0] };
  for (const [shape, s] of Object.entries(SHAPES)) {
    const acc = { n: 0, met: [0, 0], cold: [0, 0, 0], idle: [0, 0, 0], ec2: [0, 0] };
    for (const seed of DEV_SEEDS) {
      const r = judge({ id: `${shape}#${seed}`, set: 'dev', shape, seed, events: s.gen(seed) });
      for (const a of [acc, total]) {
        a.n += 1;
        [r.watch, r.hint].forEach((v, i) => {
          a.met[i] += v.met ? 1 : 0;
          a.ec2[i] += v.m.ec2Mutating;
        });
        [r.watch.m, r.hint.m, r.def.m].forEach((m, i) => {
          a.cold[i] += m.coldStarts;
          a.idle[i] += m.idleAddressHours;
        });
      }
    }
    const line = (name, a) => [
      name,
      `${a.met[0]} / ${a.met[1]}`,
      a.cold.join(' / '),
      `${Math.round((100 * a.idle[0]) / a.idle[2])}% / ${Math.round((100 * a.idle[1]) / a.idle[2])}%`,
      a.ec2.join(' / '),
    ];
    byShape.push(line(shape, acc));
    if (shape === Object.keys(SHAPES).at(-1)) byShape.push(line(`all ${total.n}`, total));
  }
  console.log('\n## Development seeds 3-42 (neither tuning nor held-out), by shape');
  console.log(formatTable(byShape, args.markdown));
}
console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`);
