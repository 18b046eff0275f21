import { parseArgs } from 'node:util';
import { answeredHelpOrVersion, HELP_AND_VERSION, usageErrorOf } from '../cli-args.js';
import { isScenarioError } from '../errors.js';
import { INSTANCE_TYPES } from '../instance-types.js';
import { loadScenarioFile, type Scenario } from '../scenario.js';
import { isVpcError, VpcError } from './errors.js';
import { checkRunId } from './names.js';
import { downAllStale, downRun, listRuns } from './run-state.js';
import { startVirtualVpc } from './virtual-vpc.js';

/** Usage text of `vpc-sim`. */
export const VPC_USAGE = [
  'usage: vpc-sim up [--scenario FILE | --nodes N --instance-type T --vpc-cidr CIDR... --subnet CIDR...]',
  '                  [--region R] [--seed N] [--no-rate-limits] [--run-id ID]',
  '       vpc-sim down --run ID | --all-stale',
  '       vpc-sim list',
  '       vpc-sim --help | --version',
].join('\n');

/** Parsed `vpc-sim` arguments. */
export type VpcCliArgs =
  | {
      /** Start a run. */
      readonly command: 'up';
      /** Scenario file, or `undefined` to build one from the flags. */
      readonly scenarioFile: string | undefined;
      /** Number of instances (flags mode). */
      readonly nodes: number;
      /** Instance type (flags mode). */
      readonly instanceType: string;
      /** VPC CIDR blocks, primary first (flags mode). */
      readonly vpcCidrs: readonly string[];
      /** Subnet CIDRs; instances go into the first (flags mode). */
      readonly subnets: readonly string[];
      /** Region (flags mode). */
      readonly region: string;
      /** Simulator seed. */
      readonly seed: number;
      /** Disable EC2 rate limits. */
      readonly noRateLimits: boolean;
      /** Fixed run id. */
      readonly runId: string | undefined;
    }
  | {
      /** Remove a run or every stale run. */
      readonly command: 'down';
      /** The run to remove. */
      readonly runId: string | undefined;
      /** Remove every run whose process is gone. */
      readonly allStale: boolean;
    }
  | {
      /** List runs. */
      readonly command: 'list';
    };

/** What the CLI needs from its process. */
export interface VpcCliIo {
  /** Writes one line to stdout. */
  readonly out: (line: string) => void;
  /** Writes one line to stderr. */
  readonly err: (line: string) => void;
  /** Registers the handler to run on SIGTERM/SIGINT. */
  readonly onStop: (handler: () => void) => void;
  /** What `--version` prints (the bin passes the package's version). */
  readonly version?: string;
}

const usage = (why: string) => new VpcError('VPC_INVALID_OPTIONS', 'cli', `${why}\n${VPC_USAGE}`);

/** `parseArgs`, strict, with `--help`/`--version`; its errors are `VPC_INVALID_OPTIONS` with the usage. */
function strictParse<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(
  args: readonly string[],
  options: T,
  toError: (why: string) => Error = usage,
) {
  try {
    return parseArgs({ args: [...args], options: { ...options, ...HELP_AND_VERSION }, strict: true });
  } catch (e) {
    throw usageErrorOf(e, toError);
  }
}

/** Parses `vpc-sim` arguments (argv without node and script); throws `VPC_INVALID_OPTIONS`. */
export function parseVpcCliArgs(argv: readonly string[]): VpcCliArgs {
  const [command, ...rest] = argv;
  const int = (text: string, flag: string, min: number, max: number): number => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw usage(`${flag} must be an integer from ${min} to ${max}`);
    }
    return Number(text);
  };
  if (command === 'list') {
    strictParse(rest, {}, (why) => usage(`list takes no arguments (${why})`));
    return { command };
  }
  if (command === 'down') {
    const { values } = strictParse(rest, {
      run: { type: 'string' },
      'all-stale': { type: 'boolean' },
    } as const);
    const runId = values.run === undefined ? undefined : checkRunId('cli', values.run);
    const allStale = values['all-stale'] === true;
    if ((runId === undefined) === !allStale)
      throw usage('down needs exactly one of --run ID and --all-stale');
    return { command, runId, allStale };
  }
  if (command !== 'up') throw usage(command === undefined ? 'missing command' : `unknown command ${command}`);
  const { values } = strictParse(rest, {
    scenario: { type: 'string' },
    nodes: { type: 'string' },
    'instance-type': { type: 'string' },
    'vpc-cidr': { type: 'string', multiple: true },
    subnet: { type: 'string', multiple: true },
    region: { type: 'string' },
    seed: { type: 'string' },
    'no-rate-limits': { type: 'boolean' },
    'run-id': { type: 'string' },
  } as const);
  const instanceType = values['instance-type'] ?? 'm5.large';
  if (!INSTANCE_TYPES.has(instanceType)) throw usage(`unknown instance type ${instanceType}`);
  const flagsUsed = ['nodes', 'instance-type', 'vpc-cidr', 'subnet', 'region'].some((f) => f in values);
  if (values.scenario !== undefined && flagsUsed)
    throw usage('--scenario cannot be combined with scenario flags');
  return {
    command,
    scenarioFile: values.scenario,
    nodes: values.nodes === undefined ? 2 : int(values.nodes, '--nodes', 1, 64),
    instanceType,
    vpcCidrs: values['vpc-cidr'] ?? ['10.0.0.0/16'],
    subnets: values.subnet ?? ['10.0.0.0/20'],
    region: values.region ?? 'us-west-2',
    seed: values.seed === undefined ? 1 : int(values.seed, '--seed', 0, 2 ** 31 - 1),
    noRateLimits: values['no-rate-limits'] === true,
    runId: values['run-id'] === undefined ? undefined : checkRunId('cli', values['run-id']),
  };
}

/** The scenario `vpc-sim up` builds from flags: one VPC, the subnets, `nodes` instances in the first subnet. */
export function flagsScenario(a: Extract<VpcCliArgs, { command: 'up' }>): Scenario {
  const hex = (n: number) => n.toString(16).padStart(17, '0');
  return {
    region: a.region,
    vpcs: [{ id: `vpc-${hex(1)}`, cidrBlocks: a.vpcCidrs }],
    subnets: a.subnets.map((cidrBlock, i) => ({ id: `subnet-${hex(i + 1)}`, cidrBlock })),
    instances: Array.from({ length: a.nodes }, () => ({
      instanceType: a.instanceType,
      subnetId: `subnet-${hex(1)}`,
    })),
  };
}

function errorLine(e: unknown): string {
  if (isVpcError(e) || isScenarioError(e)) return JSON.stringify({ error: e.code, message: e.message });
  return JSON.stringify({ error: 'INTERNAL', message: String(e) });
}

/**
 * Runs `vpc-sim`. `up` prints one JSON line (the run's description) and resolves only after a stop signal
 * and a complete teardown; `down` and `list` print JSON and return; `--help` prints the usage and `--version`
 * the version. Resolves with the exit code (0 ok, 1 failure, 2 usage: a JSON error line whose message ends with
 * the usage).
 */
export async function runVpcCli(argv: readonly string[], io: VpcCliIo): Promise<number> {
  if (answeredHelpOrVersion(argv, VPC_USAGE, io)) return 0;
  let args: VpcCliArgs;
  try {
    args = parseVpcCliArgs(argv);
  } catch (e) {
    io.err(errorLine(e));
    return 2;
  }
  try {
    if (args.command === 'list') {
      for (const r of listRuns())
        io.out(JSON.stringify({ runId: r.record.runId, pid: r.record.pid, alive: r.alive }));
      return 0;
    }
    if (args.command === 'down') {
      if (args.allStale) io.out(JSON.stringify({ removedRuns: downAllStale() }));
      else io.out(JSON.stringify({ runId: args.runId, removedNamespaces: await downRun(args.runId!) }));
      return 0;
    }
    const scenario =
      args.scenarioFile !== undefined ? await loadScenarioFile(args.scenarioFile) : flagsScenario(args);
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    io.onStop(() => stop());
    const vpc = await startVirtualVpc({
      scenario,
      ...(args.runId !== undefined ? { runId: args.runId } : {}),
      simulator: { seed: args.seed, ...(args.noRateLimits ? { rateLimits: false } : {}) },
      stopsOnSigterm: true,
      onError: (e) => io.err(errorLine(e)),
    });
    io.out(JSON.stringify(vpc.describe()));
    await stopped;
    await vpc.close();
    return 0;
  } catch (e) {
    io.err(errorLine(e));
    return 1;
  }
}
