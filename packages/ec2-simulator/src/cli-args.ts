import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * Answers `--help`/`-h` (prints `usage`) or `--version` (prints `io.version`) anywhere on a command line; true
 * when it did, and the command should exit 0.
 */
export function answeredHelpOrVersion(
  argv: readonly string[],
  usage: string,
  io: { readonly out: (line: string) => void; readonly version?: string },
): boolean {
  const asked = helpOrVersion(argv);
  if (asked === undefined) return false;
  io.out(asked === 'help' ? usage : (io.version ?? 'unknown'));
  return true;
}

function helpOrVersion(argv: readonly string[]): 'help' | 'version' | undefined {
  const { values } = parseArgs({
    args: [...argv],
    options: HELP_AND_VERSION,
    strict: false,
    allowPositionals: true,
  });
  return values['help'] === true ? 'help' : values['version'] === true ? 'version' : undefined;
}

/** The options every command line accepts besides its own: `--help`/`-h` and `--version`. */
export const HELP_AND_VERSION = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * Turns a `node:util` `parseArgs` error (an unknown option, a missing or ambiguous value, an unexpected
 * positional: told apart by its `ERR_PARSE_ARGS_*` code) into `usage(message)`; rethrows anything else.
 */
export function usageErrorOf(e: unknown, usage: (why: string) => Error): Error {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
    ? usage((e as Error).message)
    : (e as Error);
}

/**
 * The `version` of the package.json one directory above `moduleUrl` (a bin in `dist/`), or `unknown` when it
 * cannot be read.
 */
export function packageVersion(moduleUrl: string | undefined): string {
  try {
    const text = readFileSync(new URL('../package.json', moduleUrl), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
