/** gRPC status codes used in this project (https://grpc.io/docs/guides/status-codes/). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A failed call: `grpcStatus` is the server's status, or UNAVAILABLE/DEADLINE_EXCEEDED/INTERNAL from the client. */
export class GrpcCallError extends Error {
  readonly grpcStatus: number;
  /**
   * Whether the connection to the server had been established when the call failed: `false` means the server
   * was never reached (no socket, refused, or the connect deadline passed), which a health probe reports
   * apart from a failed call.
   */
  readonly connected: boolean;
  constructor(grpcStatus: number, message: string, options?: { cause?: unknown; connected?: boolean }) {
    super(message, options);
    this.name = 'GrpcCallError';
    this.grpcStatus = grpcStatus;
    this.connected = options?.connected ?? true;
  }
}

/** Whether `e` is a {@link GrpcCallError} (by shape, so it survives bundling twice). */
export function isGrpcCallError(e: unknown): e is GrpcCallError {
  return (
    typeof e === 'object' &&
    e !== null &&
    (e as { name?: unknown }).name === 'GrpcCallError' &&
    typeof (e as { grpcStatus?: unknown }).grpcStatus === 'number'
  );
}

/**
 * The gRPC status for a response whose HTTP status is not 200, per gRPC's "HTTP to gRPC status code
 * mapping" (doc/http-grpc-status-mapping.md in grpc/grpc).
 */
export function statusForHttp(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}
