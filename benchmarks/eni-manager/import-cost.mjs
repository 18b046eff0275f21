// What importing @vpc-cni-kit/eni-manager costs a process, and proof that it does not load the AWS SDK until the
// first EC2 call. Baseline: `node -e 0`, measured in the same run, interleaved.
//   npx turbo run build --filter=@vpc-cni-kit/eni-manager
//   node benchmarks/eni-manager/import-cost.mjs          # a first argument sets the runs (default 30)
import { spawnSync } from 'node:child_process';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { cleanEnv, table, timeProcesses } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'What importing @vpc-cni-kit/eni-manager costs a process, and whether it loads the AWS SDK before the first\n' +
    'EC2 call, against `node -e 0`, interleaved. Build @vpc-cni-kit/eni-manager first.',
  positionals: [
    { name: 'runs', type: 'count', default: 30, min: 1, description: 'timed processes per variant' },
  ],
});
const RUNS = args.runs;
const probe = spawnSync(
  process.execPath,
  [
    '-e',
    "require('@vpc-cni-kit/eni-manager'); console.log(Object.keys(require.cache).some((p) => p.includes('client-ec2')))",
  ],
  { env: cleanEnv(), encoding: 'utf8' },
);
const results = timeProcesses(
  [
    { name: 'node -e 0 (baseline)', cmd: process.execPath, args: ['-e', '0'] },
    {
      name: 'ESM import of node:http + node:crypto (what it does import)',
      cmd: process.execPath,
      args: ['--input-type=module', '-e', "await import('node:http'); await import('node:crypto')"],
    },
    {
      name: 'import @vpc-cni-kit/eni-manager',
      cmd: process.execPath,
      args: ['--input-type=module', '-e', "await import('@vpc-cni-kit/eni-manager')"],
    },
    {
      name: 'import @aws-sdk/client-ec2 (what is deferred)',
      cmd: process.execPath,
      args: ['--input-type=module', '-e', "await import('@aws-sdk/client-ec2')"],
    },
  ],
  { runs: RUNS },
);
console.log(`SDK loaded by require('@vpc-cni-kit/eni-manager'): ${probe.stdout.trim()}\n`);
console.log(table(results, 'node -e 0 (baseline)'));
