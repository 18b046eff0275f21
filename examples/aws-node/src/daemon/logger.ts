import { constants, createWriteStream, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMakeDirectoryError, makeDirectories } from '../fs/make-directories.js';
import { formatLogLine, type Logger, type LogLevel, levelRank } from '../log/logger.js';

export { type Logger, type LogLevel, parseLogLevel, silentLogger } from '../log/logger.js';

/**
 * The log file named by `AWS_VPC_K8S_CNI_LOG_FILE`, or its directory, cannot be created or opened for
 * appending. `errno` is the system error name (`EACCES`, `ENOTDIR`, `EEXIST` for a file in the directory's
 * place, `EROFS`, `ENOENT` for a parent that refuses new entries as `/proc` does, …).
 */
export class LogFileError extends Error {
  /** Stable code of this failure. */
  readonly code = 'LogFileUnwritable';
  /** Which step failed: creating the directory or opening the file. */
  readonly step: 'directory' | 'file';
  /** The path that could not be created or opened. */
  readonly path: string;
  /** The system error name, or `UNKNOWN`. */
  readonly errno: string;
  constructor(step: 'directory' | 'file', path: string, errno: string, options?: { cause?: unknown }) {
    super(
      step === 'directory'
        ? `cannot create the log directory ${path} (${errno})`
        : `cannot open the log file ${path} for appending (${errno})`,
      options,
    );
    this.name = 'LogFileError';
    this.step = step;
    this.path = path;
    this.errno = errno;
  }
}

/**
 * A logger writing to `stdout`, `stderr` or a file path, as `AWS_VPC_K8S_CNI_LOG_FILE` allows. A file's
 * directory is created (as the reference's logger does) and the file opened for appending before this returns,
 * so a path that cannot be written is a {@link LogFileError} at start rather than a crash later. Lines go
 * through a stream, so a log line never blocks the event loop on a disk write; if the file fails later (a
 * full disk), one line on stderr says so and logging continues on stderr. `now` is injected so tests get
 * stable timestamps.
 *
 * @throws {@link LogFileError} when the file or its directory cannot be created or opened.
 */
export function createLogger(destination: string, level: LogLevel, now: () => number = Date.now): Logger {
  const write =
    destination === 'stdout'
      ? (line: string) => process.stdout.write(line)
      : destination === 'stderr'
        ? (line: string) => process.stderr.write(line)
        : fileWriter(destination);
  const log =
    (l: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (levelRank[l] < levelRank[level]) return;
      write(formatLogLine(now(), l, msg, fields));
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function fileWriter(path: string): (line: string) => void {
  const errno = (e: unknown) => (e as NodeJS.ErrnoException).code ?? 'UNKNOWN';
  try {
    makeDirectories(dirname(path));
  } catch (cause) {
    if (!isMakeDirectoryError(cause)) throw cause;
    // Names the level that failed: the log's directory, or a parent of it.
    throw new LogFileError('directory', cause.path, cause.errno, { cause });
  }
  let fd: number;
  try {
    // Non-blocking: a FIFO nobody reads would hold the open (and the start) for ever; so it fails at once (ENXIO).
    fd = openSync(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
      0o644,
    );
  } catch (cause) {
    throw new LogFileError('file', path, errno(cause), { cause });
  }
  const stream = createWriteStream(path, { fd });
  let failed = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (failed) return;
    failed = true;
    process.stderr.write(
      `aws-node: writing the log file ${path} failed (${e.code ?? e.message}); logging to stderr from now on\n`,
    );
    // The stream closes its descriptor itself (autoClose).
  });
  return (line: string) => {
    if (failed) process.stderr.write(line);
    else stream.write(line);
  };
}
