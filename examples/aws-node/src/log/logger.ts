/**
 * What the daemon's and the plugin's logs share: the reference's level names, the JSON line format and the
 * logger interface. Each has its own writer (daemon/logger.ts, plugin/plugin-log.ts).
 */

/** Log levels, in the reference's names. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Severity order: a logger at level L writes the lines whose rank is at least L's. */
export const levelRank: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * The reference's level names (matched in any letter case) and the level each is: `warning` is `warn`, and
 * `fatal` is the most severe level there is here, `error` (such a log keeps only its errors, never more).
 */
const LEVEL_OF_NAME: Readonly<Record<string, LogLevel>> = {
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  fatal: 'error',
};

/** The level names `AWS_VPC_K8S_CNI_LOGLEVEL` and `AWS_VPC_K8S_PLUGIN_LOG_LEVEL` accept (any letter case). */
export const LOG_LEVEL_NAMES: readonly string[] = Object.keys(LEVEL_OF_NAME);

/**
 * Reads one of the reference's level names ({@link LOG_LEVEL_NAMES}: DEBUG, Info, warn, warning, error, fatal;
 * any letter case), or `undefined` for anything else.
 */
export function readLogLevel(s: string): LogLevel | undefined {
  const l = s.trim().toLowerCase();
  return Object.hasOwn(LEVEL_OF_NAME, l) ? LEVEL_OF_NAME[l] : undefined;
}

/**
 * {@link readLogLevel} for a level that was validated where it was set (the daemon refuses any other at start):
 * the plugin reads it back from the conflist, where an unknown name (a conflist written by someone else) means
 * `debug`, the reference's default.
 */
export function parseLogLevel(s: string): LogLevel {
  return readLogLevel(s) ?? 'debug';
}

/** One log line as both the daemon and the plugin write it: `ts`, `level`, `msg`, then the fields. */
export function formatLogLine(
  ts: number,
  level: LogLevel,
  msg: string,
  fields: Record<string, unknown>,
): string {
  return `${JSON.stringify({ ts: isoTime(ts), level, msg, ...fields })}\n`;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * `new Date(ms).toISOString()` for years 1970–9999, by integer arithmetic (days to civil date, H. Hinnant's
 * algorithm). The first `Date` formatting in a process costs ≈0.2 ms, a fifth of what a CNI plugin spends on
 * its log.
 */
export function isoTime(ms: number): string {
  const t = Math.floor(ms);
  const days = Math.floor(t / 86_400_000);
  const msOfDay = t - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(msOfDay / 3_600_000);
  const m = Math.floor(msOfDay / 60_000) % 60;
  const sec = Math.floor(msOfDay / 1000) % 60;
  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  return `${date}T${pad(h, 2)}:${pad(m, 2)}:${pad(sec, 2)}.${pad(msOfDay % 1000, 3)}Z`;
}

/** Structured JSON logs: one object per line with `ts`, `level`, `msg` and fields. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
