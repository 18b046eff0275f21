/**
 * Command-line flags the way Go's `flag` package reads them, so the probe takes exactly what
 * grpc-health-probe takes: `-name=value`, `-name value`, `--name=value`; a boolean flag alone means true
 * (`-v`, or `-v=false`); parsing stops at `--` or at the first argument that is not a flag.
 */

/** The kinds of flag the probe uses. */
export type FlagKind = 'string' | 'bool' | 'duration';

/** One flag: its kind and its description for the usage text. */
export interface FlagSpec {
  readonly kind: FlagKind;
  readonly usage: string;
}

/** What {@link parseGoFlags} read. Durations are in milliseconds. */
export type FlagValues = Record<string, string | boolean | number>;

/** The outcome of reading a command line. */
export type GoFlagsOutcome =
  | { readonly kind: 'ok'; readonly values: FlagValues; readonly rest: readonly string[] }
  /** `-h` or `-help`, when no such flag is defined. */
  | { readonly kind: 'help' }
  | { readonly kind: 'invalid'; readonly problem: string };

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Reads `argv` against `specs` (flag names without dashes). */
export function parseGoFlags(
  argv: readonly string[],
  specs: Readonly<Record<string, FlagSpec>>,
  parseDuration: (text: string) => number | undefined,
): GoFlagsOutcome {
  const values: FlagValues = {};
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.length < 2 || !arg.startsWith('-')) break;
    if (arg === '--') {
      i++;
      break;
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    if (body === '' || body.startsWith('-') || body.startsWith('=')) {
      return { kind: 'invalid', problem: `bad flag syntax: ${arg}` };
    }
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    let value = eq < 0 ? undefined : body.slice(eq + 1);
    const spec = specs[name];
    if (spec === undefined) {
      if (name === 'h' || name === 'help') return { kind: 'help' };
      return { kind: 'invalid', problem: `flag provided but not defined: -${name}` };
    }
    if (spec.kind === 'bool') {
      if (value === undefined) values[name] = true;
      else if (TRUE.has(value)) values[name] = true;
      else if (FALSE.has(value)) values[name] = false;
      else return { kind: 'invalid', problem: `invalid boolean value ${JSON.stringify(value)} for -${name}` };
      continue;
    }
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) return { kind: 'invalid', problem: `flag needs an argument: -${name}` };
      i++;
    }
    if (spec.kind === 'duration') {
      const ms = parseDuration(value);
      if (ms === undefined)
        return {
          kind: 'invalid',
          problem: `invalid value ${JSON.stringify(value)} for flag -${name}: parse error`,
        };
      values[name] = ms;
    } else values[name] = value;
  }
  return { kind: 'ok', values, rest: argv.slice(i) };
}

/** The usage text of `specs`, one flag per entry, as Go's `flag.PrintDefaults` lays it out. */
export function goFlagsUsage(specs: Readonly<Record<string, FlagSpec>>): string {
  return Object.entries(specs)
    .map(([name, spec]) => {
      const type = spec.kind === 'bool' ? '' : ` ${spec.kind}`;
      return `  -${name}${type}\n    \t${spec.usage}\n`;
    })
    .join('');
}
