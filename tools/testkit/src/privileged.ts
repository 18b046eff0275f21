import { existsSync } from 'node:fs';
import { describe } from 'vitest';

/**
 * Why privileged tests cannot run here, or `undefined` when they can. They need Linux, root (to create
 * network namespaces) and /proc/thread-self.
 */
export function privilegedSkipReason(): string | undefined {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return `needs root to create network namespaces (uid ${process.getuid?.() ?? 'unknown'})`;
  }
  if (!existsSync('/proc/thread-self/ns/net')) return 'needs /proc/thread-self/ns/net';
  return undefined;
}

/**
 * `describe` for real-kernel tests. When they cannot run, the suite is skipped and its title carries the
 * reason (and the reason is printed once), so a skip is never silent.
 */
export function describePrivileged(name: string, body: () => void): void {
  const reason = privilegedSkipReason();
  if (reason === undefined) {
    describe(name, body);
    return;
  }
  console.warn(`[privileged] skipping "${name}": ${reason}`);
  describe.skip(`${name} (skipped: ${reason})`, body);
}
