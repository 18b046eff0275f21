/**
 * The prose documentation against the repository as it is: every relative link reaches a file (and its anchor a
 * heading), docs/index.md lists every decision record under its own title, and every environment variable a
 * document names is one the code knows. The decision records themselves are history and are not checked.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  adrIndexEntries,
  documentedCommands,
  documentedVariables,
  markdownAnchors,
  markdownLinks,
} from '../src/doc-checks.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));

const dirs = (parent: string): string[] =>
  existsSync(join(repo, parent))
    ? readdirSync(join(repo, parent), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${parent}/${e.name}`)
    : [];
const mdIn = (dir: string): string[] =>
  readdirSync(join(repo, dir))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${dir}/${f}`);

/** The prose documents: the root README, docs/ and its guides, and the README of every workspace and folder. */
const documents = [
  'README.md',
  ...mdIn('docs'),
  ...mdIn('docs/guides'),
  ...['packages', 'examples', 'tools', 'deploy', 'benchmarks'].flatMap(dirs).map((d) => `${d}/README.md`),
  'benchmarks/README.md',
].filter((f) => existsSync(join(repo, f)));

/**
 * The text of the code that reads the environment and produces the codes: sources, test support, scripts,
 * manifests and package manifests.
 */
function codeText(): string {
  const workspaces = ['packages', 'examples', 'tools'].flatMap(dirs);
  const roots = [
    ...workspaces.flatMap((d) => [`${d}/src`, `${d}/manifests`, `${d}/test/support`, `${d}/package.json`]),
    'benchmarks',
    'scripts',
    'deploy',
    'third-party-notices.ts',
  ];
  const parts: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist' && e.name !== 'test') walk(path);
      } else if (/\.(ts|mjs|cjs|js|sh|ya?ml|json)$/.test(e.name)) parts.push(readFileSync(path, 'utf8'));
    }
  };
  for (const r of roots) {
    const path = join(repo, r);
    if (!existsSync(path)) continue;
    if (statSync(path).isDirectory()) walk(path);
    else parts.push(readFileSync(path, 'utf8'));
  }
  return parts.join('\n');
}

const anchorsOf = new Map<string, Set<string>>();
function anchors(path: string): Set<string> {
  let set = anchorsOf.get(path);
  if (set === undefined) {
    set = markdownAnchors(readFileSync(path, 'utf8'));
    anchorsOf.set(path, set);
  }
  return set;
}

it('finds the documents', () => {
  expect(documents).toContain('examples/aws-node/README.md');
  expect(documents).toContain('docs/guides/warm-pool.md');
  expect(documents.length).toBeGreaterThan(30);
});

describe.each(documents)('%s', (doc) => {
  const text = readFileSync(join(repo, doc), 'utf8');

  it('links only to files and anchors that exist', () => {
    const broken: string[] = [];
    for (const link of markdownLinks(text)) {
      const target = link.path === '' ? join(repo, doc) : resolve(dirname(join(repo, doc)), link.path);
      const where = `${doc}:${link.line}: ${link.path}${link.anchor === undefined ? '' : `#${link.anchor}`}`;
      if (!existsSync(target)) broken.push(`${where} (no such file)`);
      else if (
        link.anchor !== undefined &&
        target.endsWith('.md') &&
        statSync(target).isFile() &&
        !anchors(target).has(link.anchor)
      )
        broken.push(`${where} (no such heading in ${relative(repo, target)})`);
    }
    expect(broken).toEqual([]);
  });
});

it('names only environment variables and codes that the code knows', () => {
  const code = codeText();
  // Kernel build options (`CONFIG_…`) are the kernel's, not ours.
  const known = (name: string) => name.startsWith('CONFIG_') || new RegExp(`\\b${name}\\b`).test(code);
  const unknown = documents.flatMap((doc) =>
    documentedVariables(readFileSync(join(repo, doc), 'utf8'))
      .filter((v) => !known(v.name))
      .map((v) => `${doc}:${v.line}: ${v.name}`),
  );
  expect(unknown).toEqual([]);
});

it("aws-node's README names only variables the daemon, its init step or its plugins read", () => {
  const doc = 'examples/aws-node/README.md';
  const daemonSources: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.ts')) daemonSources.push(readFileSync(join(dir, e.name), 'utf8'));
  };
  walk(join(repo, 'examples/aws-node/src'));
  const code = daemonSources.join('\n');
  const unknown = documentedVariables(readFileSync(join(repo, doc), 'utf8'))
    .filter((v) => !new RegExp(`['"\`]${v.name}['"\`]|^\\s*${v.name}:`, 'm').test(code))
    .map((v) => `${doc}:${v.line}: ${v.name}`);
  expect(unknown).toEqual([]);
});

it('docs/index.md lists every decision record once, under its own title', () => {
  const entries = adrIndexEntries(readFileSync(join(repo, 'docs/index.md'), 'utf8'));
  const files = readdirSync(join(repo, 'docs/adr'))
    .filter((f) => /^\d{4}-.*\.md$/.test(f))
    .sort();
  expect(entries.map((e) => e.file).sort()).toEqual(files.map((f) => `adr/${f}`));
  for (const e of entries) {
    const heading = readFileSync(join(repo, 'docs', e.file), 'utf8').split('\n')[0] ?? '';
    expect(`${heading} (docs/index.md:${e.line})`).toBe(
      `# ADR ${e.number}: ${e.title} (docs/index.md:${e.line})`,
    );
  }
});

/** A benchmark script's `--help` (every one answers it before doing anything: scripts/lib/cli.mjs). */
const helpOf = new Map<string, Promise<string>>();
function help(script: string): Promise<string> {
  let text = helpOf.get(script);
  if (text === undefined) {
    text = new Promise((resolve) =>
      execFile(
        process.execPath,
        [join(repo, script), '--help'],
        { encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' },
        (_error, stdout, stderr) => resolve(`${stdout}${stderr}`),
      ),
    );
    helpOf.set(script, text);
  }
  return text;
}

it('runs only scripts that exist, npm scripts the root package.json has, and benchmark options their --help lists', async () => {
  const scripts = (
    JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const wrong: string[] = [];
  const withOptions: { where: string; script: string; options: string[] }[] = [];
  for (const doc of documents) {
    for (const c of documentedCommands(readFileSync(join(repo, doc), 'utf8'))) {
      const where = `${doc}:${c.line}`;
      let script = c.target;
      if (c.kind === 'npm') {
        const body = scripts[c.target];
        if (body === undefined) {
          wrong.push(`${where}: npm run ${c.target}: no such script in package.json`);
          continue;
        }
        // `npm run bench -- --flag` passes the flag to the script the npm script runs.
        const run = /^node (benchmarks\/\S+\.mjs)$/.exec(body)?.[1];
        if (run === undefined) continue;
        script = run;
      } else {
        const path = [join(repo, script), resolve(dirname(join(repo, doc)), script)].find((p) =>
          existsSync(p),
        );
        if (path === undefined) {
          wrong.push(`${where}: node ${script}: no such file`);
          continue;
        }
        script = relative(repo, path);
      }
      if (script.startsWith('benchmarks/') && c.options.length > 0)
        withOptions.push({ where, script, options: c.options });
    }
  }
  // Each script's --help once, all started together.
  await Promise.all(withOptions.map((c) => help(c.script)));
  for (const c of withOptions) {
    const text = await help(c.script);
    for (const option of c.options)
      if (!new RegExp(`(^|\\s|\\[)${option}\\b`).test(text))
        wrong.push(`${c.where}: ${c.script} has no ${option}`);
  }
  expect(wrong).toEqual([]);
}, 60_000);
