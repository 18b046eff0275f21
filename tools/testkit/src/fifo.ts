import { execFileSync, spawn } from 'node:child_process';

/** A FIFO made by {@link fifoWithLateWriter}; `stop` kills its writer if it has not come yet. */
export interface LateFifo {
  /** The FIFO's path. */
  readonly path: string;
  /** Kills the writer (call it in `finally`). */
  stop(): void;
}

/**
 * Makes a FIFO at `path` and a writer that opens it (and writes `text`) only after `afterMs`, so that code which
 * waits on the FIFO (an `open(2)` for reading blocks until a writer comes) returns then, and fails its test, instead
 * of hanging the test run; code that does not wait is long done by then.
 */
export function fifoWithLateWriter(path: string, afterMs = 3000, text = 'late'): LateFifo {
  execFileSync('mkfifo', [path]);
  const writer = spawn('sh', ['-c', `sleep ${afterMs / 1000}; printf '%s\\n' "$1" > "$0"`, path, text], {
    stdio: 'ignore',
  });
  return { path, stop: () => writer.kill('SIGKILL') };
}
