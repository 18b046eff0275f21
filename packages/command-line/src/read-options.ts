import { type ParseArgsConfig, parseArgs } from 'node:util';

/** The option specs `node:util`'s `parseArgs` takes (`{ name: { type, short?, multiple? } }`). */
export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/** What a command line gave: each option's value (a list for `multiple` ones) and the positional arguments. */
export interface ReadOptions {
  /** Values by option name; absent options are `undefined`. */
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  /** The arguments that are not options (always empty unless `allowPositionals`). */
  readonly positionals: readonly string[];
}

/** A command line `parseArgs` refused, with the first line of why (an unknown option, a missing value, …). */
export interface RefusedOptions {
  /** One line for the operator. */
  readonly problem: string;
}

/**
 * Reads `argv` (without the node and script paths) with `node:util`'s `parseArgs` in strict mode: an unknown
 * option, a missing value or (unless `allowPositionals`) a stray argument is refused, as the first line of
 * `parseArgs`'s message. A string option followed by a negative number (`--port -1`, `--cooldown -5s`) takes it as
 * its value, where `parseArgs` alone would call the option ambiguous: the program can then say what is wrong with
 * the value itself. Everything after `--` is left as it is.
 */
export function readOptions(
  argv: readonly string[],
  options: OptionSpecs,
  settings: { readonly allowPositionals?: boolean } = {},
): ReadOptions | RefusedOptions {
  try {
    const { values, positionals } = parseArgs({
      args: attachNegativeValues(argv, options),
      options,
      strict: true,
      allowPositionals: settings.allowPositionals ?? false,
    });
    return { values, positionals };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { problem: message.split('\n')[0] ?? message };
  }
}

/**
 * `argv` with `--flag -5` written `--flag=-5` for each string option `--flag` followed by a negative number. Stops
 * at `--`.
 */
function attachNegativeValues(argv: readonly string[], options: OptionSpecs): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (arg === '--') return [...out, ...argv.slice(i)];
    if (
      arg.startsWith('--') &&
      options[arg.slice(2)]?.type === 'string' &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
