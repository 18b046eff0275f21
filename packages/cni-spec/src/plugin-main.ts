import { readSync, writeSync } from 'node:fs';
import { type PluginHandlers, type PluginOptions, runPlugin } from './skeleton.js';

/**
 * Runs {@link runPlugin} against the real process: `process.env`, fd 0 (read up to
 * {@link PluginOptions.maxStdinBytes}, never further), fds 1 and 2, the arguments, and sets `process.exitCode`
 * (the process exits once output is flushed). Output is written with `writeSync` on the
 * file descriptors, not through `process.stdout`: creating that stream loads `node:net` and the streams
 * machinery (≈2 ms of a plugin's start-up) just to print one line. The entry point of a plugin binary:
 *
 * ```ts
 * import { pluginMain } from '@vpc-cni-kit/cni-spec';
 * pluginMain({ add, del, check });
 * ```
 */
export async function pluginMain(handlers: PluginHandlers, options: PluginOptions = {}): Promise<void> {
  process.exitCode = await runPlugin(
    handlers,
    {
      env: process.env,
      stdin: (maxBytes) => readStdin(maxBytes),
      stdout: (t) => writeOut(1, t),
      stderr: (t) => writeOut(2, t),
      args: process.argv.slice(2),
    },
    options,
  );
}

/** Bytes asked of each `read(2)` of stdin (what `readFileSync` asks of a pipe). */
const READ_CHUNK = 64 * 1024;

/**
 * Reads fd 0 to its end, or until it has given more than `maxBytes` bytes: a writer that never stops costs at
 * most `maxBytes + 1` bytes of memory, and the skeleton refuses the request (code 5).
 */
async function readStdin(maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    while (total <= maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, maxBytes + 1 - total));
      const n = readSync(0, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
    }
  } catch (e) {
    // A non-blocking pipe inherited from the parent: go on with the stream, which waits for data.
    if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    for await (const chunk of process.stdin) {
      chunks.push(chunk as Buffer);
      total += (chunk as Buffer).length;
      if (total > maxBytes) break;
    }
  }
  return Buffer.concat(chunks, total);
}

/**
 * Writes all of `text` to fd 1 or 2. A descriptor the runtime left non-blocking can refuse with EAGAIN
 * when its pipe is full; the rest then goes through the process stream, which waits for room.
 */
function writeOut(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(written));
  }
}
