/** The levels, least severe first: what `--log-level` accepts. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Severity of a log line. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** {@link LOG_LEVELS} as a usage text says it: `debug, info, warn or error`. */
export const LOG_LEVEL_CHOICES = `${LOG_LEVELS.slice(0, -1).join(', ')} or ${LOG_LEVELS.at(-1)}`;

/** Whether `name` is one of {@link LOG_LEVELS} (exactly, lower case). */
export function isLogLevel(name: string): name is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(name);
}

/** Where the controller reports: one JSON object per line. */
export interface Logger {
  /** Writes one line at `level` with a message and fields. */
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

/** A {@link Logger} writing JSON lines (`{"level","ts","msg",…}`) through `write`, dropping levels below `min`. */
export function jsonLogger(
  write: (line: string) => void,
  min: LogLevel = 'info',
  now = () => Date.now(),
): Logger {
  const least = LOG_LEVELS.indexOf(min);
  return {
    log(level, msg, fields = {}) {
      if (LOG_LEVELS.indexOf(level) < least) return;
      write(`${JSON.stringify({ level, ts: new Date(now()).toISOString(), msg, ...fields })}\n`);
    },
  };
}
