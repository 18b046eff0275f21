#!/usr/bin/env node
// Tuning aid for the adaptive policy's defaults: runs candidate settings over the TUNING traces only (the
// shipped CSVs and every shape on TUNING_SEEDS) and prints, per candidate, how many traces meet the goal.
// Held-out seeds are never read here. The static grid is run once per trace and shared by the candidates.
//
//   node benchmarks/warm-pool/tune.mjs '{"minWarm":2}' '{"minWarm":1,"band":0.3}' ...
import { dominates } from './grid.mjs';
import { ADAPTIVE_POLICY, simulate } from './node-sim.mjs';
import { judge, traces } from './report.mjs';

const args = process.argv.slice(2);
const watchModes = args.includes('--watch') ? [false, true] : [false];
const candidates = args.filter((a) => !a.startsWith('--')).map((a) => JSON.parse(a));
if (candidates.length === 0) candidates.push({});
const tuning = traces().filter((t) => t.set === 'tuning');
const base = tuning.map((t) => judge(t, 'daemon'));
for (const c of candidates)
  for (const podWatch of watchModes) {
    const policy = { ...ADAPTIVE_POLICY, adaptive: c };
    let met = 0;
    let calls = 0;
    const notes = [];
    for (const r of base) {
      const m = simulate(r.trace.events, policy, r.trace.seed, { loop: 'daemon', podWatch });
      const beaten = r.statics.filter((s) => dominates(s.m, m));
      const ratio = m.idleAddressHours / Math.max(r.def.m.idleAddressHours, 1e-9);
      const ok = beaten.length === 0 && ratio <= 0.5 && m.coldStarts <= r.def.m.coldStarts;
      if (ok) met += 1;
      calls += m.ec2Mutating;
      notes.push(
        `${ok ? ' ' : '✗'}${r.trace.id}:${m.coldStarts}/${r.def.m.coldStarts}c,${Math.round(100 * ratio)}%${beaten.length ? `,dom(${beaten[0].name})` : ''}`,
      );
    }
    console.log(
      `${JSON.stringify(c)}${podWatch ? ' with the pod watch' : ''}: met ${met}/${base.length}, EC2 ${calls}\n  ${notes.join(' ')}`,
    );
  }
