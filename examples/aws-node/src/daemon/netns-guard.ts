import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/**
 * Says why a pod network namespace path must not be plumbed, or `undefined` when it may be. Run before
 * anything is assigned or touched.
 */
export type NetnsCheck = (netnsPath: string) => string | undefined;

/** The kernel's identity of a namespace file: the nsfs device and inode its path resolves to. */
function identity(path: string): { dev: number; ino: number } {
  const s = statSync(path);
  return { dev: s.dev, ino: s.ino };
}

/**
 * A {@link NetnsCheck} that refuses a path that is not absolute, does not exist, is no namespace file at all (not
 * on nsfs: a plain file or directory, which the plumbing could only fail on after an address was taken), or
 * resolves to the daemon's
 * own network namespace (the node's): plumbing a "pod" there would rewire the node (its default route via
 * 169.254.1.1 on a veth). Namespaces are compared as the kernel identifies them, by the device and inode of
 * the nsfs file, so `/proc/1/ns/net`, `/proc/<daemon pid>/ns/net`, a symbolic link or a bind mount of the
 * node's namespace are all recognised. The daemon's own identity is read at each call (cheap: one stat), so
 * a daemon that is moved (it never is) would still compare against where it is.
 *
 * @param ownNetnsPath - the daemon's own namespace file. Default `/proc/self/ns/net`.
 */
export function netnsGuard(ownNetnsPath = '/proc/self/ns/net'): NetnsCheck {
  return (netnsPath) => {
    if (netnsPath === '') return 'Netns is required';
    if (!isAbsolute(netnsPath)) return `Netns must be an absolute path: ${JSON.stringify(netnsPath)}`;
    let target: { dev: number; ino: number };
    try {
      target = identity(netnsPath);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      return `Netns ${JSON.stringify(netnsPath)} cannot be opened (${code})`;
    }
    const own = identity(ownNetnsPath);
    // Every namespace file lives on the kernel's one nsfs: another device is a file or directory, no namespace.
    if (target.dev !== own.dev)
      return `Netns ${JSON.stringify(netnsPath)} is not a namespace (a plain file or directory)`;
    if (target.ino === own.ino) {
      return `Netns ${JSON.stringify(netnsPath)} is the node's own network namespace; a pod never runs there`;
    }
    return undefined;
  };
}
