import { basename, dirname, join } from 'node:path';

let sequence = 0;

/**
 * A fresh temp-file path next to `path` (`<name>.tmp-<pid>-<n>`), unique within this process across every
 * file checkpointer, so two adapters writing the same checkpoint never collide.
 */
export function tempPathFor(path: string): string {
  sequence += 1;
  return join(dirname(path), `${basename(path)}.tmp-${process.pid}-${sequence}`);
}

/** The errno code (`ENOENT`, …) of a Node.js fs error, if it has one. */
export function errnoOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined;
}
