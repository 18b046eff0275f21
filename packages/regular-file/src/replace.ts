import { closeSync, constants, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { errnoOf, RegularFileError } from './errors.js';
import { tempPathFor } from './temp-path.js';

/** How {@link replaceFileSync} writes. */
export interface ReplaceOptions {
  /** Permission bits of the new file (the process umask applies). @defaultValue `0o600` */
  readonly mode?: number;
  /**
   * Whether the new content must survive a power loss: the temp file is fsynced before the rename and the
   * directory after it. Without, the rename is still atomic, so a killed process leaves the old or the new
   * file whole. @defaultValue `true`
   */
  readonly flush?: boolean;
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * Creates `tmp` as a new, empty regular file and returns its descriptor. `O_CREAT | O_EXCL` never opens
 * anything already there: not a FIFO (which a plain open for writing would wait on for a reader), nor a
 * symbolic link's target elsewhere, nor a directory. A temp path from {@link tempPathFor} is this process's
 * own, so whatever holds it was left by a dead process with the same pid (a container's pid 1 of an earlier
 * run): it is unlinked (`unlink(2)` removes a link, a FIFO or a socket without opening or following it) and
 * the create tried once more.
 *
 * @param flags - extra open flags (`O_SYNC`, …)
 * @throws the fs error when the file cannot be created
 */
export function createTempFile(tmp: string, mode: number, flags = 0): number {
  try {
    return openSync(tmp, CREATE | flags, mode);
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') throw e;
    unlinkSync(tmp);
    return openSync(tmp, CREATE | flags, mode);
  }
}

/**
 * Replaces the file at `path` with `data`, atomically: a temp file beside it ({@link tempPathFor}, created
 * by {@link createTempFile}) is written (and fsynced), renamed over `path`, and the directory is fsynced so
 * the rename survives a power loss. A reader never sees a half-written file, and nothing already at the temp
 * path (a FIFO, a symbolic link) is opened. Whatever is at `path` itself is replaced, not written through: a
 * symbolic link there is replaced by the file, not followed; a directory there fails (`EISDIR`).
 *
 * @example
 * ```ts
 * replaceFileSync('/host/opt/cni/bin/aws-cni', bytes, { mode: 0o755 });
 * ```
 * @throws {@link RegularFileError} `WriteFailed` (the temp file is removed; `path` holds its previous content,
 *   or the new one if only the directory fsync failed).
 */
export function replaceFileSync(path: string, data: string | Uint8Array, options: ReplaceOptions = {}): void {
  const flush = options.flush ?? true;
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  let created = false;
  try {
    fd = createTempFile(tmp, options.mode ?? 0o600);
    created = true;
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (flush) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (cause) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {}
    }
    if (created) {
      try {
        unlinkSync(tmp);
      } catch {}
    }
    throw writeFailed(path, `cannot write ${path}`, cause);
  }
  if (!flush) return;
  const dir = dirname(path);
  let dfd: number | undefined;
  try {
    dfd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    fsyncSync(dfd);
  } catch (cause) {
    throw writeFailed(path, `cannot fsync directory ${dir}`, cause);
  } finally {
    if (dfd !== undefined) closeSync(dfd);
  }
}

function writeFailed(path: string, what: string, cause: unknown): RegularFileError {
  return new RegularFileError('WriteFailed', path, `${what}: ${errnoOf(cause) ?? String(cause)}`, { cause });
}
