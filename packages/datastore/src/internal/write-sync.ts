import { isRegularFileError, replaceFileSync } from '@vpc-cni-kit/regular-file';
import { DatastoreError } from '../errors.js';

/**
 * Replaces the file at `path` with `text`, crash-safe, in the call ({@link replaceFileSync}: an exclusive temp
 * file written and fsynced, renamed over `path`, the directory fsynced). With `flush` false the two fsyncs are
 * skipped: the rename is still atomic, so a killed process leaves a complete file.
 *
 * @throws {@link DatastoreError} `CheckpointWriteFailed` (the temp file is removed; `path` holds the previous
 *   content, or the new one if only the directory fsync failed; `cause` is the fs error).
 */
export function writeFileDurablySync(path: string, text: string, mode: number, flush = true): void {
  try {
    replaceFileSync(path, text, { mode, flush });
  } catch (e) {
    throw new DatastoreError(
      'CheckpointWriteFailed',
      isRegularFileError(e) ? e.message : `cannot write checkpoint ${path}`,
      {
        cause: isRegularFileError(e) ? (e.cause ?? e) : e,
      },
    );
  }
}
