#!/usr/bin/env node
// `prepack` of every published package (run by `npm pack` and `npm publish` in the package's directory): builds
// the package and what it depends on through turbo (a cache hit when nothing changed), then copies the
// repository's LICENSE and NOTICE beside package.json so the tarball carries them. A clean clone packs a
// complete dist.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from './lib/cli.mjs';

commandLine(import.meta.url, {
  summary:
    "A published package's `prepack` (run by npm in the package's directory): builds it through turbo and copies LICENSE and NOTICE beside its package.json.",
});

const root = new URL('..', import.meta.url).pathname;
const pkgDir = process.cwd();
const { name } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const turbo = join(root, 'node_modules/.bin/turbo');
const r = spawnSync(turbo, ['run', 'build', `--filter=${name}`, '--output-logs=errors-only'], {
  cwd: root,
  // Its output goes to stderr: `npm pack --json` prints the tarball list on stdout.
  stdio: ['ignore', process.stderr, 'inherit'],
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
});
if (r.status !== 0) {
  process.stderr.write(`prepack: building ${name} failed (exit ${r.status ?? r.signal}); run npm ci first\n`);
  process.exit(1);
}
for (const file of ['LICENSE', 'NOTICE']) copyFileSync(join(root, file), join(pkgDir, file));
