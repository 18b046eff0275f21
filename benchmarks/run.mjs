#!/usr/bin/env node
// `npm run bench`: the benchmarks that run in seconds on a virtual clock and need no privileges — the warm-pool
// report (per trace: the static grid's Pareto front, the default's and the adaptive policy's rows, the goal
// check on tuning and held-out seeds; charts with --svg-dir) and the cluster-at-scale table. Build first
// (`npm run build`). The other benchmarks are listed in benchmarks/README.md.
import { spawnSync } from 'node:child_process';
import { commandLine } from '../scripts/lib/cli.mjs';
import { REPORT_OPTIONS } from './warm-pool/report.mjs';

const args = process.argv.slice(2);
const { values } = commandLine(
  import.meta.url,
  {
    summary:
      'The benchmarks that run on a virtual clock and need no privileges: the warm-pool report, then the\n' +
      "cluster-at-scale table. The options are the report's; --markdown goes to both.",
    options: REPORT_OPTIONS,
  },
  args,
);
const dir = new URL('./warm-pool/', import.meta.url).pathname;
for (const script of ['report.mjs', 'cluster.mjs']) {
  const r = spawnSync(
    process.execPath,
    [`${dir}${script}`, ...(script === 'report.mjs' ? args : values.markdown ? ['--markdown'] : [])],
    {
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}
