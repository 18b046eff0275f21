/**
 * Read and replace small state files without ever blocking. {@link readRegularFile} reads only a regular file:
 * a FIFO, device, socket or directory at the path is a typed error at once (an `open` that never waits and an
 * `fstat`), not a start that hangs. {@link replaceFileSync} writes an exclusive temp file beside the target
 * and renames it into place, so nothing already at a temp path is opened and readers never see half a file.
 *
 * @packageDocumentation
 */
export {
  isRegularFileError,
  type NonRegularFileType,
  RegularFileError,
  type RegularFileErrorCode,
} from './errors.js';
export { readRegularFile } from './read.js';
export { createTempFile, type ReplaceOptions, replaceFileSync } from './replace.js';
export { tempPathFor } from './temp-path.js';
