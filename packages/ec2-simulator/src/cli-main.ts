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
export const USAGE =
  'usage: ec2-simulator serve --scenario FILE [--host 127.0.0.1] [--port 0] [--seed 1] [--no-rate-limits] [--random-addresses]';

/** Parses `serve …` arguments (argv without node and script). */
export function parseServeArgs(argv: readonly string[]): ServeArgs {
  if (argv[0] !== 'serve') throw new CliError(USAGE);
  let scenario: string | undefined;
  let host = '127.0.0.1';
  let port = 0;
  let seed = 1;
  let noRateLimits = false;
  let randomAddresses = false;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new CliError(`${a} needs a value\n${USAGE}`);
      return v;
    };
    const int = (v: string, max: number) => {
      if (!/^\d+$/.test(v) || Number(v) > max) throw new CliError(`${a}: ${v} is not a number up to ${max}`);
      return Number(v);
    };
    if (a === '--scenario') scenario = value();
    else if (a === '--host') host = value();
    else if (a === '--port') port = int(value(), 65535);
    else if (a === '--seed') seed = int(value(), 2 ** 32 - 1);
    else if (a === '--no-rate-limits') noRateLimits = true;
    else if (a === '--random-addresses') randomAddresses = true;
    else throw new CliError(`unknown argument ${a}\n${USAGE}`);
  }
  if (scenario === undefined) throw new CliError(`--scenario is required\n${USAGE}`);
  return { scenario, host, port, seed, noRateLimits, randomAddresses };
}

/** Streams and hooks the CLI uses (injected so tests can run it in-process). */
export interface CliIo {
  /** Writes a line to stdout. */
  readonly out: (line: string) => void;
  /** Writes a line to stderr. */
  readonly err: (line: string) => void;
  /** Registers a handler for SIGTERM/SIGINT. */
  readonly onStop: (handler: () => void) => void;
}

/**
 * Runs `ec2-simulator serve`: starts the simulator, prints its endpoints as one JSON line, and resolves with
 * the exit code once stopped. Errors print one JSON line `{"error": CODE, "message": …}` to stderr (exit 2).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
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
