import { CniErrorCode } from './error-codes.js';

const brand = Symbol.for('@vpc-cni-kit/cni-spec/CniError');

/** The JSON object a plugin prints on stdout when it fails. */
export interface ErrorResult {
  cniVersion?: string;
  code: number;
  msg: string;
  details?: string;
}

/**
 * A CNI error: a numeric code from {@link CniErrorCode} (or a plugin's own, ≥ 100), a short message and
 * optional details. It is what every validation in this package throws, what the plugin skeleton prints, and
 * what `invokePlugin` throws when a plugin fails. Match on `code`, never on the message.
 */
export class CniError extends Error {
  /** The CNI error code. */
  readonly code: number;
  /** Longer, optional explanation. */
  readonly details: string | undefined;
  readonly [brand] = true;

  constructor(code: number, msg: string, details?: string, options?: { cause?: unknown }) {
    super(msg, options);
    this.name = 'CniError';
    this.code = code;
    this.details = details;
  }

  /** The short message (the spec's `msg`). */
  get msg(): string {
    return this.message;
  }

  /** The spec error object, tagged with `cniVersion` when given (the Go library omits it; runtimes accept both). */
  toErrorResult(cniVersion?: string): ErrorResult {
    return {
      ...(cniVersion !== undefined ? { cniVersion } : {}),
      code: this.code,
      msg: this.message,
      ...(this.details !== undefined && this.details !== '' ? { details: this.details } : {}),
    };
  }

  /** `JSON.stringify` support: the spec error object without a version. */
  toJSON(): ErrorResult {
    return this.toErrorResult();
  }
}

/**
 * Whether `e` is a {@link CniError}. Works across duplicate copies of this package (it checks a global
 * symbol brand, not `instanceof`).
 */
export function isCniError(e: unknown): e is CniError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[brand] === true;
}

/** Wraps anything thrown into a {@link CniError}: CNI errors pass through, everything else becomes code 999. */
export function toCniError(e: unknown): CniError {
  if (isCniError(e)) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new CniError(CniErrorCode.Internal, msg || 'internal error', undefined, { cause: e });
}
