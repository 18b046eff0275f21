/** A packed package: its manifest, where the tarball sits relative to the scratch project, its integrity. */
export interface PackedTarball {
  manifest: {
    name: string;
    version: string;
    license?: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    engines?: Record<string, string>;
    bin?: Record<string, string> | string;
  };
  /** Relative to the scratch project, e.g. `tarballs/vpc-cni-kit-netlink-0.1.0.tgz`. */
  file: string;
  /** `sha512-…`, as `npm pack --json` reports it. */
  integrity: string;
}

type LockEntry = Record<string, unknown> & {
  version?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/**
 * A package-lock (v3) for a scratch project whose root depends on `rootDeps` (name → spec): our packages come
 * from the packed tarballs, every other package at the version and place the repository's lock has it, so
 * `npm ci --offline` installs from tarballs and the npm cache alone (after `npm ci` of the repository the cache
 * holds every external tarball, but no registry metadata, so ranges cannot be resolved offline). The closure
 * follows each package's declared dependencies only: a dependency our package forgot to declare is absent, as
 * it would be for a stranger.
 */
export function scratchLockfile(
  repoLock: { packages: Record<string, LockEntry> },
  tarballs: readonly PackedTarball[],
  rootDeps: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const ours = new Map(tarballs.map((t) => [t.manifest.name, t]));
  const packages: Record<string, LockEntry> = {
    '': { name: 'stranger', dependencies: { ...rootDeps } },
  };
  const entryAt = (path: string, name: string): LockEntry | undefined => {
    const t = ours.get(name);
    if (t !== undefined) {
      if (path !== `node_modules/${name}`) return undefined;
      const m = t.manifest;
      return {
        version: m.version,
        resolved: `file:${t.file}`,
        integrity: t.integrity,
        ...(m.license ? { license: m.license } : {}),
        ...(m.dependencies ? { dependencies: m.dependencies } : {}),
        ...(m.optionalDependencies ? { optionalDependencies: m.optionalDependencies } : {}),
        ...(m.peerDependencies ? { peerDependencies: m.peerDependencies } : {}),
        ...(m.engines ? { engines: m.engines } : {}),
        ...(m.bin ? { bin: typeof m.bin === 'string' ? { [name]: m.bin } : m.bin } : {}),
      };
    }
    const e = repoLock.packages[path];
    if (e === undefined || e.link) return undefined;
    const { dev: _d, devOptional: _o, peer: _p, ...kept } = e;
    return kept;
  };
  const queue: string[] = [];
  const place = (from: string, name: string, optional: boolean): void => {
    // Node's lookup: from's own node_modules, then each ancestor's, then the top.
    const candidates: string[] = [];
    for (let p = from; p !== ''; ) {
      candidates.push(`${p}/node_modules/${name}`);
      const i = p.lastIndexOf('/node_modules/');
      p = i < 0 ? '' : p.slice(0, i);
    }
    candidates.push(`node_modules/${name}`);
    for (const path of candidates) {
      if (packages[path] !== undefined) return;
      const entry = entryAt(path, name);
      if (entry !== undefined) {
        packages[path] = entry;
        queue.push(path);
        return;
      }
    }
    if (!optional)
      throw new Error(`${from || 'the scratch project'} needs ${name}, which the repository lock lacks`);
  };
  for (const name of Object.keys(rootDeps)) place('', name, false);
  while (queue.length > 0) {
    const path = queue.shift() as string;
    const e = packages[path] as LockEntry;
    for (const name of Object.keys(e.dependencies ?? {})) place(path, name, false);
    for (const name of Object.keys(e.optionalDependencies ?? {})) place(path, name, true);
    for (const name of Object.keys(e.peerDependencies ?? {}))
      place(path, name, e.peerDependenciesMeta?.[name]?.optional === true);
  }
  return { name: 'stranger', lockfileVersion: 3, requires: true, packages };
}
