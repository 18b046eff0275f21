#!/usr/bin/env node
// Why the first CronJob burst costs cold starts: the adaptive policy with warm floors (minWarm) from 2 up, on
// the first burst of cronjob-spikes (the trace cut 100 s after it: no period can have been learnt), and what
// the same floor costs on the steady traces the policy must also win (tuning seeds only); the first burst also
// with the pod watch (the steady traces' columns are without it).
//
//   node benchmarks/warm-pool/first-burst.mjs [--markdown]
import { commandLine } from '../../scripts/lib/cli.mjs';
import { dominates, staticGrid } from './grid.mjs';
import { formatTable } from './lib.mjs';
import { ADAPTIVE_POLICY, DEFAULT_POLICY, simulate } from './node-sim.mjs';
import { traces } from './report.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Why the first CronJob burst costs cold starts: the adaptive policy with warm floors (minWarm) from 2 up on the\n' +
    'first burst of cronjob-spikes, and what the same floor costs on the steady traces.',
  options: { markdown: { type: 'boolean', description: 'print a Markdown table' } },
});

const all = traces().filter((t) => t.set === 'tuning');
const cron = all.filter((t) => t.shape === 'cronjob-spikes');
const others = all.filter((t) =>
  ['steady-churn', 'node-draining', 'slow-drift', 'diurnal'].includes(t.shape),
);
const grids = new Map(others.map((t) => [t.id, staticGrid().map((p) => simulate(t.events, p, t.seed))]));
const defaults = new Map(others.map((t) => [t.id, simulate(t.events, DEFAULT_POLICY, t.seed)]));

const rows = [
  [
    'minWarm',
    'first CronJob burst: cold starts (seeds 1, 2)',
    'with the pod watch',
    'default on it',
    'steady traces dominated by a static setting',
    'steady traces over 50 % of default idle',
  ],
];
for (const minWarm of [2, 3, 4, 5, 6, 8, 10]) {
  const policy = { ...ADAPTIVE_POLICY, adaptive: { minWarm } };
  const first = cron.map((t) => {
    const cut = t.events.filter((e) => e.time < 1000);
    return [
      simulate(cut, policy, t.seed).coldStarts,
      simulate(cut, DEFAULT_POLICY, t.seed).coldStarts,
      simulate(cut, policy, t.seed, { podWatch: true }).coldStarts,
    ];
  });
  let dominated = 0;
  let over = 0;
  for (const t of others) {
    const m = simulate(t.events, policy, t.seed);
    if (grids.get(t.id).some((s) => dominates(s, m))) dominated += 1;
    if (m.idleAddressHours > 0.5 * defaults.get(t.id).idleAddressHours) over += 1;
  }
  rows.push([
    minWarm,
    first.map(([a]) => a).join(', '),
    first.map(([, , w]) => w).join(', '),
    first.map(([, d]) => d).join(', '),
    `${dominated} of ${others.length}`,
    `${over} of ${others.length}`,
  ]);
}
console.log(formatTable(rows, args.markdown));
