import { spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The fuse Node's single-executable support looks for; present only in Node binaries built with it. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** What {@link buildSingleExecutable} did. */
export type SingleExecutableOutcome =
  | { readonly built: true; readonly bytes: number }
  | { readonly built: false; readonly reason: string };

/**
 * Builds a Node single executable application (https://nodejs.org/api/single-executable-applications.html):
 * a copy of the running `node` binary with `program` (one CommonJS file that requires only Node's built-in
 * modules) and V8's code cache for it injected with postject. It needs nothing from the host: no Node, no
 * file beside it. A Node binary built without single-executable support (no fuse) gives `built: false`.
 */
export async function buildSingleExecutable(
  program: string,
  outFile: string,
): Promise<SingleExecutableOutcome> {
  const node = process.execPath;
  if (!(await readFile(node)).includes(SEA_FUSE))
    return { built: false, reason: `${node} was built without single-executable support` };
  const work = await mkdtemp(join(tmpdir(), 'aws-cni-sea-'));
  try {
    const main = join(work, 'aws-cni.cjs');
    const blob = join(work, 'aws-cni.blob');
    const config = join(work, 'sea-config.json');
    await writeFile(main, program);
    await writeFile(
      config,
      JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }),
    );
    const prep = spawnSync(node, ['--experimental-sea-config', config], { encoding: 'utf8' });
    if (prep.status !== 0) throw new Error(`node --experimental-sea-config failed: ${prep.stderr}`);
    const tmp = `${outFile}.tmp`;
    await copyFile(node, tmp);
    // postject ships no types; its API is one function.
    const { inject } = createRequire(import.meta.url)('postject') as {
      inject(file: string, name: string, data: Buffer, options: { sentinelFuse: string }): Promise<void>;
    };
    await inject(tmp, 'NODE_SEA_BLOB', await readFile(blob), { sentinelFuse: SEA_FUSE });
    await chmod(tmp, 0o755);
    await rename(tmp, outFile);
    return { built: true, bytes: (await readFile(outFile)).length };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
