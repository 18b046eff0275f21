/**
 * Every code a {@link RoutingError} can carry (a closed set):
 * - `INVALID_ARGUMENT`: input was rejected before anything changed;
 * - `EXISTS`: the kernel already has the object (a port reports this for `add`);
 * - `NOT_FOUND`: the object, link or namespace is not there (a port reports this for `remove`);
 * - `KERNEL`: any other failure reported by the port, with its errno name in {@link RoutingError.errno};
 * - `VERIFY_FAILED`: {@link verifyRouting} found the node differs from the plan (see `missing`/`unexpected`);
 * - `TIMEOUT`: an address stayed tentative (IPv6 duplicate-address detection) past the deadline;
 * - `MAC_EXHAUSTED`: no host-unique MAC address was found in the allowed attempts.
 */
export type RoutingErrorCode =
  | 'INVALID_ARGUMENT'
  | 'EXISTS'
  | 'NOT_FOUND'
  | 'KERNEL'
  | 'VERIFY_FAILED'
  | 'TIMEOUT'
  | 'MAC_EXHAUSTED';

const BRAND = Symbol.for('@vpc-cni-kit/routing-table.RoutingError');

/** Fields of a {@link RoutingError}. */
export interface RoutingErrorInit {
  /** The stable code. */
  code: RoutingErrorCode;
  /** What was being done, e.g. `rule.add`, `plan.eni`, `verify`. */
  op: string;
  /** The errno name (e.g. `EPERM`) for `KERNEL`, when known. */
  errno?: string | undefined;
  /** For `VERIFY_FAILED`: planned objects that are absent (rendered as text). */
  missing?: readonly string[] | undefined;
  /** For `VERIFY_FAILED`: objects present that should not be (rendered as text). */
  unexpected?: readonly string[] | undefined;
  /** Human-readable detail. Never match on it. */
  detail?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
}

/** The one error type this package throws. Branch on {@link RoutingError.code} with {@link isRoutingError}. */
export class RoutingError extends Error {
  /** The stable code. */
  readonly code: RoutingErrorCode;
  /** The operation. */
  readonly op: string;
  /** Errno name for `KERNEL` errors. */
  readonly errno: string | undefined;
  /** Missing objects (`VERIFY_FAILED`). */
  readonly missing: readonly string[];
  /** Unexpected objects (`VERIFY_FAILED`). */
  readonly unexpected: readonly string[];
  /** Marks instances across duplicated module copies (ESM and CJS builds). */
  readonly [BRAND] = true;

  constructor(init: RoutingErrorInit) {
    const parts = [`${init.op}: ${init.code}`];
    if (init.errno) parts.push(init.errno);
    if (init.detail) parts.push(init.detail);
    super(parts.join(' '), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'RoutingError';
    this.code = init.code;
    this.op = init.op;
    this.errno = init.errno;
    this.missing = init.missing ?? [];
    this.unexpected = init.unexpected ?? [];
  }
}

/** True when `value` is a {@link RoutingError} (from any copy of this package), optionally with one of `codes`. */
export function isRoutingError(value: unknown, ...codes: RoutingErrorCode[]): value is RoutingError {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as Record<symbol, unknown>)[BRAND] !== true) return false;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && (codes.length === 0 || codes.includes(code as RoutingErrorCode));
}

/** Builds an `INVALID_ARGUMENT` error. */
export function invalidArgument(op: string, detail: string): RoutingError {
  return new RoutingError({ code: 'INVALID_ARGUMENT', op, detail });
}
