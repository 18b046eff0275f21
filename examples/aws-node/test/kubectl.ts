import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Debian 12's kubectl (1.20, package kubernetes-client): `$KUBECTL`, the copy scripts/setup.sh unpacks into
 * node_modules/.cache when another package owns /usr/bin/kubectl, or /usr/bin/kubectl — the first that is
 * v1.20.
 */
export function kubectl120(): string {
  const unpacked = fileURLToPath(
    new URL('../../../node_modules/.cache/debian-kubectl/usr/bin/kubectl', import.meta.url),
  );
  for (const path of [process.env['KUBECTL'], unpacked, '/usr/bin/kubectl']) {
    if (path === undefined || !existsSync(path)) continue;
    const version = execFileSync(path, ['version', '--client', '--short'], { encoding: 'utf8' });
    if (version.includes('v1.20.')) return path;
  }
  throw new Error("Debian's kubectl 1.20 (package kubernetes-client) was not found: run scripts/setup.sh");
}
