#!/usr/bin/env node
// Completes package-lock.json with entries for other platforms' optional packages.
//
// Why: the npm registry mirror these machines use does not serve platform packages for other systems
// (@biomejs/cli-darwin-arm64, @rollup/rollup-win32-x64-msvc, @turbo/darwin-64, … answer 404), so `npm install`
// writes a lock without them, and `npm ci` then refuses that lock as out of sync with package.json. Each
// missing entry is added with the version its parent asks for and the os/cpu/libc its name states, so
// `npm ci` validates the lock and skips the package on this platform without fetching it.
//
// Run after changing dependencies: `npm install && node scripts/complete-lockfile.mjs`. `--check` exits 1 when
// entries are missing (used by the test command).
import { readFileSync, writeFileSync } from 'node:fs';
import { commandLine } from './lib/cli.mjs';

const { values } = commandLine(import.meta.url, {
  summary:
    "Adds package-lock.json entries for other platforms' optional packages, which this registry mirror does not serve.",
  options: { check: { type: 'boolean', description: 'change nothing; exit 1 when entries are missing' } },
});

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = [
  'android',
  'darwin',
  'freebsd',
  'linux',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
  'netbsd',
  'aix',
  'cygwin',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el', 'ppc'];
const ALIASES = {
  windows: 'win32',
  win: 'win32',
  macos: 'darwin',
  mac: 'darwin',
  64: 'x64',
  amd64: 'x64',
  aarch64: 'arm64',
  armv7: 'arm',
};

function platformOf(name) {
  const words = name
    .replace(/^@[^/]+\//, '')
    .split(/[-_.]/)
    .map((w) => ALIASES[w] ?? w);
  const os = words.find((w) => OS.includes(w));
  const cpu =
    words.find((w) => CPU.includes(w)) ??
    (words.includes('eabihf') || words.includes('gnueabihf') ? 'arm' : undefined);
  const libc = words.includes('musl')
    ? 'musl'
    : words.includes('gnu') || words.includes('gnueabihf')
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    // npm resolves from the nearest node_modules: the package's own, then the hoisted root one.
    const candidates = [`${base}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => packages[c] !== undefined)) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (os === undefined && cpu === undefined) continue; // not a platform package: leave it to npm
    const version = String(spec).replace(/^[~^=]/, '');
    if (!/^\d+\.\d+\.\d+/.test(version)) continue;
    missing.push([
      `node_modules/${dep}`,
      {
        version,
        optional: true,
        ...(os ? { os: [os] } : {}),
        ...(cpu ? { cpu: [cpu] } : {}),
        ...(libc ? { libc: [libc] } : {}),
      },
    ]);
  }
}

if (values.check) {
  if (missing.length > 0) {
    console.error(
      `package-lock.json lacks ${missing.length} platform packages; run: node scripts/complete-lockfile.mjs`,
    );
    process.exit(1);
  }
  console.log('complete-lockfile: package-lock.json lists every platform package');
  process.exit(0);
}
for (const [path, entry] of missing) packages[path] ??= entry;
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${missing.length} platform package entries`);
