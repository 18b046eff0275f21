import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats, statSync } from 'node:fs';
import { errnoOf, type NonRegularFileType, RegularFileError } from './errors.js';

/**
 * Opened without blocking and never as a controlling terminal: `open(2)` of a FIFO for reading waits for a
 * writer, for ever when none comes; with `O_NONBLOCK` it returns at once and `fstat` then tells what it is.
 */
const READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Reads the file at `path` whole, or returns `undefined` when there is none (`ENOENT`). Only a regular file is
 * read: a FIFO at the path would block the read (and whatever waits on it: a daemon's start) until a writer
 * came, a character device such as `/dev/zero` would never end, a directory or a socket cannot be read. Each
 * is a `NotRegularFile` error naming what is there, found with one `open` and one `fstat` that never wait.
 * A symbolic link is followed (a Kubernetes volume's files are links into its timestamped directory).
 *
 * Synchronous, for the small files a program reads at start (state, credentials, certificates).
 *
 * @example
 * ```ts
 * const token = readRegularFile('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');
 * ```
 * @throws {@link RegularFileError} `NotRegularFile` (`fileType` says what is there) or `ReadFailed` (`errno`).
 */
export function readRegularFile(path: string): Buffer | undefined;
/** Reads the file at `path` as text; the same as {@link readRegularFile} otherwise. */
export function readRegularFile(path: string, encoding: BufferEncoding): string | undefined;
export function readRegularFile(path: string, encoding?: BufferEncoding): Buffer | string | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ);
  } catch (cause) {
    const errno = errnoOf(cause);
    if (errno === 'ENOENT') return undefined;
    // A socket cannot be opened (ENXIO); say what is there rather than only the errno.
    const fileType = errno === 'ENXIO' ? nonRegular(statOrUndefined(path)) : undefined;
    if (fileType !== undefined) throw notRegular(path, fileType);
    throw readFailed(path, cause);
  }
  try {
    const fileType = nonRegular(fstatSync(fd));
    if (fileType !== undefined) throw notRegular(path, fileType);
    return encoding === undefined ? readFileSync(fd) : readFileSync(fd, encoding);
  } catch (cause) {
    if (cause instanceof RegularFileError) throw cause;
    throw readFailed(path, cause);
  } finally {
    closeSync(fd);
  }
}

function notRegular(path: string, fileType: NonRegularFileType): RegularFileError {
  return new RegularFileError('NotRegularFile', path, `${path} is a ${fileType}, not a regular file`, {
    fileType,
  });
}

function readFailed(path: string, cause: unknown): RegularFileError {
  return new RegularFileError('ReadFailed', path, `cannot read ${path}: ${errnoOf(cause) ?? String(cause)}`, {
    cause,
  });
}

/** What `stats` describes when it is not a regular file; `undefined` for a regular file (or no stats). */
function nonRegular(stats: Stats | undefined): NonRegularFileType | undefined {
  if (stats === undefined || stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  return 'special file';
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
