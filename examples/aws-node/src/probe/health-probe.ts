/**
 * A gRPC health probe with grpc-health-probe's command line and exit codes, for the daemon's unix socket:
 * what the DaemonSet's liveness and readiness probes run. It makes one `grpc.health.v1.Health/Check` call with
 * the plugin's own HTTP/2 client (no gRPC library, one module beyond an empty Node script), so a probe costs
 * little more than starting Node.
 *
 * Exit codes (grpc-health-probe's): 0 SERVING, 1 invalid arguments, 2 connection failure (no socket,
 * refused, or `-connect-timeout` passed), 3 RPC failure (any gRPC error status, UNIMPLEMENTED and
 * DEADLINE_EXCEEDED included), 4 answered but not SERVING. Messages go to stderr, as the Go tool's `log`
 * package writes them, ending with `status: SERVING` on success.
 */

import { formatGoDuration, parseGoDuration } from '@vpc-cni-kit/go-duration';
import { GrpcStatus, isGrpcCallError, unaryCall } from '../rpc/grpc-client.js';
import { decode, encode, Methods, ServingStatus } from '../rpc/messages.js';
import { type FlagSpec, goFlagsUsage, parseGoFlags } from './go-flags.js';

/** grpc-health-probe's exit codes. */
export const ProbeExit = {
  SERVING: 0,
  INVALID_ARGUMENTS: 1,
  CONNECTION_FAILURE: 2,
  RPC_FAILURE: 3,
  UNHEALTHY: 4,
} as const;

const FLAGS: Readonly<Record<string, FlagSpec>> = {
  addr: {
    kind: 'string',
    usage:
      "(required) the daemon's socket: unix:///path or unix:path (e.g. unix:///var/run/aws-node/ipamd.sock)",
  },
  service: { kind: 'string', usage: 'service name to check (default: "")' },
  'user-agent': {
    kind: 'string',
    usage: 'user-agent header value of health check requests (default "grpc_health_probe")',
  },
  'connect-timeout': { kind: 'duration', usage: 'timeout for establishing connection (default 1s)' },
  'rpc-timeout': { kind: 'duration', usage: 'timeout for health check rpc (default 1s)' },
  tls: { kind: 'bool', usage: 'use TLS (not supported: the daemon serves gRPC on a local unix socket)' },
  v: { kind: 'bool', usage: 'verbose logs' },
  version: { kind: 'bool', usage: 'print the probe version and exit' },
};

/** The probe's usage text. */
export function probeUsage(program: string): string {
  return `Usage of ${program}:\n${goFlagsUsage(FLAGS)}`;
}

/** Where the probe writes, and how it reads time (for the verbose timings). */
export interface ProbeIo {
  readonly stderr: (s: string) => void;
  readonly now: () => number;
  /** This build's version, for `-version`. */
  readonly version: string;
}

/** The socket path of a grpc-health-probe `-addr` the probe can reach, or `undefined`. */
export function unixSocketPath(addr: string): string | undefined {
  if (addr.startsWith('unix://')) {
    const path = addr.slice('unix://'.length);
    return path.startsWith('/') ? path : undefined;
  }
  if (addr.startsWith('unix:')) return addr.slice('unix:'.length) || undefined;
  return undefined;
}

/** Runs the probe with `argv` (the arguments after the program name); resolves to its exit code. */
export async function runHealthProbe(
  argv: readonly string[],
  io: ProbeIo,
  program = 'grpc-health-probe',
): Promise<number> {
  const log = (line: string) => io.stderr(`${line}\n`);
  const parsed = parseGoFlags(argv, FLAGS, parseGoDuration);
  if (parsed.kind === 'help') {
    io.stderr(probeUsage(program));
    return ProbeExit.INVALID_ARGUMENTS;
  }
  if (parsed.kind === 'invalid') {
    log(parsed.problem);
    io.stderr(probeUsage(program));
    return ProbeExit.INVALID_ARGUMENTS;
  }
  const v = parsed.values;
  if (v['version'] === true) {
    log(`${program} ${io.version}`);
    return ProbeExit.SERVING;
  }
  const argError = (problem: string) => {
    log(`error: ${problem}`);
    return ProbeExit.INVALID_ARGUMENTS;
  };
  if (parsed.rest.length > 0) return argError(`unexpected argument ${JSON.stringify(parsed.rest[0])}`);
  const addr = typeof v['addr'] === 'string' ? v['addr'] : '';
  if (addr === '') return argError('-addr not specified');
  const socketPath = unixSocketPath(addr);
  if (socketPath === undefined)
    return argError(`-addr ${JSON.stringify(addr)} is not a unix socket address (unix:///path or unix:path)`);
  if (v['tls'] === true)
    return argError('-tls is not supported: the daemon serves gRPC on a local unix socket');
  const connectTimeoutMs = typeof v['connect-timeout'] === 'number' ? v['connect-timeout'] : 1000;
  const rpcTimeoutMs = typeof v['rpc-timeout'] === 'number' ? v['rpc-timeout'] : 1000;
  if (connectTimeoutMs <= 0)
    return argError(
      `-connect-timeout must be greater than zero (specified: ${formatGoDuration(connectTimeoutMs)})`,
    );
  if (rpcTimeoutMs <= 0)
    return argError(`-rpc-timeout must be greater than zero (specified: ${formatGoDuration(rpcTimeoutMs)})`);
  const verbose = v['v'] === true;
  if (verbose) {
    log('parsed options:');
    log(
      `> addr=${addr} conn_timeout=${formatGoDuration(connectTimeoutMs)} rpc_timeout=${formatGoDuration(rpcTimeoutMs)}`,
    );
  }

  const started = io.now();
  let bytes: Uint8Array;
  try {
    bytes = await unaryCall({
      socketPath,
      method: Methods.HealthCheck,
      request: encode('HealthCheckRequest', {
        service: typeof v['service'] === 'string' ? v['service'] : '',
      }),
      connectTimeoutMs,
      timeoutMs: rpcTimeoutMs,
      userAgent: typeof v['user-agent'] === 'string' ? v['user-agent'] : 'grpc_health_probe',
    });
  } catch (e) {
    if (!isGrpcCallError(e)) throw e;
    if (!e.connected) {
      log(
        e.grpcStatus === GrpcStatus.DEADLINE_EXCEEDED
          ? `timeout: failed to connect service ${JSON.stringify(addr)} within ${formatGoDuration(connectTimeoutMs)}`
          : `error: failed to connect service at ${JSON.stringify(addr)}: ${e.message}`,
      );
      return ProbeExit.CONNECTION_FAILURE;
    }
    if (e.grpcStatus === GrpcStatus.UNIMPLEMENTED)
      log('error: this server does not implement the grpc health protocol (grpc.health.v1.Health)');
    else if (e.grpcStatus === GrpcStatus.DEADLINE_EXCEEDED)
      log(`timeout: health rpc did not complete within ${formatGoDuration(rpcTimeoutMs)}`);
    else log(`error: health rpc failed: ${e.message} (gRPC status ${e.grpcStatus})`);
    return ProbeExit.RPC_FAILURE;
  }
  const status = decode('HealthCheckResponse', bytes).status;
  const name = Object.entries(ServingStatus).find(([, n]) => n === status)?.[0] ?? String(status);
  if (status !== ServingStatus.SERVING) {
    log(`service unhealthy (responded with ${JSON.stringify(name)})`);
    return ProbeExit.UNHEALTHY;
  }
  if (verbose) log(`time elapsed: ${formatGoDuration(io.now() - started)}`);
  log(`status: ${name}`);
  return ProbeExit.SERVING;
}
