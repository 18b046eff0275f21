import { readFileSync, writeSync } from 'node:fs';
import { type PluginHandlers, type PluginOptions, runPlugin } from './skeleton.js';

/**
 * Runs {@link runPlugin} against the real process: `process.env`, fd 0, fds 1 and 2, the arguments, and sets
 * `process.exitCode` (the process exits once output is flushed). Output is written with `writeSync` on the
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
      stdin: () => readStdin(),
      stdout: (t) => writeOut(1, t),
      stderr: (t) => writeOut(2, t),
      args: process.argv.slice(2),
    },
    options,
  );
}

async function readStdin(): Promise<Uint8Array> {
  try {
    return readFileSync(0);
  } catch (e) {
    // A non-blocking pipe inherited from the parent: fall back to the stream.
    if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
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
