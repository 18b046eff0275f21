// What one IP implementation costs a process that starts, parses and exits — the aws-cni plugin's situation
// (it parses the daemon's addresses and the CNI config's CIDRs once per invocation). Three esbuild bundles, each
// parsing and re-formatting one IPv4 address, one IPv6 address and one CIDR, are run as whole processes,
// interleaved: the floor (the same work by hand-inlined string handling: no library), @vpc-cni-kit/ip-address,
// and ipaddr.js (optional: pass the directory of an installed copy, it is not a workspace dependency).
// Reports bundle bytes and the median start-to-exit time against the floor.
//   node benchmarks/ip-address/start-cost.mjs [--ipaddr /path/to/node_modules/ipaddr.js] [--runs N]
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { cleanEnv, table, timeProcesses } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'What one IP implementation costs a process that starts, parses and exits: @vpc-cni-kit/ip-address (and\n' +
    'ipaddr.js, when given) against hand-inlined string handling, as bundles run whole, interleaved.',
  options: {
    ipaddr: {
      type: 'string',
      value: 'DIR',
      description: 'also time ipaddr.js from this installed copy (not a workspace dependency)',
    },
    runs: { type: 'count', default: 60, min: 1, description: 'timed processes per variant' },
  },
});
const RUNS = args.runs;
const ipaddr = args.ipaddr;
const root = new URL('../..', import.meta.url).pathname;

const entries = {
  floor: `const a='10.0.1.7'.split('.').map(Number), b='2001:db8::1'.split(':'), c='10.0.0.0/16'.split('/');
console.log(a.join('.'), b.join(':'), c.join('/'));`,
  'ip-address': `import { formatCidr, formatIp, parseCidr, parseIp } from ${JSON.stringify(join(root, 'packages/ip-address/src/index.ts'))};
console.log(formatIp(parseIp('10.0.1.7')), formatIp(parseIp('2001:db8::1')), formatCidr(parseCidr('10.0.0.0/16')));`,
};
if (ipaddr) {
  entries['ipaddr.js'] = `import ipaddr from ${JSON.stringify(ipaddr)};
const [n, l] = ipaddr.parseCIDR('10.0.0.0/16');
console.log(ipaddr.parse('10.0.1.7').toString(), ipaddr.parse('2001:db8::1').toString(), n.toString() + '/' + l);`;
}

const dir = mkdtempSync(join(tmpdir(), 'vck-ip-start-'));
try {
  const variants = [];
  const sizes = [];
  for (const [name, source] of Object.entries(entries)) {
    const src = join(dir, `${name}.mjs`);
    const out = join(dir, `${name}.bundle.cjs`);
    writeFileSync(src, source);
    await build({
      entryPoints: [src],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      minify: true,
      logLevel: 'error',
    });
    sizes.push(`| ${name} | ${statSync(out).size} |`);
    variants.push({ name, cmd: process.execPath, args: [out], env: cleanEnv() });
  }
  const results = timeProcesses(variants, { runs: RUNS, warmup: 3 });
  console.log(
    `parse + format one v4, one v6, one CIDR; one process each, ${RUNS} runs, interleaved (${process.version})\n`,
  );
  console.log(['| bundle | minified bytes |', '| --- | --- |', ...sizes].join('\n'));
  console.log('');
  console.log(table(results, 'floor'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
