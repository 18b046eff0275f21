import { isRegularFileError, readRegularFile } from '@vpc-cni-kit/regular-file';
import { DatastoreError } from '../errors.js';

/**
 * Reads the checkpoint file at `path` as UTF-8, or `undefined` when there is none (a fresh node). Only a
 * regular file is read ({@link readRegularFile}): a FIFO, device, socket or directory at the path is
 * `CheckpointReadFailed` with {@link DatastoreErrorDetails.fileType}, found without ever waiting.
 *
 * @throws {@link DatastoreError} `CheckpointReadFailed`: the path is not a regular file (`fileType` says what
 *   it is), or the read failed (`cause` is the fs error).
 */
export function readCheckpointFile(path: string): string | undefined {
  try {
    return readRegularFile(path, 'utf8');
  } catch (cause) {
    if (isRegularFileError(cause) && cause.fileType !== undefined)
      throw new DatastoreError(
        'CheckpointReadFailed',
        `cannot read checkpoint ${path}: it is a ${cause.fileType}, not a regular file`,
        { fileType: cause.fileType },
      );
    throw new DatastoreError('CheckpointReadFailed', `cannot read checkpoint ${path}`, {
      cause: isRegularFileError(cause) ? (cause.cause ?? cause) : cause,
    });
  }
}
