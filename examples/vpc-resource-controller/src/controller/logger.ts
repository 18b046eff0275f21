/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

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
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  return {
    log(level, msg, fields = {}) {
      if (order[level] < order[min]) return;
      write(`${JSON.stringify({ level, ts: new Date(now()).toISOString(), msg, ...fields })}\n`);
    },
  };
}
