import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats, statSync } from 'node:fs';
import type { NonRegularFileType } from '../errors.js';
import { DatastoreError } from '../errors.js';
import { errnoOf } from './temp-name.js';

/**
 * Opened without blocking and never as a controlling terminal: `open(2)` of a FIFO for reading waits for a
 * writer, for ever when none comes; with `O_NONBLOCK` it returns at once and `fstat` then tells what it is.
 */
const READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Reads the checkpoint file at `path` as UTF-8, or `undefined` when there is none (a fresh node). Only a
 * regular file is read: a FIFO at the path would block the read (and a daemon's start) until a writer
 * came, a character device such as `/dev/zero` would never end, a directory or a socket cannot be read. Each
 * is `CheckpointReadFailed` with {@link DatastoreErrorDetails.fileType}, found with one `open` and one `fstat`
 * that never wait.
 *
 * @throws {@link DatastoreError} `CheckpointReadFailed`: the path is not a regular file (`fileType` says what
 *   it is), or the read failed (`cause` is the fs error).
 */
export function readCheckpointFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ);
  } catch (cause) {
    const errno = errnoOf(cause);
    if (errno === 'ENOENT') return undefined;
    // A socket cannot be opened (ENXIO); say what is there rather than only the errno.
    const fileType = errno === 'ENXIO' ? nonRegular(statOrUndefined(path)) : undefined;
    if (fileType !== undefined) throw notRegular(path, fileType);
    throw new DatastoreError('CheckpointReadFailed', `cannot read checkpoint ${path}`, { cause });
  }
  try {
    const fileType = nonRegular(fstatSync(fd));
    if (fileType !== undefined) throw notRegular(path, fileType);
    return readFileSync(fd, 'utf8');
  } catch (cause) {
    if (cause instanceof DatastoreError) throw cause;
    throw new DatastoreError('CheckpointReadFailed', `cannot read checkpoint ${path}`, { cause });
  } finally {
    closeSync(fd);
  }
}

function notRegular(path: string, fileType: NonRegularFileType): DatastoreError {
  return new DatastoreError(
    'CheckpointReadFailed',
    `cannot read checkpoint ${path}: it is a ${fileType}, not a regular file`,
    { fileType },
  );
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
