import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
 * A kubectl to render kustomizations with, preferring Debian 12's (1.20, package kubernetes-client, kustomize
 * v2): `$KUBECTL`, the copy scripts/setup.sh unpacks into node_modules/.cache when another package owns
 * /usr/bin/kubectl, /usr/bin/kubectl. Any other kubectl found there is the fallback; `undefined` when there
 * is none.
 */
export function findKubectl(): { path: string; version: string } | undefined {
  const unpacked = fileURLToPath(
    new URL('../../../node_modules/.cache/debian-kubectl/usr/bin/kubectl', import.meta.url),
  );
  const found = [process.env['KUBECTL'], unpacked, '/usr/bin/kubectl']
    .filter((p): p is string => p !== undefined && existsSync(p))
    .flatMap((path) => {
      const version = clientVersion(path);
      return version === undefined ? [] : [{ path, version }];
    });
  return found.find((k) => k.version.startsWith('v1.20.')) ?? found[0];
}
