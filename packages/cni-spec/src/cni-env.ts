import { type CniArgs, type ParseCniArgsOptions, parseCniArgs } from './cni-args.js';
import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import { identifierRe } from './internal/fields.js';
import type { CniCommand } from './versions.js';

/** The per-invocation parameters a runtime passes in `CNI_*` environment variables, validated. */
export interface CniEnv {
  command: CniCommand;
  /** `CNI_CONTAINERID` (empty for GC, STATUS, VERSION). */
  containerId: string;
  /** `CNI_NETNS`; may be empty on DEL (containerd's second DEL sends none). */
  netns: string;
  /** `CNI_IFNAME` */
  ifname: string;
  /** `CNI_ARGS`, parsed. */
  args: CniArgs;
  /** `CNI_PATH`, split on `:`. */
  path: string[];
}

/** The variables the Go `skel` (and so every reference plugin) requires per command. */
export const REQUIRED_ENV: Readonly<Record<CniCommand, readonly string[]>> = {
  ADD: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  CHECK: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  DEL: ['CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_PATH'],
  GC: ['CNI_PATH'],
  STATUS: ['CNI_PATH'],
  VERSION: [],
};

const commands = new Set<string>(Object.keys(REQUIRED_ENV));

/** Whether `s` is a CNI command name. */
export function isCniCommand(s: unknown): s is CniCommand {
  return typeof s === 'string' && commands.has(s);
}

/**
 * Validates an interface name as the kernel and libcni do: non-empty, at most 15 bytes, not `.` or `..`, and
 * no `/`, `:` or whitespace.
 *
 * @returns a description of the problem, or `undefined` when the name is valid.
 */
export function interfaceNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (Buffer.byteLength(name) > 15) return 'is longer than 15 bytes';
  if (name === '.' || name === '..') return 'must not be . or ..';
  if (/[/:\s]/.test(name)) return 'must not contain /, : or whitespace';
  return undefined;
}

/**
 * Validates a container id or a network name as libcni does: non-empty, letters, digits, `_`, `.` and `-`, starting
 * with a letter or digit. libcni sets no length limit; a caller that stores the value may add one.
 *
 * @returns a description of the problem, or `undefined` when the identifier is valid.
 */
export function identifierProblem(id: string): string | undefined {
  if (id === '') return 'is empty';
  if (!identifierRe.test(id)) return 'must be letters, digits, _, . and -, starting with a letter or digit';
  return undefined;
}

/**
 * Reads and validates the CNI environment for one invocation.
 *
 * @throws {@link CniError} code 4 naming missing or invalid variables (an unknown command included).
 */
export function readCniEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: ParseCniArgsOptions = {},
): CniEnv {
  const command = env['CNI_COMMAND'];
  if (!isCniCommand(command)) {
    throw new CniError(
      CniErrorCode.InvalidEnvironment,
      command
        ? `unknown CNI_COMMAND ${JSON.stringify(command)}`
        : 'required env variables [CNI_COMMAND] missing',
    );
  }
  const missing = REQUIRED_ENV[command].filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new CniError(
      CniErrorCode.InvalidEnvironment,
      `required env variables [${missing.join(' ')}] missing`,
    );
  }
  const containerId = env['CNI_CONTAINERID'] ?? '';
  const ifname = env['CNI_IFNAME'] ?? '';
  if (REQUIRED_ENV[command].includes('CNI_CONTAINERID') && !identifierRe.test(containerId)) {
    throw new CniError(CniErrorCode.InvalidEnvironment, 'invalid characters in CNI_CONTAINERID', containerId);
  }
  if (REQUIRED_ENV[command].includes('CNI_IFNAME')) {
    const problem = interfaceNameProblem(ifname);
    if (problem !== undefined) {
      throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_IFNAME ${problem}`, ifname);
    }
  }
  return {
    command,
    containerId,
    netns: env['CNI_NETNS'] ?? '',
    ifname,
    args: parseCniArgs(env['CNI_ARGS'], options),
    path: (env['CNI_PATH'] ?? '').split(':').filter((p) => p !== ''),
  };
}
