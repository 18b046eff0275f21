/**
 * `aws-node`: the daemon. Configuration comes from the reference's environment variables; invalid values stop
 * it at start with every problem named. SIGTERM/SIGINT stop it gracefully.
 */

import { loadConfig } from '../config/config.js';
import { ConfigError } from '../config/env-reader.js';
import { startDaemon } from '../daemon/daemon.js';
import { createLogger, parseLogLevel } from '../daemon/logger.js';
import { VERSION } from '../version.js';

async function main(): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`aws-node: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  const log = createLogger(config.logFile, parseLogLevel(config.logLevel));
  const daemon = await startDaemon(config, {
    log,
    version: process.env['VPC_CNI_VERSION'] || VERSION,
    bandwidthPlugin: process.env['ENABLE_BANDWIDTH_PLUGIN'] === 'true',
  });
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

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    // One line for the operator; startDaemon has already released what it opened, so nothing keeps the
    // process alive, and exiting now makes sure of it.
    process.stderr.write(`aws-node: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
