import { closeSync, openSync } from 'node:fs';
import { ERRNO_CODES, errnoError, invalidArgument, NetlinkError } from './errors.js';
import { CLONE_NEWNET, libc } from './ffi/libc.js';

/** The calling thread's own network namespace file (never /proc/self: setns is per thread). */
export const THREAD_NETNS = '/proc/thread-self/ns/net';

/** Converts a Node fs error into a {@link NetlinkError}. @internal */
export function fsError(op: string, e: unknown): NetlinkError {
  const code = (e as { code?: unknown }).code;
  const n = typeof code === 'string' ? (ERRNO_CODES as Record<string, number>)[code] : undefined;
  if (n !== undefined) return errnoError(op, n, undefined, (e as Error).message);
  const errno = (e as { errno?: unknown }).errno;
  if (typeof errno === 'number') return errnoError(op, errno, undefined, (e as Error).message);
  return new NetlinkError({ code: 'EOTHER', op, detail: String((e as Error)?.message ?? e) });
}

/** Opens a file read-only, turning failures into typed errors. @internal */
export function openNsFile(op: string, path: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    throw fsError(op, e);
  }
}

/**
 * Runs `fn` with the calling thread switched into the network namespace at `netnsPath` (a file such as
 * `/run/netns/NAME` or `/proc/PID/ns/net`), then switches back. Everything happens synchronously: `fn`
 * must not return a promise (it would run its continuation in the wrong namespace), and nothing else can
 * run on this thread in between. Sockets created inside stay bound to that namespace afterwards.
 * If switching back fails the process aborts, because every later call would run in the wrong namespace.
 */
export function withNetnsSync<T>(netnsPath: string, fn: () => T): T {
  const L = libc();
  const saved = openNsFile('netns.open', THREAD_NETNS);
  let target: number;
  try {
    target = openNsFile('netns.open', netnsPath);
  } catch (e) {
    closeSync(saved);
    throw e;
  }
  try {
    if (L.setns(target, CLONE_NEWNET) !== 0) throw errnoError('setns', L.errno(), undefined, netnsPath);
    let result: T;
    try {
      result = fn();
    } finally {
      if (L.setns(saved, CLONE_NEWNET) !== 0) {
        process.stderr.write(`@vpc-cni-kit/netlink: cannot restore network namespace (errno ${L.errno()})\n`);
        process.abort();
      }
    }
    if (typeof (result as { then?: unknown } | undefined)?.then === 'function') {
      throw invalidArgument('netns.run', 'the function given to withNetnsSync must be synchronous');
    }
    return result;
  } finally {
    closeSync(target);
    closeSync(saved);
  }
}
