// The command line of the repository's own scripts (benchmarks, generators, build and check scripts): every
// script declares its options (and positional arguments) once and reads them here, with node:util's parseArgs
// in strict mode. `--help`/`-h` prints the usage and exits 0; `--version` says what is being run; an unknown
// option, a missing value, a bad whole number or a stray argument is refused with one line
// `<script>: <problem>` and the usage line on stderr, exit 2 — before the script builds, creates a namespace or
// starts a process, so call it before any of that (and before importing anything slow: a static import is
// evaluated before the script's first line).
//
//   const { values } = commandLine(import.meta.url, {
//     summary: 'What it measures, against which baseline.',
//     options: {
//       runs: { type: 'count', default: 40, min: 1, description: 'timed runs per variant' },
//       'bin-dir': { type: 'string', value: 'DIR', description: "another build's dist/bin" },
//       markdown: { type: 'boolean', description: 'print Markdown tables' },
//     },
//     positionals: [{ name: 'trace.csv', rest: true, description: 'traces to replay' }],
//   });
//   values.runs; values['bin-dir']; values.markdown; values['trace.csv'];
//
// An option is { type: 'string' | 'count' | 'boolean', description, default?, value? (the placeholder in the
// usage: N, DIR…), min? (a count's least value), choices? (the strings a value may be), multiple? (repeatable:
// an array) }. A positional argument is { name, description, type?: 'string' | 'count', default?, min?, value?,
// rest? (the last one takes all that are left, as an array) }; all are optional, and without any the command
// takes none.
import { basename, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Exit status of a refused command line (the conventional "usage" status). */
export const EXIT_USAGE = 2;

const HELP_AND_VERSION = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Reads the command line of the script at `scriptUrl` (its `import.meta.url`) from `argv` (default: this
 * process's arguments) against `spec`, and acts on anything that is not a run: help or version on stdout and
 * exit 0, a refusal on stderr and exit {@link EXIT_USAGE}. Returns `values` (each option and positional by its
 * name: counts as numbers, strings, booleans, arrays for `multiple` options and `rest` positionals; defaults
 * filled in) and `refuse(problem)`, which refuses in the same words for a check the spec cannot express.
 */
export function commandLine(scriptUrl, spec, argv = process.argv.slice(2)) {
  const script = scriptOf(scriptUrl);
  const refuse = (problem) => {
    process.stderr.write(`${script.name}: ${problem}\n${usageLine(script, spec)}\n`);
    process.exit(EXIT_USAGE);
  };
  const read = readCommandLine(spec, argv);
  switch (read.kind) {
    case 'help':
      process.stdout.write(helpText(script, spec));
      process.exit(0);
      break;
    case 'version':
      process.stdout.write(
        `${script.path}: a vpc-cni-kit script, run from its checkout (not released), node ${process.version}\n`,
      );
      process.exit(0);
      break;
    case 'invalid':
      refuse(read.problem);
      break;
  }
  return { values: read.values, refuse };
}

/**
 * The pure part of {@link commandLine}: `{ kind: 'run', values }`, `{ kind: 'help' }`, `{ kind: 'version' }`
 * (either asked for anywhere on the line wins), or `{ kind: 'invalid', problem }` with the problem in one line.
 * Throws (a programming error, not a user's) when `spec` itself is malformed.
 */
export function readCommandLine(spec, argv) {
  checkSpec(spec);
  const asked = parseArgs({
    args: [...argv],
    options: HELP_AND_VERSION,
    strict: false,
    allowPositionals: true,
  });
  if (asked.values.help === true) return { kind: 'help' };
  if (asked.values.version === true) return { kind: 'version' };
  const options = spec.options ?? {};
  const positionals = spec.positionals ?? [];
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(
          Object.entries(options).map(([name, o]) => [
            name,
            { type: o.type === 'boolean' ? 'boolean' : 'string', multiple: o.multiple === true },
          ]),
        ),
        ...HELP_AND_VERSION,
      },
      strict: true,
      allowPositionals: positionals.length > 0,
    });
  } catch (e) {
    const code = e?.code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      return { kind: 'invalid', problem: unknownOption(argv, options) };
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
      return { kind: 'invalid', problem: e.message.replace(/\s*\n/g, ' ') };
    throw e;
  }
  const values = {};
  for (const [name, o] of Object.entries(options)) {
    const given = parsed.values[name];
    if (given === undefined) {
      values[name] = o.type === 'boolean' ? (o.default ?? false) : o.multiple ? (o.default ?? []) : o.default;
      continue;
    }
    for (const text of o.multiple ? given : [given]) {
      const problem = valueProblem(`--${name}`, o, text);
      if (problem !== undefined) return { kind: 'invalid', problem };
    }
    values[name] = o.multiple ? given.map((t) => typedValue(o, t)) : typedValue(o, given);
  }
  const rest = positionals.at(-1)?.rest === true;
  if (!rest && parsed.positionals.length > positionals.length) {
    const extra = parsed.positionals[positionals.length];
    const takes =
      positionals.length === 1 ? 'one positional argument' : `${positionals.length} positional arguments`;
    return {
      kind: 'invalid',
      problem: `Unexpected argument '${extra}'. This command takes at most ${takes}`,
    };
  }
  for (const [i, p] of positionals.entries()) {
    const given = p.rest ? parsed.positionals.slice(i) : parsed.positionals[i];
    for (const text of p.rest ? given : given === undefined ? [] : [given]) {
      const problem = valueProblem(p.name, p, text);
      if (problem !== undefined) return { kind: 'invalid', problem };
    }
    values[p.name] = p.rest
      ? given.map((t) => typedValue(p, t))
      : given === undefined
        ? p.default
        : typedValue(p, given);
  }
  return { kind: 'run', values };
}

/** The one-line synopsis: `usage: node benchmarks/x/y.mjs [--runs N] [--markdown] [rounds]`. */
export function usageLine(script, spec) {
  const parts = Object.entries(spec.options ?? {}).map(([name, o]) => {
    const flag = o.type === 'boolean' ? `--${name}` : `--${name} ${placeholder(o)}`;
    return `[${flag}${o.multiple ? ' ...' : ''}]`;
  });
  for (const p of spec.positionals ?? []) parts.push(`[${p.value ?? p.name}${p.rest ? ' ...' : ''}]`);
  return `usage: node ${script.path} ${parts.join(' ')}`.trimEnd();
}

/** The `--help` text: the synopsis, the summary, and one line per option and argument with its default. */
export function helpText(script, spec) {
  const rows = Object.entries(spec.options ?? {}).map(([name, o]) => [
    o.type === 'boolean' ? `--${name}` : `--${name} ${placeholder(o)}`,
    describe(o),
  ]);
  rows.push(['-h, --help', 'print this text and exit'], ['--version', 'say what is being run and exit']);
  const args = (spec.positionals ?? []).map((p) => [
    `${p.value ?? p.name}${p.rest ? ' ...' : ''}`,
    describe(p),
  ]);
  const width = Math.max(...[...rows, ...args].map(([left]) => left.length));
  const block = (title, list) =>
    list.length === 0
      ? ''
      : `\n${title}:\n${list.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`).join('\n')}\n`;
  return `${usageLine(script, spec)}\n\n${spec.summary}\n${block('arguments', args)}${block('options', rows)}`;
}

/** `{ name: 'cni.mjs', path: 'benchmarks/aws-node/cni.mjs' }` for a script's `import.meta.url`. */
export function scriptOf(scriptUrl) {
  const file = fileURLToPath(scriptUrl);
  const path = relative(repo, file);
  return { name: basename(file), path: path.startsWith('..') ? file : path };
}

/**
 * `Unknown option '--x'` for the first option `argv` has that `options` does not (parseArgs' own message goes on
 * about positional arguments starting with a dash, which no script takes).
 */
function unknownOption(argv, options) {
  const { tokens } = parseArgs({ args: [...argv], strict: false, allowPositionals: true, tokens: true });
  const known = (t) => t.name in options || t.name in HELP_AND_VERSION;
  const token = tokens.find((t) => t.kind === 'option' && !known(t));
  return `Unknown option '${token?.rawName ?? argv.find((a) => a.startsWith('-'))}'`;
}

function placeholder(o) {
  return o.value ?? (o.choices !== undefined ? o.choices.join('|') : o.type === 'count' ? 'N' : 'VALUE');
}

function describe(o) {
  const choices = o.choices === undefined || o.value === undefined ? '' : ` (${o.choices.join(' or ')})`;
  const dflt =
    o.default === undefined || o.default === false || (Array.isArray(o.default) && o.default.length === 0)
      ? ''
      : ` (default ${o.default})`;
  return `${o.description}${choices}${dflt}`;
}

function valueProblem(what, o, text) {
  if (o.type === 'count') {
    const min = o.min ?? 0;
    if (!/^\d{1,9}$/.test(text) || Number(text) < min)
      return `${what} takes a whole number${min > 0 ? ` of at least ${min}` : ''}, not ${JSON.stringify(text)}`;
  }
  if (o.choices !== undefined && !o.choices.includes(text))
    return `${what} takes ${o.choices.join(' or ')}, not ${JSON.stringify(text)}`;
  return undefined;
}

function typedValue(o, text) {
  return o.type === 'count' ? Number(text) : text;
}

const TYPES = new Set(['string', 'count', 'boolean']);

function checkSpec(spec) {
  if (typeof spec?.summary !== 'string') throw new TypeError('a command line needs a summary');
  for (const [name, o] of Object.entries(spec.options ?? {})) {
    if (name in HELP_AND_VERSION) throw new TypeError(`--${name} is every command line's own`);
    if (!TYPES.has(o.type)) throw new TypeError(`--${name}: type is string, count or boolean`);
    if (typeof o.description !== 'string') throw new TypeError(`--${name} needs a description`);
  }
  for (const [i, p] of (spec.positionals ?? []).entries()) {
    if (p.type !== undefined && p.type !== 'string' && p.type !== 'count')
      throw new TypeError(`${p.name}: a positional argument is a string or a count`);
    if (p.rest && i !== spec.positionals.length - 1)
      throw new TypeError(`${p.name}: only the last positional argument takes the rest`);
    if (p.name in (spec.options ?? {})) throw new TypeError(`${p.name} is both an option and an argument`);
  }
}
