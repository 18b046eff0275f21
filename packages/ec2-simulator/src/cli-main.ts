import { parseArgs } from 'node:util';
import { answeredHelpOrVersion, HELP_AND_VERSION, usageErrorOf } from './cli-args.js';
import { isScenarioError } from './errors.js';
import { loadScenarioFile } from './scenario.js';
import { type Ec2Simulator, startEc2Simulator } from './simulator.js';

/** Parsed `ec2-simulator serve` arguments. */
export interface ServeArgs {
  /** Scenario file. */
  readonly scenario: string;
  /** Listen address. */
  readonly host: string;
  /** EC2 port (0 = any). */
  readonly port: number;
  /** Disable token buckets. */
  readonly noRateLimits: boolean;
  /** Random-source seed. */
  readonly seed: number;
  /** Pick free addresses at random. */
  readonly randomAddresses: boolean;
}

/** Error codes of the CLI's own argument checks. */
export type CliErrorCode = 'CLI_USAGE';

/** A usage error. */
export class CliError extends Error {
  /** Discriminator. */
  readonly kind = 'CliError' as const;
  /** Stable code. */
  readonly code: CliErrorCode = 'CLI_USAGE';
  /** @param message - what is wrong */
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Usage text. */
export const USAGE = [
  'usage: ec2-simulator serve --scenario FILE [--host 127.0.0.1] [--port 0] [--seed 1] [--no-rate-limits]',
  '                           [--random-addresses]',
  '       ec2-simulator --help | --version',
].join('\n');

const SERVE_OPTIONS = {
  scenario: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  seed: { type: 'string' },
  'no-rate-limits': { type: 'boolean' },
  'random-addresses': { type: 'boolean' },
  ...HELP_AND_VERSION,
} as const;

function parseServe(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: SERVE_OPTIONS, strict: true, allowPositionals: true });
  } catch (e) {
    throw usageErrorOf(e, (why) => new CliError(`${why}\n${USAGE}`));
  }
}

/** Parses `serve …` arguments (argv without node and script); throws {@link CliError} (code `CLI_USAGE`). */
export function parseServeArgs(argv: readonly string[]): ServeArgs {
  const { values, positionals } = parseServe(argv);
  if (positionals.length !== 1 || positionals[0] !== 'serve') throw new CliError(USAGE);
  const int = (flag: string, v: string | undefined, dflt: number, max: number) => {
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v) || Number(v) > max)
      throw new CliError(`--${flag}: ${v} is not a number up to ${max}`);
    return Number(v);
  };
  if (values.scenario === undefined) throw new CliError(`--scenario is required\n${USAGE}`);
  return {
    scenario: values.scenario,
    host: values.host ?? '127.0.0.1',
    port: int('port', values.port, 0, 65535),
    seed: int('seed', values.seed, 1, 2 ** 32 - 1),
    noRateLimits: values['no-rate-limits'] === true,
    randomAddresses: values['random-addresses'] === true,
  };
}

/** Streams and hooks the CLI uses (injected so tests can run it in-process). */
export interface CliIo {
  /** Writes a line to stdout. */
  readonly out: (line: string) => void;
  /** Writes a line to stderr. */
  readonly err: (line: string) => void;
  /** Registers a handler for SIGTERM/SIGINT. */
  readonly onStop: (handler: () => void) => void;
  /** What `--version` prints (the bin passes the package's version). */
  readonly version?: string;
}

/**
 * Runs `ec2-simulator serve`: starts the simulator, prints its endpoints as one JSON line, and resolves with
 * the exit code once stopped. Errors print one JSON line `{"error": CODE, "message": …}` to stderr (exit 2; a
 * usage error's message ends with the usage). `--help` prints the usage, `--version` the version (exit 0).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (answeredHelpOrVersion(argv, USAGE, io)) return 0;
  let sim: Ec2Simulator;
  try {
    const args = parseServeArgs(argv);
    const scenario = await loadScenarioFile(args.scenario);
    sim = await startEc2Simulator({
      scenario,
      host: args.host,
      port: args.port,
      seed: args.seed,
      ...(args.noRateLimits ? { rateLimits: false as const } : {}),
      addressAllocation: args.randomAddresses ? 'random' : 'sequential',
    });
  } catch (e) {
    const code = isScenarioError(e) || e instanceof CliError ? e.code : 'START_FAILED';
    io.err(JSON.stringify({ error: code, message: (e as Error).message }));
    return 2;
  }
  const stopped = new Promise<void>((resolve) => io.onStop(resolve));
  io.out(JSON.stringify(sim.endpoints));
  await stopped;
  await sim.close();
  return 0;
}
