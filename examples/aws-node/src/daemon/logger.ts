import { createWriteStream } from 'node:fs';
import { formatLogLine, type Logger, type LogLevel, levelRank } from '../log/logger.js';

export { type Logger, type LogLevel, parseLogLevel, silentLogger } from '../log/logger.js';

/**
 * A logger writing to `stdout`, `stderr` or a file path (appended, through a stream so a log line never
 * blocks the event loop on a disk write), as `AWS_VPC_K8S_CNI_LOG_FILE` allows. `now` is injected so tests get
 * stable timestamps.
 */
export function createLogger(destination: string, level: LogLevel, now: () => number = Date.now): Logger {
  const write =
    destination === 'stdout'
      ? (line: string) => process.stdout.write(line)
      : destination === 'stderr'
        ? (line: string) => process.stderr.write(line)
        : (() => {
            const stream = createWriteStream(destination, { flags: 'a' });
            return (line: string) => {
              stream.write(line);
            };
          })();
  const log =
    (l: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (levelRank[l] < levelRank[level]) return;
      write(formatLogLine(now(), l, msg, fields));
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
