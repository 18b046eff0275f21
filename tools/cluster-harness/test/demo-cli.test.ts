/** The demo's command line (the built dist/demo.cjs, as `npm run demo` runs it): no root needed for these. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { awsNodeVersion } from '../src/bin-dir.js';

const demo = fileURLToPath(new URL('../dist/demo.cjs', import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, [demo, ...args], { encoding: 'utf8', timeout: 30_000 });

describe('npm run demo -- …', () => {
  it('is built', () => {
    expect(existsSync(demo), `build first: ${demo}`).toBe(true);
  });

  it('--help prints the usage, --version the aws-node version it runs; both exit 0', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run demo -- \[--keep\]/);
    const version = run('--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`aws-node ${awsNodeVersion()}\n`);
  });

  it('refuses an unknown option or a bad value with the usage and exit 2, before touching anything', () => {
    for (const args of [
      ['--bogus'],
      ['--nodes', 'many'],
      ['--pods'],
      ['stray'],
      ['--down', 'not-an-id'],
      ['--ipv6', '--custom-networking'],
      ['--sgp', '--pods', '2'],
      ['--sgp', '--custom-networking'],
      ['--sgp', '--ipv6'],
    ]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^demo: .+\nusage: npm run demo/);
      expect(r.stdout).toBe('');
    }
  });
});
