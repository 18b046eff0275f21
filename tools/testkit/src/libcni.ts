import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const runnerDir = join(dirname(fileURLToPath(import.meta.url)), '../../libcni-runner');

/** The error object libcni reports (a plugin's own, or code 0 for libcni's own failures). */
export interface LibcniError {
  code: number;
  msg: string;
  details?: string;
}

/** One libcni operation's outcome. */
export type LibcniOutcome = { ok: true; result?: unknown } | { ok: false; error: LibcniError };

/** Per-attachment parameters, as a runtime passes them to libcni. */
export interface LibcniAttachment {
  containerId: string;
  netns: string;
  ifname?: string;
  /** CNI_ARGS pairs. */
  args?: Record<string, string>;
  /** Capability arguments (libcni turns the enabled ones into each plugin's runtimeConfig). */
  capabilityArgs?: Record<string, unknown>;
}

let built: Promise<string> | undefined;

/**
 * Builds the Go libcni runner (tools/libcni-runner) once per process, offline, against Debian's libcni.
 * Needs the Debian packages golang-go and golang-github-appc-cni-dev.
 */
export function buildLibcniRunner(outDir = join(runnerDir, 'bin')): Promise<string> {
  built ??= (async () => {
    mkdirSync(outDir, { recursive: true });
    const out = join(outDir, 'libcni-runner');
    await run('bash', [join(runnerDir, 'build.sh'), out], { timeout: 180_000 });
    if (!existsSync(out)) throw new Error(`libcni-runner was not built at ${out}`);
    return out;
  })();
  return built;
}

/** A libcni client bound to plugin directories and a result cache directory. */
export class Libcni {
  constructor(
    readonly runner: string,
    readonly binDirs: readonly string[],
    readonly cacheDir: string,
    /**
     * Run libcni (and so every plugin) inside this network namespace (a path such as `/run/netns/<name>`)
     * through `nsenter`, as a runtime on a node would run them in the node's: for plugins that change the
     * host side. Absent: the caller's own namespace.
     */
    readonly netns?: string,
  ) {}

  /** `AddNetworkList` */
  add(conflist: string, a: LibcniAttachment): Promise<LibcniOutcome> {
    return this.call('add', conflist, a);
  }
  /** `CheckNetworkList` */
  check(conflist: string, a: LibcniAttachment): Promise<LibcniOutcome> {
    return this.call('check', conflist, a);
  }
  /** `DelNetworkList` */
  del(conflist: string, a: LibcniAttachment): Promise<LibcniOutcome> {
    return this.call('del', conflist, a);
  }
  /** `GetNetworkListCachedResult` */
  cached(conflist: string, a: LibcniAttachment): Promise<LibcniOutcome> {
    return this.call('cached', conflist, a);
  }
  /** `ValidateNetworkList` */
  validate(conflist: string): Promise<LibcniOutcome> {
    return this.call('validate', conflist, { containerId: '', netns: '' });
  }
  /** `GetVersionInfo` */
  async version(pluginType: string): Promise<LibcniOutcome> {
    return this.exec(['version', '-bin-dir', this.binDirs.join(':'), '-plugin', pluginType]);
  }

  private call(cmd: string, conflist: string, a: LibcniAttachment): Promise<LibcniOutcome> {
    const args = Object.entries(a.args ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(';');
    return this.exec([
      cmd,
      '-conflist',
      conflist,
      '-bin-dir',
      this.binDirs.join(':'),
      '-cache-dir',
      this.cacheDir,
      '-id',
      a.containerId,
      '-netns',
      a.netns,
      '-ifname',
      a.ifname ?? 'eth0',
      '-args',
      args,
      '-cap-args',
      a.capabilityArgs === undefined ? '' : JSON.stringify(a.capabilityArgs),
    ]);
  }

  private async exec(argv: string[]): Promise<LibcniOutcome> {
    const [file, args] =
      this.netns === undefined
        ? [this.runner, argv]
        : ['nsenter', [`--net=${this.netns}`, '--', this.runner, ...argv]];
    const { stdout } = await run(file, args, { timeout: 120_000, env: { ...process.env } });
    return JSON.parse(stdout) as LibcniOutcome;
  }
}
