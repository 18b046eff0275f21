import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import type { JsonObject } from './internal/fields.js';
import { parseResult } from './parse-result.js';
import type { Result, VersionResult } from './result.js';
import { type CniCommand, type CniVersion, isSupportedVersion } from './versions.js';

/** One plugin invocation, as a runtime (or a delegating plugin) makes it. */
export interface InvokeRequest {
  /** Absolute path of the plugin binary (see {@link findPlugin}). */
  pluginPath: string;
  command: CniCommand;
  /** The request configuration: an object (serialised as JSON), or the exact bytes to send. */
  config: JsonObject | string | Uint8Array;
  containerId?: string;
  netns?: string;
  ifname?: string;
  /** `CNI_ARGS` text. */
  args?: string;
  /** `CNI_PATH` directories. */
  cniPath?: readonly string[];
  /**
   * The environment to start from. Default: empty. Pass the caller's environment when the plugin needs
   * `PATH` (Debian's plugins look up `iptables` there), as libcni passes the runtime's whole environment.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Kill the plugin after this many milliseconds (default 60 000). */
  timeoutMs?: number;
}

/** What the plugin printed, and how it exited. */
export interface ExecOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a plugin binary once, per the spec: `CNI_*` environment (all six set, as libcni does), config on
 * stdin, stdout and stderr captured. Retries a spawn that fails with ETXTBSY (the binary is still being
 * written) up to 5 times, as libcni does. Does not interpret the output: see {@link invokePlugin}.
 *
 * @throws {@link CniError} code 999 when the plugin cannot be started or exceeds the timeout.
 */
export async function execPlugin(req: InvokeRequest): Promise<ExecOutcome> {
  const { spawn } = await import('node:child_process');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.env ?? {})) if (v !== undefined) env[k] = v;
  Object.assign(env, {
    CNI_COMMAND: req.command,
    CNI_CONTAINERID: req.containerId ?? '',
    CNI_NETNS: req.netns ?? '',
    CNI_IFNAME: req.ifname ?? '',
    CNI_ARGS: req.args ?? '',
    CNI_PATH: (req.cniPath ?? []).join(':'),
  });
  const stdin =
    typeof req.config === 'string' || req.config instanceof Uint8Array
      ? req.config
      : JSON.stringify(req.config);
  const timeoutMs = req.timeoutMs ?? 60_000;

  for (let attempt = 1; ; attempt++) {
    try {
      return await new Promise<ExecOutcome>((resolve, reject) => {
        // Its own process group, so a timeout kills whatever the plugin started too (which would otherwise
        // hold the pipes open).
        const child = spawn(req.pluginPath, [], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          try {
            if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
          } catch {
            child.kill('SIGKILL');
          }
        }, timeoutMs);
        child.stdout.on('data', (c: Buffer) => out.push(c));
        child.stderr.on('data', (c: Buffer) => err.push(c));
        child.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          if (timedOut) {
            reject(
              new CniError(CniErrorCode.Internal, `plugin ${req.pluginPath} timed out after ${timeoutMs} ms`),
            );
            return;
          }
          resolve({
            exitCode: code ?? (signal ? 128 : 1),
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
          });
        });
        child.stdin.on('error', () => {
          // The plugin may exit without reading stdin; its exit status tells what happened.
        });
        child.stdin.end(stdin);
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ETXTBSY' && attempt < 5) {
        await new Promise((r) => setTimeout(r, 50 * attempt));
        continue;
      }
      if (e instanceof CniError) throw e;
      throw new CniError(
        CniErrorCode.Internal,
        `cannot run plugin ${req.pluginPath}`,
        e instanceof Error ? e.message : String(e),
        { cause: e },
      );
    }
  }
}

/** The decoded outcome of {@link invokePlugin}. */
export interface InvokeResult {
  /** ADD: the plugin's result. */
  result?: Result;
  /** VERSION: the plugin's answer. */
  version?: VersionResult;
  /** Whatever the plugin logged. */
  stderr: string;
}

/**
 * Runs a plugin and decodes its answer: the result of an ADD (validated, in the version the plugin printed,
 * defaulting to the request's), the answer to VERSION, nothing for the other commands.
 *
 * @throws {@link CniError} carrying the plugin's own code and message when it fails (or code 999 with its
 * stderr when it printed no error object, as libcni does); code 6 when a success output cannot be decoded.
 */
export async function invokePlugin(req: InvokeRequest): Promise<InvokeResult> {
  const outcome = await execPlugin(req);
  if (outcome.exitCode !== 0) throw decodeFailure(outcome);
  const text = outcome.stdout.trim();
  if (req.command === 'VERSION') return { version: decodeVersion(text), stderr: outcome.stderr };
  if (req.command !== 'ADD') return { stderr: outcome.stderr };
  const requested = requestVersion(req.config);
  const result = parseResult(text, {
    ...(requested ? { defaultVersion: requested } : {}),
    what: `result of ${req.pluginPath}`,
  });
  return { result, stderr: outcome.stderr };
}

/** Asks a plugin which versions it supports. */
export async function getVersionInfo(
  pluginPath: string,
  options: { env?: Readonly<Record<string, string | undefined>>; cniVersion?: string } = {},
): Promise<VersionResult> {
  const { version } = await invokePlugin({
    pluginPath,
    command: 'VERSION',
    config: { cniVersion: options.cniVersion ?? '1.1.0' },
    ...(options.env ? { env: options.env } : {}),
  });
  return version as VersionResult;
}

/**
 * Finds the executable for plugin `type` in the `CNI_PATH` directories.
 *
 * @throws {@link CniError} code 999 naming the directories searched.
 */
export async function findPlugin(type: string, cniPath: readonly string[]): Promise<string> {
  const { access, constants } = await import('node:fs/promises');
  if (type === '' || type.includes('/'))
    throw new CniError(CniErrorCode.InvalidNetworkConfig, `invalid plugin type ${JSON.stringify(type)}`);
  for (const dir of cniPath) {
    const candidate = `${dir.replace(/\/+$/, '')}/${type}`;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new CniError(
    CniErrorCode.Internal,
    `failed to find plugin ${JSON.stringify(type)} in path [${cniPath.join(' ')}]`,
  );
}

function decodeFailure(outcome: ExecOutcome): CniError {
  const text = outcome.stdout.trim();
  if (text !== '') {
    try {
      const o = JSON.parse(text) as Record<string, unknown>;
      if (typeof o['code'] === 'number' && typeof o['msg'] === 'string') {
        return new CniError(o['code'], o['msg'], typeof o['details'] === 'string' ? o['details'] : undefined);
      }
    } catch {
      // fall through: not an error object
    }
    return new CniError(
      CniErrorCode.Internal,
      `plugin failed (exit ${outcome.exitCode}) without an error object`,
      text,
    );
  }
  return new CniError(
    CniErrorCode.Internal,
    outcome.stderr.trim() || `plugin failed (exit ${outcome.exitCode})`,
  );
}

function decodeVersion(text: string): VersionResult {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new CniError(CniErrorCode.DecodeFailure, 'VERSION answer is not JSON', text.slice(0, 200));
  }
  const v = o as Partial<VersionResult>;
  if (
    typeof v?.cniVersion !== 'string' ||
    !Array.isArray(v.supportedVersions) ||
    !v.supportedVersions.every((s) => typeof s === 'string')
  ) {
    throw new CniError(
      CniErrorCode.DecodeFailure,
      'VERSION answer lacks cniVersion or supportedVersions',
      text.slice(0, 200),
    );
  }
  return { cniVersion: v.cniVersion, supportedVersions: v.supportedVersions };
}

function requestVersion(config: InvokeRequest['config']): CniVersion | undefined {
  let v: unknown;
  if (typeof config === 'string' || config instanceof Uint8Array) {
    try {
      v = (
        JSON.parse(typeof config === 'string' ? config : Buffer.from(config).toString('utf8')) as JsonObject
      )['cniVersion'];
    } catch {
      return undefined;
    }
  } else {
    v = config['cniVersion'];
  }
  return isSupportedVersion(v) ? v : undefined;
}
