import { readFileSync } from 'node:fs';
import { type PluginHandlers, type PluginOptions, runPlugin } from './skeleton.js';

/**
 * Runs {@link runPlugin} against the real process: `process.env`, fd 0, `process.stdout`/`stderr`, and sets
 * `process.exitCode` (the process exits once output is flushed). The entry point of a plugin binary:
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
      stdout: (t) => process.stdout.write(t),
      stderr: (t) => process.stderr.write(t),
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
