#!/usr/bin/env node
// The warm-pool report: for every trace (shipped CSVs, every shape on tuning seeds and on held-out seeds), the
// static grid's Pareto front (cold starts vs idle address-hours), the default's and the adaptive policy's rows,
// and whether the adaptive policy meets its goals; then the SVG charts.
//
//   node benchmarks/warm-pool/report.mjs [--loop daemon|reference] [--svg-dir DIR] [--markdown] [--no-front]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { dominates, dominatesWithWaits, paretoFront, RAW_GRID, staticGrid } from './grid.mjs';
import { formatTable, parseTrace } from './lib.mjs';
import { ADAPTIVE_PD_POLICY, ADAPTIVE_POLICY, DEFAULT_POLICY, simulate } from './node-sim.mjs';
import { HELD_OUT_SEEDS, SHAPES, SHIPPED, shippedOwner, TUNING_SEEDS } from './shapes.mjs';
import { paretoSvg, timelineSvg } from './svg.mjs';

/** Every trace of the report: { id, set: 'shipped'|'tuning'|'held-out', shape, seed, events }. */
export function traces() {
  const dir = new URL('./traces/', import.meta.url).pathname;
  const out = [];
  SHIPPED.forEach((f, i) => {
    out.push({
      id: f.replace('.csv', ''),
      set: 'tuning',
      shape: f.replace('.csv', ''),
      seed: 42 + i,
      events: parseTrace(readFileSync(join(dir, f), 'utf8'), f).map((e) => {
        const owner = e.event === 'add' ? shippedOwner(f.replace('.csv', ''), e.pod) : undefined;
        return owner === undefined ? e : { ...e, owner };
      }),
    });
  });
  for (const [shape, s] of Object.entries(SHAPES)) {
    for (const seed of TUNING_SEEDS)
      out.push({ id: `${shape}#${seed}`, set: 'tuning', shape, seed, events: s.gen(seed) });
    for (const seed of HELD_OUT_SEEDS)
      out.push({ id: `${shape}#${seed}`, set: 'held-out', shape, seed, events: s.gen(seed) });
  }
  return out;
}

/** How one adaptive run fares against the grid and the default (the issue's goal, and the one with waits). */
export function verdict(statics, def, m) {
  const dominatedBy = statics.filter((r) => dominates(r.m, m)).map((r) => r.name);
  const dominatedWithWaits = statics.filter((r) => dominatesWithWaits(r.m, m)).map((r) => r.name);
  const idleRatio = m.idleAddressHours / Math.max(def.m.idleAddressHours, 1e-9);
  const onFront = dominatedBy.length === 0;
  const halfIdle = idleRatio <= 0.5;
  const noMoreCold = m.coldStarts <= def.m.coldStarts;
  const noMoreWaiting = m.waitedPodS <= def.m.waitedPodS + 1e-9;
  return {
    dominatedBy,
    dominatedWithWaits,
    idleRatio,
    onFront,
    halfIdle,
    noMoreCold,
    noMoreWaiting,
    /** The issue's judgement: cold starts × idle address-hours. */
    met: onFront && halfIdle && noMoreCold,
    /** With waiting as a third dimension: on the 3-D front, half the idle, no more pod-seconds waited. */
    metWithWaits: dominatedWithWaits.length === 0 && halfIdle && noMoreWaiting,
  };
}

/**
 * Runs the grid, the default and the adaptive policy over one trace: the adaptive policy without the pod watch
 * (a node that cannot reach the API server: the verdict's top-level fields) and with it (`watched`). Every run
 * draws its EC2 latency with `latencySeed` (by default the trace's seed, as the report does; latency-draws.mjs
 * passes others); the pod watch's leads always come from the trace's seed.
 */
export function judge(trace, loop, latencySeed = trace.seed) {
  const opts = { loop, latencySeed };
  const statics = staticGrid().map((p) => ({ name: p.name, m: simulate(trace.events, p, trace.seed, opts) }));
  const def = statics.find((r) => r.name === 'WARM_ENI_TARGET=1');
  const adaptive = { name: 'adaptive', m: simulate(trace.events, ADAPTIVE_POLICY, trace.seed, opts) };
  const watchedM = simulate(trace.events, ADAPTIVE_POLICY, trace.seed, { ...opts, podWatch: true });
  const adaptivePd = {
    name: 'adaptive (PD)',
    m: simulate(trace.events, ADAPTIVE_PD_POLICY, trace.seed, opts),
  };
  return {
    trace,
    statics,
    def: { ...def, name: DEFAULT_POLICY.name },
    adaptive,
    watched: { name: 'adaptive + pod watch', m: watchedM, ...verdict(statics, def, watchedM) },
    adaptivePd,
    pd1: statics.find((r) => r.name === 'PD WARM_PREFIX_TARGET=1'),
    front: paretoFront(statics),
    ...verdict(statics, def, adaptive.m),
  };
}

function row(name, m) {
  const wait = m.coldStarts > 0 ? `${m.coldWaitMeanS.toFixed(1)} / ${m.coldWaitMaxS.toFixed(1)}` : '–';
  return [
    name,
    m.pods,
    m.coldStarts,
    wait,
    m.waitedPodS.toFixed(1),
    m.idleAddressHours.toFixed(2),
    m.avgIdle.toFixed(1),
    m.ec2Mutating,
  ];
}

/** The report's options (`npm run bench` takes them too and passes them on). */
export const REPORT_OPTIONS = {
  loop: {
    type: 'string',
    choices: ['daemon', 'reference'],
    default: 'daemon',
    description: "the pool loop: aws-node's (wakes on demand) or the reference's (a fixed period)",
  },
  'svg-dir': { type: 'string', value: 'DIR', description: 'write the SVG charts there' },
  markdown: { type: 'boolean', description: 'print Markdown tables' },
  'no-front': { type: 'boolean', description: "leave out each trace's Pareto front" },
};

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const { values: args } = commandLine(import.meta.url, {
    summary:
      "The warm-pool report, on a virtual clock: for every trace, the static grid's Pareto front (cold starts vs\n" +
      "idle address-hours), the default's and the adaptive policy's rows, whether the adaptive policy meets its\n" +
      'goals on tuning and held-out seeds; then the SVG charts.',
    options: REPORT_OPTIONS,
  });
  const loop = args.loop;
  const svgDir = args['svg-dir'];
  const markdown = args.markdown;
  const showFront = !args['no-front'];
  const t0 = performance.now();
  const results = traces().map((t) => judge(t, loop));
  console.log(
    `warm-pool report: m5.large-like node, ${loop} pool loop, ${staticGrid().length} distinct static settings from ${RAW_GRID}`,
  );
  console.log(
    `tuning seeds: ${TUNING_SEEDS.join(', ')} (and the shipped CSVs); held-out seeds: ${HELD_OUT_SEEDS.join(', ')}\n`,
  );
  if (showFront) {
    for (const r of results) {
      console.log(`## ${r.trace.id} (${r.trace.set})`);
      const rows = [
        [
          'setting',
          'pods',
          'cold starts',
          'cold wait mean / max (s)',
          'waited (pod-s)',
          'idle addr-h',
          'idle avg',
          'EC2 mutating',
        ],
      ];
      for (const f of r.front) rows.push(row(`front: ${f.name}`, f.m));
      rows.push(row(r.def.name, r.def.m));
      rows.push(row('ADAPTIVE (no pod watch)', r.adaptive.m));
      rows.push(row('ADAPTIVE + pod watch', r.watched.m));
      rows.push(row('adaptive with prefix delegation', r.adaptivePd.m));
      console.log(formatTable(rows, markdown));
      console.log('');
    }
  }
  const goal = (v) =>
    v.met ? 'met' : `MISSED${v.noMoreCold ? '' : ' (more cold)'}${v.halfIdle ? '' : ' (idle > 50%)'}`;
  const goalWithWaits = (v) =>
    v.metWithWaits
      ? 'met'
      : `MISSED${v.noMoreWaiting ? '' : ' (more waiting)'}${v.halfIdle ? '' : ' (idle > 50%)'}${
          v.dominatedWithWaits.length ? ` (dominated: ${v.dominatedWithWaits[0]})` : ''
        }`;
  const front = (v) => (v.onFront ? 'yes' : `no (${v.dominatedBy.length}: ${v.dominatedBy[0]})`);
  const cell = (m) => `${m.coldStarts} / ${m.waitedPodS.toFixed(1)} / ${m.idleAddressHours.toFixed(2)}`;
  const pct = (v) => `${Math.round(100 * (v.idleRatio - 1))}%`;
  const summary = [
    [
      'trace',
      'set',
      'default cold / waited / idle-h',
      'adaptive cold / waited / idle-h',
      'idle vs default',
      'with pod watch cold / waited / idle-h',
      'idle vs default',
      'EC2 default / adaptive / with watch',
      'on Pareto front (adaptive / with watch)',
      'goal',
      'goal with pod watch',
      'goal with waits (adaptive / with watch)',
    ],
  ];
  for (const r of results) {
    const w = r.watched;
    summary.push([
      r.trace.id,
      r.trace.set,
      cell(r.def.m),
      cell(r.adaptive.m),
      pct(r),
      cell(w.m),
      pct(w),
      `${r.def.m.ec2Mutating} / ${r.adaptive.m.ec2Mutating} / ${w.m.ec2Mutating}`,
      `${front(r)} / ${front(w)}`,
      goal(r),
      goal(w),
      `${goalWithWaits(r)} / ${goalWithWaits(w)}`,
    ]);
  }
  console.log(
    '## Adaptive vs the grid and the default, without and with the pod watch (goal: on the front, ≤ 50% of default idle, ≤ default cold; with waits: on the 3-D front of cold × pod-seconds waited × idle, ≤ 50% idle, ≤ default pod-seconds waited)',
  );
  console.log(formatTable(summary, markdown));
  for (const set of ['tuning', 'held-out']) {
    const rs = results.filter((r) => r.trace.set === set);
    for (const [label, pick] of [
      ['adaptive (no pod watch)', (r) => r],
      ['adaptive + pod watch', (r) => r.watched],
    ]) {
      const vs = rs.map(pick);
      console.log(
        `${set}, ${label}: goal met on ${vs.filter((v) => v.met).length}/${rs.length} traces (with waits: ${vs.filter((v) => v.metWithWaits).length}/${rs.length}); on or beyond the Pareto front on ${vs.filter((v) => v.onFront).length}/${rs.length}`,
      );
    }
  }
  const pd = [
    ['trace', 'PD WARM_PREFIX_TARGET=1 cold / idle-h / EC2', 'adaptive with PD cold / idle-h / EC2'],
  ];
  for (const r of results.filter((x) => x.trace.set !== 'held-out' || x.trace.seed === 1001)) {
    const cell = (m) => `${m.coldStarts} / ${m.idleAddressHours.toFixed(2)} / ${m.ec2Mutating}`;
    pd.push([r.trace.id, cell(r.pd1.m), cell(r.adaptivePd.m)]);
  }
  console.log(
    '\n## Prefix delegation (max pods 110; not judged): the reference PD default vs adaptive with PD',
  );
  console.log(formatTable(pd, markdown));
  console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`);

  if (svgDir) {
    mkdirSync(svgDir, { recursive: true });
    const firstOfShape = new Map();
    for (const r of results) if (!firstOfShape.has(r.trace.shape)) firstOfShape.set(r.trace.shape, r);
    for (const [shape, r] of firstOfShape) {
      // Best static: the front's lowest-idle setting with no more cold starts than the default.
      const best =
        r.front
          .filter((f) => f.m.coldStarts <= r.def.m.coldStarts)
          .sort((a, b) => a.m.idleAddressHours - b.m.idleAddressHours)[0] ?? r.front[0];
      const panel = (name, policy, podWatch = false) => {
        const m = simulate(r.trace.events, policy, r.trace.seed, { loop, timeline: true, podWatch });
        return {
          title: name,
          timeline: m.timeline,
          note: `${m.coldStarts} cold starts · ${m.idleAddressHours.toFixed(2)} idle address-hours · ${m.ec2Mutating} EC2 calls`,
          durationS: m.durationS,
        };
      };
      const bestPolicy = staticGrid().find((p) => p.name === best.name);
      const panels = [
        panel(DEFAULT_POLICY.name, DEFAULT_POLICY),
        panel(`best static: ${best.name}`, bestPolicy),
        panel('adaptive (no pod watch)', ADAPTIVE_POLICY),
        panel('adaptive + pod watch', ADAPTIVE_POLICY, true),
      ];
      writeFileSync(
        join(svgDir, `${shape}-timeline.svg`),
        timelineSvg(`${r.trace.id}: addresses over time`, panels, panels[0].durationS),
      );
      writeFileSync(
        join(svgDir, `${shape}-pareto.svg`),
        paretoSvg(
          `${r.trace.id}: idle address-hours vs cold starts`,
          r.statics,
          new Set(r.front.map((f) => f.name)),
          r.def,
          r.adaptive,
          r.watched,
        ),
      );
    }
    console.log(`charts written to ${svgDir}`);
  }
}
