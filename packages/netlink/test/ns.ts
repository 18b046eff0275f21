import { uniqueName } from '@vpc-cni-kit/testkit';
import { netnsAdd, netnsDel, netnsList } from '../src/index.js';

/** Namespaces a test created, and the one way to remove them (which also checks nothing is left). */
export interface Scratch {
  names: string[];
  paths: string[];
  /** Deletes exactly the namespaces created here and returns the ones still listed (should be none). */
  remove(): string[];
}

/** Creates `n` uniquely named namespaces the way `ip netns add` does. */
export function scratchNamespaces(n: number): Scratch {
  const names: string[] = [];
  const paths: string[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = uniqueName('vcknl', 32);
      paths.push(netnsAdd(name));
      names.push(name);
    }
  } catch (e) {
    for (const name of names) netnsDel(name);
    throw e;
  }
  return {
    names,
    paths,
    remove() {
      for (const name of names) {
        try {
          netnsDel(name);
        } catch {
          // reported below through the leftover list
        }
      }
      const left = new Set(netnsList());
      return names.filter((x) => left.has(x));
    },
  };
}
