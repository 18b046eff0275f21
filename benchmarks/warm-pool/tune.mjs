#!/usr/bin/env node
import { ADAPTIVE_POLICY } from './node-sim.mjs';
// Tuning aid for the adaptive policy's defaults: runs candidate settings over the TUNING traces only (the
// shipped CSVs and every shape on TUNING_SEEDS) and prints, per candidate, how many traces meet the goal.
// Held-out seeds are never read here.
//
//   node benchmarks/warm-pool/tune.mjs '{"minWarm":2}' '{"minWarm":1,"band":0.3}' ...
import { judge, traces } from './report.mjs';

const candidates = process.argv.slice(2).map((a) => JSON.parse(a));
if (candidates.length === 0) candidates.push({});
const tuning = traces().filter((t) => t.set === 'tuning');
for (const c of candidates) {
  ADAPTIVE_POLICY.adaptive = c;
  const rs = tuning.map((t) => judge(t, 'daemon'));
  const met = rs.filter((r) => r.onFront && r.halfIdle && r.noMoreCold);
  const misses = rs
    .filter((r) => !met.includes(r))
    .map(
      (r) =>
        `${r.trace.id}(${r.adaptive.m.coldStarts}/${r.def.m.coldStarts} cold, ${Math.round(100 * r.idleRatio)}% idle${r.onFront ? '' : `, dominated by ${r.dominatedBy[0]}`})`,
    );
  console.log(`${JSON.stringify(c)}: met ${met.length}/${rs.length}; ${misses.join('; ')}`);
}
