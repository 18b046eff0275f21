#!/usr/bin/env node
// Every bare import in a workspace package must be declared: runtime code (src/) in the package's own
// dependencies or peerDependencies; tests and benchmarks also in its devDependencies or in the root's
// devDependencies (the shared tooling: vitest, fast-check). Built-ins and the package's own name are allowed.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { commandLine } from './lib/cli.mjs';

commandLine(import.meta.url, {
  summary:
    "Checks that every bare import in a workspace package is declared in its package.json (or the root's devDependencies, for tests and benchmarks).",
});

const root = new URL('..', import.meta.url).pathname;
const builtins = new Set(builtinModules);
const importRe =
  /(?:^|[\s;])(?:import|export)\s(?:[^'"]*?\sfrom\s)?['"]([^'"]+)['"]|(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g;

function* files(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(m|c)?[tj]sx?$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

function packageName(spec) {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) ? undefined : name;
}

const rootDev = Object.keys(
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies ?? {},
);
const problems = [];
for (const group of ['packages', 'examples', 'tools']) {
  const base = join(root, group);
  if (!existsSync(base)) continue;
  for (const dir of readdirSync(base)) {
    const pkgDir = join(base, dir);
    const pkgFile = join(pkgDir, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    const runtime = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    const dev = new Set([...runtime, ...Object.keys(pkg.devDependencies ?? {}), ...rootDev]);
    for (const [sub, allowed] of [
      ['src', runtime],
      ['test', dev],
      ['bench', dev],
      ['scripts', dev],
    ]) {
      for (const file of files(join(pkgDir, sub))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(importRe)) {
          const name = packageName(m[1] ?? m[2]);
          if (name && name !== pkg.name && !allowed.has(name)) {
            problems.push(
              `${relative(root, file)}: imports "${name}", not declared in ${pkg.name} (${sub === 'src' ? 'dependencies' : 'any dependency field'})`,
            );
          }
        }
      }
    }
  }
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('check-deps: every import is a declared dependency');
