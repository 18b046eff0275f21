// The repository scripts' command line (scripts/lib/cli.mjs): what it accepts and refuses, and that every script
// (benchmarks, package benches and generators, build and check scripts) answers --help and refuses an unknown
// option through it, at once and before doing anything.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { helpText, readCommandLine, scriptOf, usageLine } from '../lib/cli.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** Where the repository's own scripts live (a directory's subdirectories are searched too). */
const SCRIPT_DIRS = ['benchmarks', 'scripts', 'deploy'];
/** Per package: `<package>/<dir>` holds scripts (not searched below). */
const PACKAGE_SCRIPT_DIRS = ['bench', 'scripts', 'test/fixtures'];

/** Modules other scripts import, not run on their own. */
const LIBRARIES = new Set([
  'benchmarks/aws-node/lib.mjs',
  'benchmarks/aws-node/plugin-plumbs.entry.mjs', // a CNI plugin bundled by plumbing.mjs: its interface is CNI's, not argv
  'benchmarks/lib/timing.mjs',
  'benchmarks/vpc-resource-controller/crds.mjs',
  'benchmarks/vpc-resource-controller/webhook-bench.mjs',
  'benchmarks/warm-pool/grid.mjs',
  'benchmarks/warm-pool/lib.mjs',
  'benchmarks/warm-pool/node-sim.mjs',
  'benchmarks/warm-pool/pod-watch.mjs',
  'benchmarks/warm-pool/shapes.mjs',
  'benchmarks/warm-pool/svg.mjs',
  'scripts/lib/cli.mjs',
]);

function* scripts(dir: string, deep: boolean): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (deep && !['node_modules', 'test', 'dist'].includes(entry.name)) yield* scripts(path, deep);
    } else if (entry.name.endsWith('.mjs') && !LIBRARIES.has(relative(repo, path))) {
      yield relative(repo, path);
    }
  }
}

function* packageScripts(): Generator<string> {
  for (const pkg of readdirSync(join(repo, 'packages'))) {
    for (const dir of PACKAGE_SCRIPT_DIRS) yield* scripts(join(repo, 'packages', pkg, dir), false);
  }
}

const ENTRIES = [
  ...SCRIPT_DIRS.flatMap((d) => [...scripts(join(repo, d), true)]),
  ...packageScripts(),
].sort();

function run(script: string, args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(repo, script), ...args],
      { encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('every repository script', () => {
  it('says what it is on --version', async () => {
    const version = await run('benchmarks/run.mjs', ['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^benchmarks\/run\.mjs: a vpc-cni-kit script.*, node v\d+/);
  });

  it('is found (a library module belongs in LIBRARIES)', () => {
    expect(ENTRIES).toContain('benchmarks/run.mjs');
    expect(ENTRIES).toContain('benchmarks/aws-node/cni.mjs');
    expect(ENTRIES).toContain('benchmarks/warm-pool/tune.mjs');
    expect(ENTRIES).toContain('deploy/image/build.mjs');
    expect(ENTRIES).toContain('scripts/prepack.mjs');
    expect(ENTRIES).toContain('packages/datastore/bench/throughput.mjs');
    expect(ENTRIES).toContain('packages/eni-manager/scripts/gen-instance-limits.mjs');
    expect(ENTRIES).toContain('packages/netlink/test/fixtures/capture-branch-links.mjs');
    expect(ENTRIES.length).toBeGreaterThanOrEqual(40);
  });

  it.concurrent.each(ENTRIES)('%s answers --help and refuses an unknown option', async (script) => {
    const name = script.split('/').at(-1);
    const help = await run(script, ['--help']);
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^usage: node ${script.replace('.', '\\.')}\\b`));
    expect(help.stdout).toContain('-h, --help');

    const wrong = await run(script, ['--no-such-option']);
    expect(wrong.stdout).toBe('');
    expect(wrong.code).toBe(2);
    const lines = wrong.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      `${name}: Unknown option '--no-such-option'`,
      expect.stringMatching(new RegExp(`^usage: node ${script.replace('.', '\\.')}\\b`)),
    ]);
  });
});

const SPEC = {
  summary: 'A benchmark.',
  options: {
    runs: { type: 'count', default: 40, min: 1, description: 'timed runs' },
    warmup: { type: 'count', default: 3, description: 'untimed runs first' },
    'bin-dir': { type: 'string', value: 'DIR', description: 'another build' },
    loop: { type: 'string', choices: ['daemon', 'reference'], default: 'daemon', description: 'the loop' },
    plugin: { type: 'string', multiple: true, value: 'NAME=FILE', description: 'another plugin' },
    markdown: { type: 'boolean', description: 'Markdown' },
  },
  positionals: [{ name: 'rounds', type: 'count', default: 3, description: 'rounds' }],
};

describe('readCommandLine', () => {
  it('fills in defaults and reads counts as numbers', () => {
    expect(readCommandLine(SPEC, [])).toEqual({
      kind: 'run',
      values: {
        runs: 40,
        warmup: 3,
        'bin-dir': undefined,
        loop: 'daemon',
        plugin: [],
        markdown: false,
        rounds: 3,
      },
    });
    expect(
      readCommandLine(SPEC, [
        '--runs',
        '7',
        '--warmup=0',
        '--bin-dir',
        '/x',
        '--plugin',
        'a=b',
        '--plugin',
        'c=d',
        '--markdown',
        '--loop',
        'reference',
        '12',
      ]),
    ).toEqual({
      kind: 'run',
      values: {
        runs: 7,
        warmup: 0,
        'bin-dir': '/x',
        loop: 'reference',
        plugin: ['a=b', 'c=d'],
        markdown: true,
        rounds: 12,
      },
    });
  });

  it('answers help or version asked for anywhere, even beside a mistake', () => {
    expect(readCommandLine(SPEC, ['--runs', 'x', '-h'])).toEqual({ kind: 'help' });
    expect(readCommandLine(SPEC, ['--nope', '--help'])).toEqual({ kind: 'help' });
    expect(readCommandLine(SPEC, ['--version'])).toEqual({ kind: 'version' });
  });

  it.each([
    [['--nope'], "Unknown option '--nope'"],
    [['--runs=2', '-q'], "Unknown option '-q'"],
    [['--runs'], "Option '--runs <value>' argument missing"],
    [['--runs', 'x'], '--runs takes a whole number of at least 1, not "x"'],
    [['--runs', '0'], '--runs takes a whole number of at least 1, not "0"'],
    [['--runs', '-1'], "Option '--runs' argument is ambiguous."],
    [['--warmup', '2.5'], '--warmup takes a whole number, not "2.5"'],
    [['--warmup', '1e3'], '--warmup takes a whole number, not "1e3"'],
    [['--loop', 'fast'], '--loop takes daemon or reference, not "fast"'],
    [['--markdown=yes'], "Option '--markdown' does not take an argument"],
    [['many'], 'rounds takes a whole number, not "many"'],
    [['1', '2'], "Unexpected argument '2'. This command takes at most one positional argument"],
  ])('refuses %j in one line', (argv, problem) => {
    const read = readCommandLine(SPEC, argv);
    expect(read.kind).toBe('invalid');
    expect(read.problem).not.toContain('\n');
    expect(read.problem.startsWith(problem)).toBe(true);
  });

  it('takes no positional argument unless the spec names one, and the rest when the last one asks', () => {
    expect(readCommandLine({ summary: 's' }, ['x'])).toMatchObject({ kind: 'invalid' });
    const rest = { summary: 's', positionals: [{ name: 'trace', rest: true, description: 'traces' }] };
    expect(readCommandLine(rest, [])).toEqual({ kind: 'run', values: { trace: [] } });
    expect(readCommandLine(rest, ['a', 'b'])).toEqual({ kind: 'run', values: { trace: ['a', 'b'] } });
  });

  it('throws on a malformed spec (a mistake in the script, not on its command line)', () => {
    expect(() =>
      readCommandLine({ summary: 's', options: { help: { type: 'boolean', description: 'x' } } }, []),
    ).toThrow(TypeError);
    expect(() =>
      readCommandLine({ summary: 's', options: { n: { type: 'number', description: 'x' } } }, []),
    ).toThrow(TypeError);
    expect(() =>
      readCommandLine(
        {
          summary: 's',
          positionals: [
            { name: 'a', rest: true, description: 'a' },
            { name: 'b', description: 'b' },
          ],
        },
        [],
      ),
    ).toThrow(TypeError);
  });
});

describe('usage and help', () => {
  const script = scriptOf(new URL('../../benchmarks/aws-node/cni.mjs', import.meta.url).href);

  it('names the script by its path in the repository', () => {
    expect(script).toEqual({ name: 'cni.mjs', path: 'benchmarks/aws-node/cni.mjs' });
  });

  it('puts every option and argument on the usage line, and describes each with its default in the help', () => {
    expect(usageLine(script, SPEC)).toBe(
      'usage: node benchmarks/aws-node/cni.mjs [--runs N] [--warmup N] [--bin-dir DIR] [--loop daemon|reference] [--plugin NAME=FILE ...] [--markdown] [rounds]',
    );
    const help = helpText(script, SPEC);
    expect(help).toContain('\nA benchmark.\n');
    expect(help).toMatch(/\n {2}--runs N +timed runs \(default 40\)\n/);
    expect(help).toMatch(/\n {2}--markdown +Markdown\n/);
    expect(help).toMatch(/\narguments:\n {2}rounds +rounds \(default 3\)\n/);
  });
});
