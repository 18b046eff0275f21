import { closeSync, existsSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errnoError, invalidArgument } from './errors.js';
import { CLONE_NEWNET, EINVAL, libc, MNT_DETACH, MS_BIND, MS_REC, MS_SHARED } from './ffi/libc.js';
import { fsError, openNsFile, THREAD_NETNS } from './netns-switch.js';

/** Where iproute2 keeps named namespaces. */
export const NETNS_RUN_DIR = '/run/netns';

/** Options for the named-namespace helpers. */
export interface NetnsDirOptions {
  /**
   * Directory of named namespaces; {@link NETNS_RUN_DIR} by default. {@link netnsAdd} creates it when missing,
   * one level only, as iproute2 does: its parent must exist.
   */
  dir?: string;
}

function checkName(op: string, name: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 255 || name === '.' || name === '..') {
    throw invalidArgument(op, `bad namespace name ${JSON.stringify(name)}`);
  }
  if (/[/\0]/.test(name)) throw invalidArgument(op, `bad namespace name ${JSON.stringify(name)}`);
  return name;
}

/** The file path of a named namespace (`/run/netns/NAME`). */
export function netnsPath(name: string, options: NetnsDirOptions = {}): string {
  return join(options.dir ?? NETNS_RUN_DIR, checkName('netns.path', name));
}

/** Names of the namespaces in the directory (`ip netns list`, unsorted). */
export function netnsList(options: NetnsDirOptions = {}): string[] {
  const dir = options.dir ?? NETNS_RUN_DIR;
  if (!existsSync(dir)) return [];
  return readdirSync(dir);
}

/** Makes the namespace directory a shared mount, as iproute2 does, so bind mounts propagate. */
function makeShared(dir: string): void {
  const L = libc();
  for (let attempt = 0; ; attempt++) {
    if (L.mount('none', dir, 'none', MS_SHARED | MS_REC, null) === 0) return;
    const e = L.errno();
    if (e !== EINVAL || attempt > 0) throw errnoError('netns.add', e, undefined, `make ${dir} shared`);
    // Not a mount point yet: bind it onto itself, then retry.
    if (L.mount(dir, dir, 'none', MS_BIND | MS_REC, null) !== 0) {
      throw errnoError('netns.add', L.errno(), undefined, `bind ${dir}`);
    }
  }
}

/**
 * Creates a named network namespace the way `ip netns add NAME` does: a fresh namespace bind-mounted on
 * `/run/netns/NAME` (the directory made a shared mount). The calling thread enters the new namespace only
 * for the mount and is switched back before this returns. Returns the path. `EEXIST` if the name is taken;
 * `ENOENT` if the directory's parent does not exist (the directory itself is created, as iproute2 does).
 */
export function netnsAdd(name: string, options: NetnsDirOptions = {}): string {
  const dir = options.dir ?? NETNS_RUN_DIR;
  const path = join(dir, checkName('netns.add', name));
  const L = libc();
  try {
    // One level, not `recursive`: Node 20's recursive mkdir never returns for a path under /proc.
    mkdirSync(dir, { mode: 0o755 });
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'EEXIST') throw fsError('netns.add', e);
  }
  makeShared(dir);
  try {
    closeSync(openSync(path, 'wx', 0o000));
  } catch (e) {
    throw fsError('netns.add', e);
  }
  const saved = openNsFile('netns.add', THREAD_NETNS);
  let failure: Error | undefined;
  try {
    if (L.unshare(CLONE_NEWNET) !== 0) {
      failure = errnoError('netns.add', L.errno(), undefined, 'unshare');
    } else if (L.mount(THREAD_NETNS, path, 'none', MS_BIND, null) !== 0) {
      failure = errnoError('netns.add', L.errno(), undefined, `bind mount on ${path}`);
    }
  } finally {
    if (L.setns(saved, CLONE_NEWNET) !== 0) {
      process.stderr.write(`@vpc-cni-kit/netlink: cannot restore network namespace (errno ${L.errno()})\n`);
      process.abort();
    }
    closeSync(saved);
  }
  if (failure) {
    try {
      unlinkSync(path);
    } catch {
      // the file may already be gone; the original error is what matters
    }
    throw failure;
  }
  return path;
}

/**
 * Deletes a named namespace the way `ip netns del NAME` does: lazy unmount, then remove the file. The
 * namespace itself lives on while anything still holds it (a process, an open fd or socket).
 * `ENOENT` when there is no such name.
 */
export function netnsDel(name: string, options: NetnsDirOptions = {}): void {
  const path = netnsPath(name, options);
  if (!existsSync(path)) throw errnoError('netns.del', 2, undefined, path);
  const L = libc();
  if (L.umount2(path, MNT_DETACH) !== 0) {
    const e = L.errno();
    if (e !== EINVAL) throw errnoError('netns.del', e, undefined, `umount ${path}`);
  }
  try {
    unlinkSync(path);
  } catch (e) {
    throw fsError('netns.del', e);
  }
}
