/** Stable codes of {@link VpcError}. */
export type VpcErrorCode =
  /** An option, flag or scenario value is unusable (nothing was created). */
  | 'VPC_INVALID_OPTIONS'
  /** The machine cannot host a virtual VPC (not Linux, not root, no nft/nsenter). */
  | 'VPC_UNSUPPORTED'
  /** A kernel or tool step failed while building or changing the data plane. */
  | 'VPC_DATAPLANE'
  /** No run with that id (no state file). */
  | 'VPC_RUN_NOT_FOUND'
  /** The run belongs to a live process that does not stop on SIGTERM (close it there). */
  | 'VPC_RUN_BUSY'
  /** The handle is closed. */
  | 'VPC_CLOSED';

/** Every {@link VpcErrorCode}. */
export const VPC_ERROR_CODES: readonly VpcErrorCode[] = [
  'VPC_INVALID_OPTIONS',
  'VPC_UNSUPPORTED',
  'VPC_DATAPLANE',
  'VPC_RUN_NOT_FOUND',
  'VPC_RUN_BUSY',
  'VPC_CLOSED',
];

/** A virtual-VPC failure with a stable `code`; branch on the code, never on the message. */
export class VpcError extends Error {
  /** Discriminator. */
  readonly kind = 'VpcError' as const;
  /** Stable code. */
  readonly code: VpcErrorCode;
  /** The step that failed (for example `router.attach`). */
  readonly op: string;

  /**
   * @param code - stable code
   * @param op - the step that failed
   * @param message - human-readable detail
   * @param options - the underlying cause, if any
   */
  constructor(code: VpcErrorCode, op: string, message: string, options?: { cause?: unknown }) {
    super(`${op}: ${message}`, options);
    this.name = 'VpcError';
    this.code = code;
    this.op = op;
  }
}

/** True for a {@link VpcError} (checks the discriminator, not only the prototype). */
export function isVpcError(e: unknown): e is VpcError {
  return (
    typeof e === 'object' &&
    e !== null &&
    (e as { kind?: unknown }).kind === 'VpcError' &&
    VPC_ERROR_CODES.includes((e as { code?: VpcErrorCode }).code as VpcErrorCode)
  );
}
