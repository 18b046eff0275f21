/**
 * The command lines of `aws-node` and `aws-vpc-cni-init`: read with `node:util`'s `parseArgs` in strict mode,
 * so an unknown option or a stray argument is refused (usage on stderr, exit 2) before anything touches the
 * node. Both programs take their configuration from the environment, as the reference's do; the command line
 * only asks for help or the version.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** What a command line asks for. */
export type CommandLine =
  | { readonly kind: 'run' }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  /** The arguments were refused; `problem` says why, in one line. */
  | { readonly kind: 'invalid'; readonly problem: string };

/** Exit status of a refused command line (the conventional "usage" status). */
export const EXIT_USAGE = 2;

/**
 * Reads `argv` (without the node and script paths): `--help`/`-h`, `--version`/`-v`, or nothing. Anything else
 * is `invalid`.
 */
export function readCommandLine(argv: readonly string[]): CommandLine {
  const read = readOptions(argv, {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
  if ('problem' in read) return { kind: 'invalid', problem: read.problem };
  if (read.values['help']) return { kind: 'help' };
  if (read.values['version']) return { kind: 'version' };
  return { kind: 'run' };
}

/**
 * `node:util`'s `parseArgs` in strict mode with no positional arguments: the values, or the first line of
 * what it refused (an unknown option, a stray argument, a missing value).
 */
export function readOptions(
  argv: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Record<string, string | boolean | undefined> } | { problem: string } {
  try {
    const { values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options });
    return { values: values as Record<string, string | boolean | undefined> };
  } catch (e) {
    return { problem: firstLine(e) };
  }
}

/**
 * Acts on a command line that is not `run`: prints the help or the version on stdout (status 0), or the
 * problem and the usage on stderr (status {@link EXIT_USAGE}). Returns the exit status, or `undefined` for `run`.
 */
export function answerCommandLine(
  line: CommandLine,
  text: { program: string; usage: string; version: string },
  out: { stdout: (s: string) => void; stderr: (s: string) => void },
): number | undefined {
  switch (line.kind) {
    case 'run':
      return undefined;
    case 'help':
      out.stdout(text.usage);
      return 0;
    case 'version':
      out.stdout(`${text.program} ${text.version}\n`);
      return 0;
    case 'invalid':
      out.stderr(`${text.program}: ${line.problem}\n\n${text.usage}`);
      return EXIT_USAGE;
  }
}

function firstLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.split('\n')[0] ?? message;
}
