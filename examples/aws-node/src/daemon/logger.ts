import { createWriteStream } from 'node:fs';

/** Log levels, in the reference's names. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured JSON logs: one object per line with `ts`, `level`, `msg` and fields. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Parses `AWS_VPC_K8S_CNI_LOGLEVEL` values (DEBUG, Info, warn, …); unknown → debug. */
export function parseLogLevel(s: string): LogLevel {
  const l = s.toLowerCase();
  return l === 'info' || l === 'warn' || l === 'error' ? l : l === 'warning' ? 'warn' : 'debug';
}

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
      if (rank[l] < rank[level]) return;
      write(`${JSON.stringify({ ts: new Date(now()).toISOString(), level: l, msg, ...fields })}\n`);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
