import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { Metafile, Plugin } from 'esbuild';

/** The file a package that bundles third-party code ships beside LICENSE and NOTICE. */
export const THIRD_PARTY_NOTICES = 'THIRD_PARTY_NOTICES';

/** Licence and notice files a package ships, by name: LICENSE, LICENCE, COPYING, NOTICE (any case, any suffix). */
const LICENCE_FILE = /^(licen[cs]e|copying|notice)([.\-_].*)?$/i;

interface BundledPackage {
  name: string;
  version: string;
  license: string;
  dir: string;
}

/** The package an input of the bundle belongs to, when it comes from a `node_modules` directory. */
function packageOf(input: string, workingDir: string): { name: string; dir: string } | undefined {
  const path = resolve(workingDir, input);
  const marker = `${sep}node_modules${sep}`;
  const at = path.lastIndexOf(marker);
  if (at < 0) return undefined;
  const parts = path.slice(at + marker.length).split(sep);
  const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  if (name === undefined || name === '' || name.startsWith('@vpc-cni-kit/')) return undefined;
  return { name, dir: path.slice(0, at + marker.length) + name.split('/').join(sep) };
}

function licenceOf(manifest: Record<string, unknown>): string {
  const l = manifest.license;
  if (typeof l === 'string') return l;
  if (l !== null && typeof l === 'object' && typeof (l as { type?: unknown }).type === 'string')
    return (l as { type: string }).type;
  const ls = manifest.licenses;
  if (Array.isArray(ls)) return ls.map((x) => (x as { type?: string }).type ?? '?').join(' OR ');
  return 'UNKNOWN';
}

function render(owner: string, packages: readonly BundledPackage[]): string {
  const rule = '='.repeat(78);
  const out = [
    `Third-party software bundled in ${owner}`,
    '',
    'The programs under dist/bin bundle code from the packages below (the list is written by the build from',
    'what the bundler put into them). Each is given with the licence its package.json declares and, verbatim,',
    'the licence and notice files it ships. vpc-cni-kit itself is under the Apache License 2.0 (LICENSE, NOTICE).',
    '',
    ...packages.map((p) => `- ${p.name} ${p.version} (${p.license})`),
  ];
  // A text several packages ship alike (the Apache License of every AWS SDK package) is written once.
  const firstWith = new Map<string, string>();
  for (const p of packages) {
    out.push('', rule, `${p.name} ${p.version}`, `License: ${p.license}`, rule);
    const files = readdirSync(p.dir)
      .filter((f) => LICENCE_FILE.test(f))
      .sort();
    if (files.length === 0) {
      out.push(
        '',
        p.license === 'Apache-2.0'
          ? 'The package ships no licence file; its package.json declares Apache-2.0, the licence in LICENSE.'
          : `The package ships no licence file; its package.json declares ${p.license}.`,
      );
    }
    for (const f of files) {
      const text = readFileSync(join(p.dir, f), 'utf8').trimEnd();
      const seen = firstWith.get(text);
      if (seen !== undefined) out.push('', `--- ${f}: the same text as ${seen} above ---`);
      else {
        firstWith.set(text, `${p.name}'s ${f}`);
        out.push('', `--- ${f} ---`, '', text);
      }
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * Collects, across every bundle of one package's build, the third-party packages the bundler included, and
 * (re)writes `<packageDir>/THIRD_PARTY_NOTICES` after each bundle with all of them: the list, then each one's
 * licence and notice files verbatim. `plugin` is for tsup's `esbuildPlugins` (it turns on esbuild's metafile,
 * in memory only); `add` takes the metafile of a bundle built with esbuild directly (paths relative to
 * `workingDir`, esbuild's default: the current directory).
 */
export function thirdPartyNotices(options: { packageDir: string; owner: string }): {
  plugin: Plugin;
  add(metafile: Metafile | undefined, workingDir?: string): void;
} {
  const found = new Map<string, BundledPackage>();
  const add = (metafile: Metafile | undefined, workingDir = process.cwd()): void => {
    if (metafile === undefined) throw new Error('third-party notices: the build produced no metafile');
    for (const [output, meta] of Object.entries(metafile.outputs)) {
      if (output.endsWith('.map')) continue;
      for (const [input, { bytesInOutput }] of Object.entries(meta.inputs)) {
        if (bytesInOutput === 0) continue; // imported, but nothing of it survived tree-shaking
        const pkg = packageOf(input, workingDir);
        if (pkg === undefined || found.has(pkg.dir)) continue;
        const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as Record<
          string,
          unknown
        >;
        found.set(pkg.dir, {
          name: pkg.name,
          version: String(manifest.version ?? '?'),
          license: licenceOf(manifest),
          dir: pkg.dir,
        });
      }
    }
    const packages = [...found.values()].sort((a, b) =>
      a.name === b.name ? a.version.localeCompare(b.version) : a.name < b.name ? -1 : 1,
    );
    writeFileSync(join(options.packageDir, THIRD_PARTY_NOTICES), render(options.owner, packages));
  };
  const plugin: Plugin = {
    name: 'third-party-notices',
    setup(build) {
      build.initialOptions.metafile = true;
      const workingDir = build.initialOptions.absWorkingDir ?? process.cwd();
      build.onEnd((result) => {
        if (result.errors.length === 0) add(result.metafile, workingDir);
      });
    },
  };
  if (!existsSync(options.packageDir)) throw new Error(`third-party notices: no ${options.packageDir}`);
  return { plugin, add };
}
