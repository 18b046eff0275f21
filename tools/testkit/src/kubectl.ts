import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * Where scripts/setup.sh unpacks Debian's `kubernetes-client` when another package (e.g. google-cloud-sdk's
 * kubectl) already owns /usr/bin/kubectl and installing it would overwrite that.
 */
export const UNPACKED_DEBIAN_KUBECTL = join(
  REPO,
  'node_modules',
  '.cache',
  'debian-kubectl',
  'usr',
  'bin',
  'kubectl',
);

function clientVersion(path: string): string | undefined {
  try {
    const out = execFileSync(path, ['version', '--client', '-o', 'json'], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return (JSON.parse(out) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion;
  } catch {
    return undefined;
  }
}

/**
 * The path of Debian 12's kubectl (v1.20.x, package `kubernetes-client`): `$KUBECTL`, the copy setup.sh
 * unpacked, or /usr/bin/kubectl — the first that reports v1.20. Throws a one-line hint when there is none.
 */
export function debianKubectl(): string {
  const candidates = [process.env.KUBECTL, UNPACKED_DEBIAN_KUBECTL, '/usr/bin/kubectl'].filter(
    (p): p is string => !!p && existsSync(p),
  );
  for (const p of candidates) if (clientVersion(p)?.startsWith('v1.20.')) return p;
  throw new Error(
    "Debian's kubectl 1.20 (package kubernetes-client) was not found: run scripts/setup.sh as root",
  );
}

/** Result of one kubectl run. */
export interface KubectlResult {
  /** Exit code. */
  readonly code: number;
  /** Standard output. */
  readonly stdout: string;
  /** Standard error. */
  readonly stderr: string;
}

/** Runs kubectl with a kubeconfig and a private discovery cache; never throws on a non-zero exit. */
export function runKubectl(
  kubectl: string,
  kubeconfig: string,
  cacheDir: string,
  args: readonly string[],
  stdin?: string,
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      kubectl,
      ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args],
      { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}
