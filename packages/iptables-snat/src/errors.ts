/**
 * Every code a {@link SnatError} can carry (a closed set):
 * - `INVALID_OPTION`: an option was rejected before anything ran (nothing changed);
 * - `COMMAND_FAILED`: a tool (`iptables-save`, `iptables-restore`, `nft`, `iptables`) exited non-zero or
 *   could not be started; when it was an apply, the kernel state is unchanged (restore and `nft -f` are atomic);
 * - `PARSE_ERROR`: a tool's output could not be understood, so nothing was applied.
 */
export type SnatErrorCode = 'INVALID_OPTION' | 'COMMAND_FAILED' | 'PARSE_ERROR';

const BRAND = Symbol.for('@vpc-cni-kit/iptables-snat.SnatError');

/** Fields of a {@link SnatError}. */
export interface SnatErrorInit {
  /** The stable code to branch on. */
  code: SnatErrorCode;
  /** For `INVALID_OPTION`: the option's name, e.g. `vpcCidrs[1]`. For the others: the tool that ran. */
  subject: string;
  /** The process exit code, for `COMMAND_FAILED` (`-1` when it could not be started). */
  exitCode?: number | undefined;
  /** The tool's standard error, for `COMMAND_FAILED`. */
  stderr?: string | undefined;
  /** Human-readable detail. Never match on it. */
  detail?: string | undefined;
}

/**
 * The one error type this package throws. Branch on {@link SnatError.code} with {@link isSnatError};
 * never on the message.
 */
export class SnatError extends Error {
  /** The stable code. */
  readonly code: SnatErrorCode;
  /** The option or tool concerned. */
  readonly subject: string;
  /** The exit code of a failed command. */
  readonly exitCode: number | undefined;
  /** Standard error of a failed command. */
  readonly stderr: string | undefined;
  /** Marks instances across duplicated module copies (ESM and CJS builds). */
  readonly [BRAND] = true;

  constructor(init: SnatErrorInit) {
    const parts = [`${init.subject}: ${init.code}`];
    if (init.detail) parts.push(init.detail);
    if (init.stderr) parts.push(`(stderr: ${init.stderr.trim()})`);
    super(parts.join(' '));
    this.name = 'SnatError';
    this.code = init.code;
    this.subject = init.subject;
    this.exitCode = init.exitCode;
    this.stderr = init.stderr;
  }
}

/** True when `value` is a {@link SnatError} (from any copy of this package), optionally with one of `codes`. */
export function isSnatError(value: unknown, ...codes: SnatErrorCode[]): value is SnatError {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as Record<symbol, unknown>)[BRAND] !== true) return false;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && (codes.length === 0 || codes.includes(code as SnatErrorCode));
}

/** Builds an `INVALID_OPTION` error (internal helper). */
export function invalidOption(subject: string, detail: string): SnatError {
  return new SnatError({ code: 'INVALID_OPTION', subject, detail });
}
