/** Codes of {@link WarmPoolError}: the input to {@link decide} is malformed. */
export type WarmPoolErrorCode = 'InvalidInput';

/**
 * Thrown by `decide` and `poolFigures` when the input is malformed (a negative target, a limit that is not a
 * positive integer, a non-finite time). `field` names the offending input, e.g. `limits.ipv4PerEni`.
 */
export class WarmPoolError extends Error {
  /** Always `'WarmPoolError'`; lets {@link isWarmPoolError} work across duplicate package copies. */
  override readonly name = 'WarmPoolError';

  constructor(
    /** The stable failure code. */
    readonly code: WarmPoolErrorCode,
    /** The offending input field. */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** True when `value` is a {@link WarmPoolError}; duck-typed, not `instanceof`. */
export function isWarmPoolError(value: unknown): value is WarmPoolError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'WarmPoolError' &&
    (value as { code?: unknown }).code === 'InvalidInput'
  );
}
