// The two aws-cni builds' start alone (CNI_COMMAND=VERSION: start, answer, exit; no daemon, no libcni), each
// copied alone into a scratch directory as on a node's /opt/cni/bin: the single executable application
// (dist/bin/aws-cni) against the launcher script (dist/bin/aws-cni.cjs, run by `node` from PATH as its
// shebang does) and the floor `node -e 0`, interleaved round-robin.
// Build first: TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/plugin-start.mjs     # --runs N (default 60)
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { cleanEnv, table, timeProcesses } from '../lib/timing.mjs';
import { binDir } from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "The two aws-cni builds' start alone (CNI_COMMAND=VERSION): the single executable application against the\n" +
    'launcher script and the `node -e 0` floor, interleaved. Build @vpc-cni-kit/aws-node first.',
  options: { runs: { type: 'count', default: 60, min: 1, description: 'timed starts per variant' } },
});
const RUNS = args.runs;
const dir = mkdtempSync(join(tmpdir(), 'vck-plugin-start-'));
try {
  const sea = join(dir, 'aws-cni');
  const launcher = join(dir, 'aws-cni.cjs');
  copyFileSync(join(binDir, 'aws-cni'), sea);
  copyFileSync(join(binDir, 'aws-cni.cjs'), launcher);
  const env = cleanEnv({ CNI_COMMAND: 'VERSION' });
  const results = timeProcesses(
    [
      { name: 'node -e 0 (floor)', cmd: process.execPath, args: ['-e', '0'], env },
      { name: 'aws-cni single executable', cmd: sea, env },
      { name: 'aws-cni launcher (#!/usr/bin/env node)', cmd: launcher, env },
    ],
    { runs: RUNS, warmup: 3 },
  );
  const mib = (p) => (statSync(p).size / 2 ** 20).toFixed(1);
  console.log(`aws-cni VERSION, one process each, ${RUNS} runs, interleaved (${process.version})`);
  console.log(`sizes: single executable ${mib(sea)} MiB, launcher ${mib(launcher)} MiB\n`);
  console.log(table(results, 'node -e 0 (floor)'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
