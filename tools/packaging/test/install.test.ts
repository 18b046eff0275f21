/**
 * What a stranger does with our packages: `npm pack` every published workspace (its `prepack` builds what the
 * tarball needs; after CI's build that is a turbo cache hit), install the tarballs into scratch projects outside
 * the repository (offline: the npm cache holds every external tarball after `npm ci`), load every entry point
 * from ES modules and CommonJS, typecheck a strict consumer and every README example under node16, nodenext and
 * bundler resolution, and run the README examples from there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { privilegedSkipReason, scratchDir } from '@vpc-cni-kit/testkit';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DocBlock,
  type PackedTarball,
  type PublishedWorkspace,
  publishedWorkspaces,
  readmeBlocks,
  scratchLockfile,
} from '../src/index.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const scratch = scratchDir('vck-stranger-');
const tarballDir = join(scratch.path, 'tarballs');
const app = join(scratch.path, 'app');
const daemon = join(scratch.path, 'daemon');
const tsc = join(repo, 'node_modules/typescript/bin/tsc');

/** The published workspaces: every non-private package under packages/ and examples/. */
const published = publishedWorkspaces(repo);

/** Every import specifier a package offers (its exports map, bar `./package.json`). */
const specifiers = published.flatMap((w) =>
  Object.keys(w.manifest.exports)
    .filter((k) => k !== './package.json')
    .map((k) => (k === '.' ? w.manifest.name : `${w.manifest.name}/${k.slice(2)}`)),
);

/** The files an exports map or bin names, for the conditions a consumer uses (not the in-repo source). */
function shippedTargets(w: PublishedWorkspace): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v.replace(/^\.\//, ''));
    else if (v !== null && typeof v === 'object')
      for (const [k, sub] of Object.entries(v)) if (k !== '@vpc-cni-kit/source') walk(sub);
  };
  walk(w.manifest.exports);
  for (const file of Object.values(w.manifest.bin ?? {})) out.push(file.replace(/^\.\//, ''));
  return out;
}

/** Whether caret range `^M.m.p` admits `version` (below 1.0.0 a minor is breaking, so the minor must match). */
function caretAdmits(range: string, version: string): boolean {
  const r = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range)?.slice(1).map(Number);
  const v = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)?.slice(1).map(Number);
  if (r === undefined || v === undefined) return false;
  const [rM, rm, rp] = r as [number, number, number];
  const [vM, vm, vp] = v as [number, number, number];
  if (vM !== rM || (rM === 0 && vm !== rm)) return false;
  return vm > rm || (vm === rm && vp >= rp);
}

/**
 * The third-party packages whose code an unpacked package's programs carry, read from what it ships: the
 * `sources` of its source maps and the `// ../node_modules/…` path comments esbuild writes into an unminified
 * bundle. Ours (`@vpc-cni-kit/*`) are not third-party.
 */
function bundledPackages(unpacked: string): Set<string> {
  const found = new Set<string>();
  const note = (path: string) => {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(path);
    if (m?.[1] !== undefined && !m[1].startsWith('@vpc-cni-kit/')) found.add(m[1]);
  };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.map')) {
        for (const source of (JSON.parse(readFileSync(path, 'utf8')) as { sources: string[] }).sources)
          note(source);
      } else if (/\.(c|m)?js$/.test(entry.name)) {
        for (const m of readFileSync(path, 'utf8').matchAll(/^\/\/ (\S*node_modules\/\S+)$/gm))
          note(m[1] ?? '');
      }
    }
  };
  walk(join(unpacked, 'dist'));
  return found;
}

/** THIRD_PARTY_NOTICES by package name: the text after each `name version` / `License:` heading. */
function noticeSections(text: string): Map<string, string> {
  const parts = text.split(/^={20,}$/m);
  const sections = new Map<string, string>();
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const heading = (parts[i] ?? '').trim().split('\n')[0] ?? '';
    sections.set(heading.slice(0, heading.lastIndexOf(' ')), parts[i + 1] ?? '');
  }
  return sections;
}

interface Packed {
  name: string;
  filename: string;
  integrity: string;
  files: { path: string; size: number }[];
}

let packs: Packed[] = [];
let tarballs: PackedTarball[] = [];
const repoLock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));

function run(argv: string[], cwd: string, timeout = 120_000): string {
  return execFileSync(argv[0] as string, argv.slice(1), {
    cwd,
    encoding: 'utf8',
    timeout,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** A scratch project depending on `names` (ours, from the tarballs; others pinned to the repository's lock). */
function installProject(dir: string, deps: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const rootDeps: Record<string, string> = {};
  for (const [name, spec] of Object.entries(deps)) {
    const t = tarballs.find((x) => x.manifest.name === name);
    rootDeps[name] = t ? `file:${relative(dir, join(tarballDir, t.file))}` : spec;
  }
  const local = tarballs.map((t) => ({ ...t, file: relative(dir, join(tarballDir, t.file)) }));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'stranger', private: true, type: 'module', dependencies: rootDeps }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify(scratchLockfile(repoLock, local, rootDeps), null, 2),
  );
  run(['npm', 'ci', '--offline', '--no-audit', '--no-fund'], dir);
}

const lockedVersion = (name: string): string => {
  const v = repoLock.packages[`node_modules/${name}`]?.version;
  if (typeof v !== 'string') throw new Error(`${name} is not in the repository lock`);
  return v;
};

beforeAll(() => {
  mkdirSync(tarballDir, { recursive: true });
  const out = run(
    [
      'npm',
      'pack',
      ...published.flatMap((w) => ['--workspace', w.manifest.name]),
      '--pack-destination',
      tarballDir,
      '--json',
    ],
    repo,
    600_000,
  );
  packs = JSON.parse(out) as Packed[];
  tarballs = packs.map((p) => ({
    manifest: JSON.parse(run(['tar', '-xOzf', join(tarballDir, p.filename), 'package/package.json'], repo)),
    file: p.filename,
    integrity: p.integrity,
  }));
  installProject(
    app,
    Object.fromEntries([
      ...published.map((w) => [w.manifest.name, '']),
      // The ec2-simulator README talks to it through the SDK directly.
      ['@aws-sdk/client-ec2', lockedVersion('@aws-sdk/client-ec2')],
    ]),
  );
  installProject(daemon, { '@vpc-cni-kit/aws-node': '' });
}, 600_000);

afterAll(() => scratch.remove(), 120_000);

describe('npm pack', () => {
  it('packs every published package with its build, types, README, CHANGELOG, LICENSE and NOTICE', () => {
    expect(packs.map((p) => p.name).sort()).toEqual(published.map((w) => w.manifest.name).sort());
    const license = readFileSync(join(repo, 'LICENSE'));
    for (const w of published) {
      const p = packs.find((x) => x.name === w.manifest.name) as Packed;
      const files = new Map(p.files.map((f) => [f.path, f.size]));
      for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'NOTICE', ...shippedTargets(w)])
        expect(files.has(f), `${p.name} ships ${f}`).toBe(true);
      expect(files.get('LICENSE'), `${p.name} ships the Apache-2.0 LICENSE`).toBe(license.length);
      // No tests, build scripts or configuration.
      expect([...files.keys()].filter((f) => /^(test|build)\/|tsconfig|tsup\.config/.test(f))).toEqual([]);
    }
  });

  it('ships THIRD_PARTY_NOTICES naming every third-party package its programs bundle, with licence texts', () => {
    const withNotices: string[] = [];
    for (const p of packs) {
      const dir = join(scratch.path, 'unpacked', p.name);
      mkdirSync(dir, { recursive: true });
      run(['tar', '-xzf', join(tarballDir, p.filename), '-C', dir], repo);
      const bundled = bundledPackages(join(dir, 'package'));
      const names = new Set(p.files.map((f) => f.path));
      if (bundled.size === 0) {
        expect(names.has('THIRD_PARTY_NOTICES'), `${p.name} bundles nothing, so needs no notices`).toBe(
          false,
        );
        continue;
      }
      withNotices.push(p.name);
      expect(names.has('THIRD_PARTY_NOTICES'), `${p.name} ships THIRD_PARTY_NOTICES`).toBe(true);
      const sections = noticeSections(readFileSync(join(dir, 'package/THIRD_PARTY_NOTICES'), 'utf8'));
      for (const name of bundled) {
        const body = sections.get(name);
        expect(body, `${p.name}: THIRD_PARTY_NOTICES has a section for ${name}`).toBeDefined();
        // A licence text (or the same text as an earlier package's), or a word that the package ships none.
        expect(body, `${p.name}: ${name}'s licence`).toMatch(/^--- \S+|ships no licence file/m);
      }
    }
    // The daemon bundles the AWS SDK; the controller the SDK and the Kubernetes client.
    expect(withNotices.sort()).toEqual(['@vpc-cni-kit/aws-node', '@vpc-cni-kit/vpc-resource-controller']);
  });

  it('declares internal dependencies as caret ranges that the packed versions satisfy', () => {
    const versions = new Map(tarballs.map((t) => [t.manifest.name, t.manifest.version]));
    for (const t of tarballs) {
      for (const [dep, range] of Object.entries(t.manifest.dependencies ?? {})) {
        if (!dep.startsWith('@vpc-cni-kit/')) continue;
        expect(caretAdmits(range, versions.get(dep) ?? ''), `${t.manifest.name} → ${dep}@${range}`).toBe(
          true,
        );
      }
    }
  });
});

describe('an installed @vpc-cni-kit/aws-node', () => {
  it('depends at run time on no simulator or test infrastructure (npm ls --omit=dev)', () => {
    const names = new Set<string>();
    const walk = (deps: Record<string, { dependencies?: Record<string, unknown> }> | undefined): void => {
      for (const [name, sub] of Object.entries(deps ?? {})) {
        names.add(name);
        walk(sub.dependencies as never);
      }
    };
    walk(JSON.parse(run(['npm', 'ls', '--omit=dev', '--all', '--json'], daemon)).dependencies);
    expect(names.has('@vpc-cni-kit/aws-node')).toBe(true);
    expect(names.has('@vpc-cni-kit/datastore')).toBe(true);
    expect([...names].filter((n) => /simulator|cluster-harness|testkit/.test(n))).toEqual([]);
    expect(readdirSync(join(daemon, 'node_modules/@vpc-cni-kit')).sort()).not.toContain('ec2-simulator');
  });

  it('runs its aws-cni binary (README: the binaries) from node_modules/.bin', () => {
    const r = spawnSync(join(daemon, 'node_modules/.bin/aws-cni'), [], {
      input: '{"cniVersion":"1.0.0"}',
      env: { PATH: process.env['PATH'], CNI_COMMAND: 'VERSION' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).supportedVersions).toContain('1.1.0');
  });
});

describe('the installed command lines', () => {
  const bin = (name: string, ...args: string[]) =>
    spawnSync(join(app, 'node_modules/.bin', name), args, { encoding: 'utf8', timeout: 30_000 });
  const version = (name: string) => tarballs.find((t) => t.manifest.name === name)?.manifest.version;

  it.each(['ec2-simulator', 'vpc-sim'])(
    '%s answers --help and --version, and refuses unknown options (exit 2)',
    (name) => {
      const help = bin(name, '--help');
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: ${name} `));
      const v = bin(name, '--version');
      expect(v.status).toBe(0);
      expect(v.stdout.trim()).toBe(version('@vpc-cni-kit/ec2-simulator'));
      const bad = bin(name, name === 'vpc-sim' ? 'up' : 'serve', '--bogus');
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`usage: ${name} `);
    },
  );

  it('vpc-resource-controller answers --help and --version, refuses unknown options (exit 2) and fails in one line without a cluster', () => {
    const help = bin('vpc-resource-controller', '--help');
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: vpc-resource-controller /);
    const v = bin('vpc-resource-controller', '--version');
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toBe(
      `vpc-resource-controller ${version('@vpc-cni-kit/vpc-resource-controller')}`,
    );
    const bad = bin('vpc-resource-controller', '--bogus');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('usage: vpc-resource-controller ');
    const nowhere = bin(
      'vpc-resource-controller',
      '--cluster-name',
      'c',
      '--region',
      'us-west-2',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
    );
    expect(nowhere.status).toBe(1);
    expect(nowhere.stderr.trim().split('\n')).toHaveLength(1);
    expect(nowhere.stderr).toContain('(hint: ');
  });
});

describe('consumers', () => {
  it('load every entry point from ES modules and from CommonJS, with the same exports', () => {
    const dir = join(app, 'consumers');
    mkdirSync(dir, { recursive: true });
    const list = JSON.stringify(specifiers);
    writeFileSync(
      join(dir, 'esm.mjs'),
      `const out = {};\nfor (const s of ${list}) out[s] = Object.keys(await import(s)).filter((k) => k !== 'default').sort();\nprocess.stdout.write(JSON.stringify(out));\n`,
    );
    writeFileSync(
      join(dir, 'cjs.cjs'),
      `const out = {};\nfor (const s of ${list}) out[s] = Object.keys(require(s)).sort();\nprocess.stdout.write(JSON.stringify(out));\n`,
    );
    const esm = JSON.parse(run([process.execPath, 'consumers/esm.mjs'], app));
    const cjs = JSON.parse(run([process.execPath, 'consumers/cjs.cjs'], app));
    for (const s of specifiers) {
      expect(esm[s]?.length, `${s} exports something`).toBeGreaterThan(0);
      expect(cjs[s], `${s}: require() gives what import gives`).toEqual(esm[s]);
    }
  });

  const blocks = published.flatMap((w) =>
    readmeBlocks(readFileSync(join(w.dir, 'README.md'), 'utf8')).map((b) => ({ w, b })),
  );
  const fileOf = (w: PublishedWorkspace, b: DocBlock, ext: string) =>
    `readme/${w.manifest.name.split('/')[1]}-L${b.line}.${ext}`;

  it.each(['node16', 'nodenext', 'bundler', 'node10'])(
    'typecheck strictly under %s resolution (every entry point; under nodenext the README examples too)',
    (resolution) => {
      const dir = join(app, `tsc-${resolution}`);
      mkdirSync(join(dir, 'readme'), { recursive: true });
      // node10 sees only what `main`/`types` name: the root entry points (see docs/guides/installing.md).
      const specs = resolution === 'node10' ? published.map((w) => w.manifest.name) : specifiers;
      const files: string[] = [];
      writeFileSync(
        join(dir, 'consumer.ts'),
        `${specs.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join('\n')}\nexport const loaded = [${specs.map((_, i) => `m${i}`).join(', ')}];\n`,
      );
      files.push('consumer.ts');
      if (resolution === 'node16') {
        writeFileSync(
          join(dir, 'consumer.cts'),
          `${specs.map((s, i) => `import m${i} = require(${JSON.stringify(s)});`).join('\n')}\nexport const loaded = [${specs.map((_, i) => `m${i}`).join(', ')}];\n`,
        );
        files.push('consumer.cts');
      }
      // The README examples are Node ES modules: checked once, under nodenext.
      if (resolution === 'nodenext') {
        for (const { w, b } of blocks) {
          if (b.lang !== 'ts' || b.mode === 'skip') continue;
          const f = fileOf(w, b, 'ts');
          writeFileSync(join(dir, f), `${b.code}\nexport {};\n`);
          files.push(f);
        }
      }
      const module = { node16: 'node16', nodenext: 'nodenext', bundler: 'esnext', node10: 'commonjs' }[
        resolution
      ];
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'es2022',
            lib: ['es2023'],
            module,
            moduleResolution: resolution,
            types: ['node'],
            typeRoots: [join(repo, 'node_modules/@types')],
            // Our declaration files are checked once, under nodenext (it takes most of a run's time).
            skipLibCheck: resolution !== 'nodenext',
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            ...(resolution === 'node10' ? { ignoreDeprecations: '5.0' } : {}),
          },
          files,
        }),
      );
      // The project's package.json says "type": "module"; tsc looks for it from this directory upward.
      const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    },
    180_000,
  );

  const sandboxSkip = privilegedSkipReason();
  it.each(
    blocks
      .filter(({ b }) => b.mode === 'run' || b.mode === 'sandbox')
      .map((x) => [fileOf(x.w, x.b, 'mjs'), x]),
  )(
    'README example %s runs from the installed packages',
    (file, { b }) => {
      if (b.mode === 'sandbox' && sandboxSkip !== undefined) {
        console.warn(`[privileged] not running ${file}: ${sandboxSkip}`);
        return;
      }
      mkdirSync(join(app, 'readme'), { recursive: true });
      const js =
        b.lang === 'ts'
          ? transformSync(b.code, { loader: 'ts', format: 'esm', target: 'node20' }).code
          : b.code;
      writeFileSync(join(app, file), js);
      const argv =
        b.mode === 'sandbox'
          ? [
              'unshare',
              '--mount',
              '--net',
              '--propagation',
              'private',
              '--',
              'sh',
              '-c',
              `mount -t tmpfs tmpfs /run && mkdir -p /run/netns /run/aws-node && ip link set lo up && ${b.setup ?? 'true'} && exec "$0" "$1"`,
              process.execPath,
              file,
            ]
          : [process.execPath, file];
      const r = spawnSync(argv[0] as string, argv.slice(1), {
        cwd: app,
        encoding: 'utf8',
        timeout: 90_000,
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      });
      expect(r.status, `${file} failed:\n${r.stderr}\n${r.stdout}`).toBe(0);
      if (b.prints !== undefined) {
        // What the README says it prints, line by line; `…` is any text.
        const pattern = b.prints
          .split('\n')
          .map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '.*?'))
          .join('\n');
        expect(r.stdout.trimEnd()).toMatch(new RegExp(`^${pattern}$`));
      }
    },
    120_000,
  );

  it('every published README has an example that runs', () => {
    for (const w of published) {
      if (w.manifest.name === '@vpc-cni-kit/aws-node') continue; // its binaries: the aws-cni test above
      const own = blocks.filter((x) => x.w === w && (x.b.mode === 'run' || x.b.mode === 'sandbox'));
      expect(own.length, `${w.manifest.name} README`).toBeGreaterThan(0);
    }
    expect(relative(repo, app).startsWith('..'), 'the scratch project is outside the repository').toBe(true);
  });
});
