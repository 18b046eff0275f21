/** Exit status of a refused command line (the conventional "usage" status). */
export const EXIT_USAGE = 2;

/**
 * What a command line asks of a program, as far as {@link answerCommandLine} is concerned: to run (with whatever
 * else the program read), its help, its version, or nothing it accepts (`problem` says why, in one line).
 */
export type CommandLineAsk =
  | { readonly kind: 'run' }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'invalid'; readonly problem: string };

/** What {@link answerCommandLine} prints about a program. */
export interface AnswerText {
  /** The program's name, the first word of the version line and of a refusal. */
  readonly program: string;
  /** The usage text, printed whole (it ends with its own newline). */
  readonly usage: string;
  /** The version printed after the name. */
  readonly version: string;
}

/** Where {@link answerCommandLine} writes. */
export interface AnswerOutput {
  /** Standard output: the help and the version. */
  readonly stdout: (s: string) => void;
  /** Standard error: a refusal. */
  readonly stderr: (s: string) => void;
}

/**
 * Acts on a command line that is not `run`: prints `usage` on stdout (status 0), `<program> <version>` on
 * stdout (status 0), or `<program>: <problem>`, a blank line and `usage` on stderr (status {@link EXIT_USAGE}).
 * Returns the exit status, or `undefined` for `run`, which is the program's to carry out.
 *
 * @param line - what the command line asks
 * @param text - the program's name (the first word of each line it prints), usage text and version
 * @param out - where the answer goes
 */
export function answerCommandLine(
  line: Exclude<CommandLineAsk, { readonly kind: 'run' }>,
  text: AnswerText,
  out: AnswerOutput,
): number;
export function answerCommandLine(
  line: CommandLineAsk,
  text: AnswerText,
  out: AnswerOutput,
): number | undefined;
export function answerCommandLine(
  line: CommandLineAsk,
  text: AnswerText,
  out: AnswerOutput,
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
