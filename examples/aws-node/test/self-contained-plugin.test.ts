/**
 * `aws-cni` as the build ships it for nodes: a single executable (Node and the program in one ELF file) that
 * runs with nothing from the host: no `node` on PATH, no environment. The launcher, by contrast, needs Node on
 * the runtime's PATH. End to end (ADD through libcni, and the daemon-down DEL that loads koffi from beside
 * the executable) it runs in e2e*.privileged.test.ts, where aws-vpc-cni-init installs it.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const binDir = fileURLToPath(new URL('../dist/bin', import.meta.url));

function runBare(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(file, [], { env, encoding: 'utf8' }, (e, stdout, stderr) =>
      resolve({ code: e ? Number(e.code) : 0, stdout, stderr }),
    ),
  );
}

describe('aws-cni single executable', () => {
  const dir = scratchDir('vck-sea-');
  afterAll(() => dir.remove());

  it('is one ELF executable that answers VERSION with an empty environment and no node on PATH', async () => {
    const sea = join(binDir, 'aws-cni');
    if (!existsSync(sea)) throw new Error(`build first: ${sea} is missing`);
    expect(readFileSync(sea).subarray(0, 4)).toEqual(Buffer.from('\x7fELF', 'latin1'));
    // Alone in a directory of its own, as on a node's /opt/cni/bin.
    const copy = join(dir.path, 'aws-cni');
    copyFileSync(sea, copy);
    const r = await runBare(copy, { CNI_COMMAND: 'VERSION', PATH: '' });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({
      supportedVersions: expect.arrayContaining(['0.4.0', '1.1.0']),
    });
    // A bad request gets the CNI error shape on stdout, from the executable alone.
    const bad = await runBare(copy, { CNI_COMMAND: 'FLY', PATH: '' });
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stdout)).toMatchObject({ code: expect.any(Number), msg: expect.any(String) });
  });

  it('where the launcher needs node on the PATH', async () => {
    const r = await runBare(join(binDir, 'aws-cni.cjs'), { CNI_COMMAND: 'VERSION', PATH: '' });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
  });
});
