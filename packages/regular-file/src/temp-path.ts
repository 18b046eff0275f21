import { basename, dirname, join } from 'node:path';

let sequence = 0;

/**
 * A fresh temp-file path beside `path` (`<name>.tmp-<pid>-<n>`), unique within this process across every
 * caller, so two writers of the same file in one process never collide. Only a process that died with the
 * same pid can have left one behind: {@link createTempFile} removes such a leftover.
 */
export function tempPathFor(path: string): string {
  sequence += 1;
  return join(dirname(path), `${basename(path)}.tmp-${process.pid}-${sequence}`);
}
