import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatastoreError } from '../errors.js';
import { tempPathFor } from './temp-name.js';

/**
 * Replaces the file at `path` with `text`, crash-safe, in the call: a temp file in the same directory
 * (created exclusively with `mode`) is written and fsynced, renamed over `path`, and the directory is
 * fsynced so the rename survives a power loss. A reader never sees a half-written file. With `flush` false
 * the two fsyncs are skipped: the rename is still atomic, so a killed process leaves a complete file.
 *
 * @throws {@link DatastoreError} `CheckpointWriteFailed` (the temp file is removed; `path` holds the previous
 *   content, or the new one if only the directory fsync failed).
 */
export function writeFileDurablySync(path: string, text: string, mode: number, flush = true): void {
  const tmp = tempPathFor(path);
  const dir = dirname(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', mode);
    const buf = Buffer.from(text, 'utf8');
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
    try {
      unlinkSync(tmp);
    } catch {}
    throw new DatastoreError('CheckpointWriteFailed', `cannot write checkpoint ${path}`, { cause });
  }
  if (!flush) return;
  let dfd: number | undefined;
  try {
    dfd = openSync(dir, 'r');
    fsyncSync(dfd);
  } catch (cause) {
    throw new DatastoreError('CheckpointWriteFailed', `cannot fsync directory ${dir}`, { cause });
  } finally {
    if (dfd !== undefined) closeSync(dfd);
  }
}
