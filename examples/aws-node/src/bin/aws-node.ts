/**
 * `aws-node`: the daemon. Configuration comes from the reference's environment variables; invalid values stop
 * it at start with every problem named. The command line only takes `--help` and `--version`: anything else is
 * refused (exit 2) before anything touches the node. A start-up failure is one line on stderr (and in the
 * log) with a hint, exit 1. SIGTERM/SIGINT stop it gracefully.
 */

import { answerCommandLine } from '@vpc-cni-kit/command-line';
import { readCommandLine } from '../cli/command-line.js';
import { describeStartFailure } from '../cli/start-failure.js';
import { runStatus } from '../cli/status.js';
import { type AwsNodeConfig, loadConfig } from '../config/config.js';
import { ConfigError } from '../config/env-reader.js';
import { startDaemon } from '../daemon/daemon.js';
import { createLogger, type Logger, parseLogLevel } from '../daemon/logger.js';
import { programVersion } from '../version.js';

const USAGE = `Usage: aws-node [--help] [--version]
       aws-node status [--json] [--address host:port|unix:<path>]

The aws-node daemon (IPAM for the aws-cni CNI plugin): discovers the instance through IMDS, manages its ENIs
and addresses through EC2, sets up the host network and serves the plugin on AWS_NODE_IPAMD_SOCKET
(default /var/run/aws-node/ipamd.sock). It is configured by the AWS VPC CNI's environment variables
(WARM_IP_TARGET, ENABLE_PREFIX_DELEGATION, AWS_VPC_K8S_CNI_LOG_FILE, ...; see the package README), read once
at start; an invalid value stops it with every problem named.

Options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit

\`aws-node status\` prints the running daemon's ENIs, pods and pool from its introspection endpoint.

Exit status: 0 after a graceful stop (SIGTERM, SIGINT), 1 when it cannot start, 2 on a bad command line.
Health: grpc-health-probe -addr=unix:///var/run/aws-node/ipamd.sock
`;

const stdio = {
  stdout: (s: string) => process.stdout.write(s),
  stderr: (s: string) => process.stderr.write(s),
};

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'status') return runStatus(argv.slice(1), process.env, stdio);
  const version = programVersion(process.env);
  const answered = answerCommandLine(readCommandLine(argv), { program: 'aws-node', usage: USAGE, version }, stdio);
  if (answered !== undefined) return answered;

  let config: AwsNodeConfig;
  let log: Logger;
  try {
    config = loadConfig(process.env);
    log = createLogger(config.logFile, parseLogLevel(config.logLevel));
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`aws-node: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`aws-node: ${describeStartFailure(e, { imdsEndpoint: undefined })}\n`);
    return 1;
  }
  // The first line: what runs, and with which configuration (every value, defaults included).
  log.info('aws-node starting', { version, node: process.version, pid: process.pid, config });

  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon(config, { log, version });
  } catch (e) {
    const line = describeStartFailure(e, { imdsEndpoint: config.imdsEndpoint });
    log.debug('start failure detail', { stack: e instanceof Error ? e.stack : String(e) });
    log.error('aws-node cannot start', { reason: line });
    process.stderr.write(`aws-node: ${line}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info('signal received, stopping', { signal });
      daemon.stop().then(resolve, (e: unknown) => {
        log.error('stop failed', { error: String(e) });
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}

/**
 * A failed start: startDaemon has already released what it opened, so the process normally ends at once, its
 * log lines flushed; should anything still hold the event loop, it is ended a second later regardless.
 */
function exitSoon(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 1000).unref();
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code === 0) process.exitCode = 0;
    else exitSoon(code);
  },
  (e: unknown) => {
    process.stderr.write(`aws-node: ${describeStartFailure(e, { imdsEndpoint: undefined })}\n`);
    exitSoon(1);
  },
);
