import { type CniEnv, readCniEnv } from './cni-env.js';
import { CniError, toCniError } from './cni-error.js';
import { convertResult } from './convert-result.js';
import { CniErrorCode } from './error-codes.js';
import { parseResult } from './parse-result.js';
import { type PluginConfig, parsePluginConfig } from './plugin-config.js';
import type { Result, VersionResult } from './result.js';
import { type CniVersion, commandSupported, compareVersions, SUPPORTED_VERSIONS } from './versions.js';

/**
 * The most stdin a plugin reads: 16 MiB. More is refused with code 5 (`IoFailure`) and reading stops there, so a
 * runaway or hostile writer cannot make the plugin allocate without bound.
 *
 * What a runtime sends is one plugin's entry of the network configuration list, its `runtimeConfig` and, on
 * DEL and CHECK, the cached `prevResult`. The list is a file of a few KiB, and a `prevResult` lists a handful
 * of interfaces, addresses and routes. Only `runtimeConfig` grows with the pod, through its port mappings and
 * annotations. It comes from one pod sandbox request, which the kubelet's CRI client and containerd cap at
 * 16 MiB as a gRPC message, and from one Pod object, which etcd's default request limit keeps under 1.5 MiB.
 * Real requests are a few KiB to a few hundred KiB, so the limit refuses only what no runtime produces.
 */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024;

/** What a plugin process talks to, injected so the whole protocol runs in-process in tests. */
export interface PluginIO {
  /** The process environment (only `CNI_*` is read). */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Reads stdin: all of it, or, when it holds more than `maxBytes` bytes, at least `maxBytes + 1` of them and no
   * need to read on (the skeleton refuses what is over the limit with code 5; {@link pluginMain} stops reading
   * there). A throw becomes error code 5.
   */
  stdin: (maxBytes: number) => Uint8Array | string | Promise<Uint8Array | string>;
  /** Writes to stdout (results and error objects). */
  stdout: (text: string) => void;
  /** Writes to stderr (free-form logging). */
  stderr: (text: string) => void;
  /**
   * The command-line arguments after the program's name. Runtimes pass none; only `--help`, `-h`,
   * `--version` and `-v` mean anything (see {@link PluginOptions.about}), everything else is ignored.
   */
  args?: readonly string[];
}

/** What every command handler receives. */
export interface CommandContext {
  /** The validated `CNI_*` environment. */
  env: CniEnv;
  /** The validated stdin configuration. */
  config: PluginConfig;
  /** Logging to stderr. */
  log: (text: string) => void;
}

/**
 * A plugin's commands. ADD returns a result (in any version; the skeleton converts it to the request's).
 * The others succeed by returning and fail by throwing (a {@link CniError} keeps its code; anything else
 * becomes 999). Missing CHECK, GC and STATUS handlers succeed: there is nothing to verify, collect or report.
 */
export interface PluginHandlers {
  add(ctx: CommandContext): Result | Promise<Result>;
  del(ctx: CommandContext): void | Promise<void>;
  check?(ctx: CommandContext): void | Promise<void>;
  gc?(ctx: CommandContext): void | Promise<void>;
  status?(ctx: CommandContext): void | Promise<void>;
}

/** Options for {@link runPlugin}. */
export interface PluginOptions {
  /** The versions the plugin answers; default every supported version. */
  supportedVersions?: readonly CniVersion[];
  /** Extra `CNI_ARGS` keys the plugin understands (see `parseCniArgs`); default: accept any key. */
  knownArgs?: readonly string[];
  /**
   * The most stdin the plugin takes, in bytes; default {@link MAX_STDIN_BYTES}. A request over it fails with
   * code 5 before it is decoded.
   */
  maxStdinBytes?: number;
  /**
   * One line naming the plugin and its version. When set, a plugin run by hand (no `CNI_COMMAND`, or
   * `--help`/`--version` on its command line) prints it and `CNI protocol versions supported: …` to stderr
   * and exits 0, printing nothing on stdout, as the CNI project's Go skeleton does. Without it, a missing
   * `CNI_COMMAND` is error 4 and the arguments are ignored.
   */
  about?: string;
}

/** The arguments that ask a plugin run by hand what it is. */
const ABOUT_ARGS: ReadonlySet<string> = new Set(['--help', '-h', '--version', '-v']);

/**
 * Runs one CNI invocation: prints the plugin's {@link PluginOptions.about} line when it is run by hand, answers
 * VERSION, validates the environment for the command (code 4), reads stdin (code 5, also for more than
 * {@link PluginOptions.maxStdinBytes}), parses the configuration
 * (codes 6, 7, 1), refuses commands the request's version does not have (code 1), calls the handler, and
 * prints the ADD result in the request's `cniVersion`. Errors are printed as spec error JSON on stdout. It
 * never throws.
 *
 * @returns the process exit code: 0 on success, 1 on failure.
 */
export async function runPlugin(
  handlers: PluginHandlers,
  io: PluginIO,
  options: PluginOptions = {},
): Promise<number> {
  const supported = options.supportedVersions ?? SUPPORTED_VERSIONS;
  let requestVersion: string | undefined;
  try {
    const command = io.env['CNI_COMMAND'];
    if (options.about && (!command || io.args?.some((a) => ABOUT_ARGS.has(a)))) {
      const versions = [...supported].sort(compareVersions).join(', ');
      io.stderr(`${options.about}\nCNI protocol versions supported: ${versions}\n`);
      return 0;
    }
    if (command === 'VERSION') {
      const answer: VersionResult = {
        cniVersion: [...supported].sort(compareVersions).at(-1) ?? '1.1.0',
        supportedVersions: [...supported],
      };
      io.stdout(JSON.stringify(answer));
      return 0;
    }
    const env = readCniEnv(io.env, options.knownArgs === undefined ? {} : { known: options.knownArgs });

    const maxStdinBytes = options.maxStdinBytes ?? MAX_STDIN_BYTES;
    let stdin: Uint8Array | string;
    try {
      stdin = await io.stdin(maxStdinBytes);
    } catch (e) {
      throw new CniError(
        CniErrorCode.IoFailure,
        'error reading from stdin',
        e instanceof Error ? e.message : String(e),
      );
    }
    if ((typeof stdin === 'string' ? Buffer.byteLength(stdin) : stdin.byteLength) > maxStdinBytes) {
      throw new CniError(
        CniErrorCode.IoFailure,
        `stdin is larger than ${maxStdinBytes} bytes`,
        'stopped reading there: a network configuration with its runtimeConfig and prevResult is at most a few hundred KiB, so this is not from a container runtime',
      );
    }
    const config = parsePluginConfig(stdin, { supportedVersions: supported });
    requestVersion = config.cniVersion;
    if (!commandSupported(env.command, config.cniVersion)) {
      throw new CniError(
        CniErrorCode.IncompatibleVersion,
        `config version does not allow ${env.command}`,
        `${env.command} needs cniVersion ${env.command === 'CHECK' ? '0.4.0' : '1.1.0'} or later, got ${config.cniVersion}`,
      );
    }
    const ctx: CommandContext = { env, config, log: (t) => io.stderr(t.endsWith('\n') ? t : `${t}\n`) };
    switch (env.command) {
      case 'ADD': {
        const result = await handlers.add(ctx);
        // Validate what the handler produced: a malformed result would be rejected by the runtime anyway,
        // and is better reported here, by the plugin, with the field path.
        const checked = parseResult(result, {
          defaultVersion: config.cniVersion,
          errorCode: CniErrorCode.Internal,
          what: 'plugin produced an invalid result',
        });
        io.stdout(JSON.stringify(convertResult(checked, config.cniVersion)));
        return 0;
      }
      case 'DEL':
        await handlers.del(ctx);
        return 0;
      case 'CHECK':
        await handlers.check?.(ctx);
        return 0;
      case 'GC':
        await handlers.gc?.(ctx);
        return 0;
      case 'STATUS':
        await handlers.status?.(ctx);
        return 0;
      default:
        throw new CniError(
          CniErrorCode.InvalidEnvironment,
          `unknown CNI_COMMAND ${JSON.stringify(env.command)}`,
        );
    }
  } catch (e) {
    const err = toCniError(e);
    try {
      io.stdout(JSON.stringify(err.toErrorResult(requestVersion)));
    } catch {
      // Nowhere left to report to; the exit code still says it failed.
    }
    return 1;
  }
}
