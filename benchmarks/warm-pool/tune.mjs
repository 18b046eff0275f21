#!/usr/bin/env node
// Tuning aid for the adaptive policy's defaults: runs candidate settings over the TUNING traces only (the
// shipped CSVs and every shape on TUNING_SEEDS) and prints, per candidate, how many traces meet the goal.
// Held-out seeds are never read here. The static grid is run once per trace and shared by the candidates.
//
// `--dev-seeds A-B` adds every shape on seeds A..B (development traces: neither tuning nor held-out seeds) and
// prints a summary per shape. Two tuning seeds per shape cannot tell a change worth 1–6 cold starts from the
// noise of one re-dealt latency draw; forty development seeds can (docs/guides/warm-pool.md).
//
//   node benchmarks/warm-pool/tune.mjs [--watch] [--dev-seeds 3-42] '{"minWarm":2}' '{"minWarm":1,"band":0.3}' ...
import { commandLine } from '../../scripts/lib/cli.mjs';
import { staticGrid } from './grid.mjs';
import { ADAPTIVE_POLICY, simulate } from './node-sim.mjs';
import { traces, verdict } from './report.mjs';
import { HELD_OUT_SEEDS, SHAPES, TUNING_SEEDS } from './shapes.mjs';

const { values: args, refuse } = commandLine(import.meta.url, {
  summary:
    "Tuning aid for the adaptive policy's defaults: runs candidate settings over the tuning traces only and\n" +
    'prints, per candidate, how many traces meet the goal. Held-out seeds are never read.',
  options: {
    watch: { type: 'boolean', description: 'run every candidate also with the pod watch' },
    'dev-seeds': {
      type: 'string',
      value: 'A-B',
      description: 'add every shape on seeds A..B (neither tuning nor held-out), summarised per shape',
    },
  },
  positionals: [
    {
      name: 'candidates',
      value: "'<adaptive settings as JSON>'",
      rest: true,
      description: 'candidates, e.g. \'{"minWarm":2}\' (default: one, the shipped defaults {})',
    },
  ],
});

/** The seeds of `--dev-seeds A-B`, refused when they reach a tuning or held-out seed. */
function devSeeds(spec) {
  const m = /^(\d+)-(\d+)$/.exec(spec ?? '');
  if (m === null) refuse(`--dev-seeds takes a range A-B of whole numbers, not ${JSON.stringify(spec)}`);
  const [from, to] = [Number(m[1]), Number(m[2])];
  if (from < 1 || to < from || to - from >= 1000)
    refuse(`--dev-seeds ${spec}: want 1 ≤ A ≤ B, at most 1000 seeds`);
  const seeds = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const clash = seeds.filter((s) => TUNING_SEEDS.includes(s) || HELD_OUT_SEEDS.includes(s));
  if (clash.length > 0)
    refuse(
      `--dev-seeds ${spec} includes seed ${clash.join(', ')} (tuning: ${TUNING_SEEDS.join(', ')}; held-out, never tuned on: ${HELD_OUT_SEEDS.join(', ')})`,
    );
  return seeds;
}

const watch = args.watch;
const seeds = args['dev-seeds'] === undefined ? [] : devSeeds(args['dev-seeds']);
const candidates = args.candidates.map((a) => {
  try {
    return JSON.parse(a);
  } catch {
    return refuse(`a candidate is adaptive settings as JSON, e.g. '{"minWarm":2}', not ${a}`);
  }
});
if (candidates.length === 0) candidates.push({});
const watchModes = watch ? [false, true] : [false];

const all = traces().filter((t) => t.set === 'tuning');
for (const [shape, s] of Object.entries(SHAPES))
  for (const seed of seeds)
    all.push({ id: `${shape}#${seed}`, set: 'dev', shape, seed, events: s.gen(seed) });

// The static grid, once per trace (the judge's opponents and the default).
const base = all.map((trace) => {
  const statics = staticGrid().map((p) => ({ name: p.name, m: simulate(trace.events, p, trace.seed) }));
  return { trace, statics, def: statics.find((r) => r.name === 'WARM_ENI_TARGET=1') };
});

for (const c of candidates)
  for (const podWatch of watchModes) {
    const policy = { ...ADAPTIVE_POLICY, adaptive: c };
    const met = { tuning: 0, dev: 0 };
    const count = { tuning: 0, dev: 0 };
    const byShape = new Map();
    let calls = 0;
    const notes = [];
    for (const r of base) {
      const m = simulate(r.trace.events, policy, r.trace.seed, { loop: 'daemon', podWatch });
      const v = verdict(r.statics, r.def, m);
      const ok = v.met;
      count[r.trace.set] += 1;
      if (ok) met[r.trace.set] += 1;
      calls += m.ec2Mutating;
      if (r.trace.set === 'dev') {
        const s = byShape.get(r.trace.shape) ?? { met: 0, n: 0, cold: 0, defCold: 0, idle: 0, defIdle: 0 };
        s.n += 1;
        s.met += ok ? 1 : 0;
        s.cold += m.coldStarts;
        s.defCold += r.def.m.coldStarts;
        s.idle += m.idleAddressHours;
        s.defIdle += r.def.m.idleAddressHours;
        byShape.set(r.trace.shape, s);
      } else
        notes.push(
          `${ok ? ' ' : '✗'}${r.trace.id}:${m.coldStarts}/${r.def.m.coldStarts}c,${Math.round(100 * v.idleRatio)}%${v.dominatedBy.length ? `,dom(${v.dominatedBy[0]})` : ''}`,
        );
    }
    const dev = count.dev > 0 ? `, development ${met.dev}/${count.dev}` : '';
    console.log(
      `${JSON.stringify(c)}${podWatch ? ' with the pod watch' : ''}: met tuning ${met.tuning}/${count.tuning}${dev}, EC2 ${calls}\n  ${notes.join(' ')}`,
    );
    for (const [shape, s] of byShape)
      console.log(
        `  dev ${shape}: met ${s.met}/${s.n}, cold starts ${s.cold} (default ${s.defCold}), idle ${s.idle.toFixed(1)} address-hours (default ${s.defIdle.toFixed(1)}, ${Math.round((100 * s.idle) / s.defIdle)} %)`,
      );
  }
