// What @vpc-cni-kit/cni-spec costs a plugin process at start-up, against `node -e 0` in the same run.
// Run after building: npx turbo run build --filter=@vpc-cni-kit/cni-spec && node benchmarks/cni-spec/import-cost.mjs
// `--runs N` (default 40) per variant.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { cleanEnv, summarize, table, timeProcesses } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'What @vpc-cni-kit/cni-spec costs a plugin process at start-up (a bundled plugin answering VERSION, the bare\n' +
    'CJS and ESM imports), against `node -e 0`, interleaved. Build @vpc-cni-kit/cni-spec first.',
  options: { runs: { type: 'count', default: 40, min: 1, description: 'timed processes per variant' } },
});
const runs = args.runs;
const require = createRequire(import.meta.url);
const cjs = require.resolve('@vpc-cni-kit/cni-spec');
const esm = cjs.replace(/index\.cjs$/, 'index.js');

// The realistic case: a plugin bundled into one file with the skeleton, answering VERSION.
const dir = mkdtempSync(join(tmpdir(), 'vck-bench-'));
const plugin = join(dir, 'plugin.cjs');
await build({
  stdin: {
    contents:
      "require('@vpc-cni-kit/cni-spec').pluginMain({ add: (c) => ({ cniVersion: c.config.cniVersion }), del() {} });",
    resolveDir: process.cwd(),
  },
  outfile: plugin,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  logLevel: 'silent',
});

const empty = join(dir, 'empty.cjs');
writeFileSync(empty, 'module.exports = 1;\n');

const variants = [
  { name: 'node -e 0 (floor)', cmd: 'node', args: ['-e', '0'] },
  { name: 'floor + one stdout write', cmd: 'node', args: ['-e', 'process.stdout.write("{}")'] },
  { name: 'require(cni-spec) CJS', cmd: 'node', args: ['-e', `require(${JSON.stringify(cjs)})`] },
  {
    name: 'import(cni-spec) ESM',
    cmd: 'node',
    args: ['--input-type=module', '-e', `await import(${JSON.stringify(esm)})`],
  },
  {
    name: 'bundled skeleton plugin, VERSION',
    cmd: 'node',
    args: [plugin],
    env: cleanEnv({ CNI_COMMAND: 'VERSION' }),
  },
];
const results = timeProcesses(variants, { runs });

// In-process cost of the require itself, the steadier number, against requiring an empty module (the
// first require() of a process pays for the CommonJS loader whatever it loads).
const inproc = { empty: [], cniSpec: [] };
for (let i = 0; i < 30; i++) {
  for (const [key, file] of [
    ['empty', empty],
    ['cniSpec', cjs],
  ]) {
    const code = `const t=process.hrtime.bigint();require(${JSON.stringify(file)});process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
    inproc[key].push(Number(spawnSync('node', ['-e', code], { env: cleanEnv(), encoding: 'utf8' }).stdout));
  }
}
rmSync(dir, { recursive: true, force: true });

console.log(`cni-spec start-up cost (n=${runs} per variant, interleaved, NODE_EXTRA_CA_CERTS unset)\n`);
console.log(table(results, 'node -e 0 (floor)'));
const e = summarize(inproc.empty).median;
const c = summarize(inproc.cniSpec).median;
console.log(
  `\nin-process require(), n=30: empty module ${e.toFixed(2)} ms, cni-spec ${c.toFixed(2)} ms → cni-spec's own cost ${(c - e).toFixed(2)} ms`,
);
