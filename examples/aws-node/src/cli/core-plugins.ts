/**
 * The core CNI plugins `aws-vpc-cni-init` installs beside `aws-cni`: the ones the conflist chains, as the
 * reference's init image carries them (its `core-plugins/` directory, from containernetworking/plugins).
 */
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Plugins the conflist chains (`portmap`, `bandwidth` with ENABLE_BANDWIDTH_PLUGIN, `host-local` as egress-cni's
 * IPAM) or a runtime needs (`loopback`).
 */
export const CORE_PLUGINS = ['portmap', 'bandwidth', 'loopback', 'host-local'] as const;

/** A core plugin found on this machine. */
export interface CorePlugin {
  readonly name: (typeof CORE_PLUGINS)[number];
  /** Where it was found. */
  readonly path: string;
}

/** No source directory holds a core plugin, and the destination does not have it either. */
export class CorePluginMissingError extends Error {
  /** Stable code of this failure. */
  readonly code = 'CorePluginMissing';
  /** The plugins that were not found. */
  readonly missing: readonly string[];
  constructor(missing: readonly string[], searched: readonly string[]) {
    super(
      `core CNI plugin${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found in ${searched.join(', ')}: ` +
        'install containernetworking-plugins, or set AWS_NODE_CORE_PLUGINS_DIR to a directory holding them',
    );
    this.name = 'CorePluginMissingError';
    this.missing = missing;
  }
}

/**
 * Each core plugin's executable from the first of `sources` that has it. A plugin no source has, but that
 * `destination` already holds (a node image that ships it), is left as it is; one found nowhere is a
 * {@link CorePluginMissingError}, before anything is installed.
 */
export async function findCorePlugins(
  sources: readonly string[],
  destination: string,
): Promise<CorePlugin[]> {
  const found: CorePlugin[] = [];
  const missing: string[] = [];
  for (const name of CORE_PLUGINS) {
    let path: string | undefined;
    for (const dir of sources) {
      if (await executable(join(dir, name))) {
        path = join(dir, name);
        break;
      }
    }
    if (path !== undefined) found.push({ name, path });
    else if (!(await executable(join(destination, name)))) missing.push(name);
  }
  if (missing.length > 0) throw new CorePluginMissingError(missing, [...sources, destination]);
  return found;
}

/** Whether `path` exists and this process may execute it. */
export async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
