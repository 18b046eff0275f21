/**
 * A unary gRPC client over `node:http2` on a unix socket: what the CNI plugin needs to call the daemon,
 * without loading `@grpc/grpc-js` (its import alone costs ~100 ms per plugin exec on these machines).
 */
import { connect } from 'node:http2';
import { connect as netConnect } from 'node:net';

/** gRPC status codes used in this project. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  FAILED_PRECONDITION: 9,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** A failed call: `grpcStatus` is the server's status, or UNAVAILABLE/DEADLINE_EXCEEDED/INTERNAL from the client. */
export class GrpcCallError extends Error {
  readonly grpcStatus: number;
  constructor(grpcStatus: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GrpcCallError';
    this.grpcStatus = grpcStatus;
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

/** One unary call. */
export interface UnaryCall {
  /** Unix socket path of the server. */
  socketPath: string;
  /** Full method path, e.g. `/rpc.CNIBackend/AddNetwork`. */
  method: string;
  /** The encoded request message. */
  request: Uint8Array;
  /** Deadline for the whole call (sent as `grpc-timeout` too). */
  timeoutMs: number;
}

/**
 * Makes one unary call and returns the encoded response message.
 *
 * @throws {@link GrpcCallError}: UNAVAILABLE when the socket cannot be reached (the daemon is down),
 * DEADLINE_EXCEEDED on timeout, the server's status otherwise.
 */
export function unaryCall(call: UnaryCall): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    let settled = false;
    const session = connect('http://localhost', { createConnection: () => netConnect(call.socketPath) });
    const finish = (err: GrpcCallError | undefined, value?: Uint8Array) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.close();
      session.destroy();
      if (err) reject(err);
      else resolve(value as Uint8Array);
    };
    const timer = setTimeout(
      () =>
        finish(
          new GrpcCallError(
            GrpcStatus.DEADLINE_EXCEEDED,
            `${call.method}: deadline of ${call.timeoutMs} ms exceeded`,
          ),
        ),
      call.timeoutMs,
    );
    session.on('error', (e) =>
      finish(
        new GrpcCallError(GrpcStatus.UNAVAILABLE, `cannot reach ${call.socketPath}: ${e.message}`, {
          cause: e,
        }),
      ),
    );

    const stream = session.request({
      ':method': 'POST',
      ':path': call.method,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': `${Math.max(1, Math.ceil(call.timeoutMs))}m`,
    });
    const chunks: Buffer[] = [];
    let headerStatus: string | undefined;
    let headerMessage: string | undefined;
    let responded = false;
    stream.on('response', (headers) => {
      responded = true;
      const status = headers[':status'];
      if (status !== 200) {
        finish(new GrpcCallError(GrpcStatus.INTERNAL, `${call.method}: HTTP status ${status}`));
        return;
      }
      // A trailers-only response carries the status in the headers.
      if (headers['grpc-status'] !== undefined) {
        headerStatus = String(headers['grpc-status']);
        headerMessage = headers['grpc-message'] === undefined ? undefined : String(headers['grpc-message']);
      }
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    let trailerStatus: string | undefined;
    let trailerMessage: string | undefined;
    stream.on('trailers', (t) => {
      trailerStatus = t['grpc-status'] === undefined ? undefined : String(t['grpc-status']);
      trailerMessage = t['grpc-message'] === undefined ? undefined : String(t['grpc-message']);
    });
    stream.on('error', (e) =>
      finish(new GrpcCallError(GrpcStatus.UNAVAILABLE, `${call.method}: ${e.message}`, { cause: e })),
    );
    stream.on('close', () => {
      const status = Number(trailerStatus ?? headerStatus ?? Number.NaN);
      const message = decodeGrpcMessage(trailerMessage ?? headerMessage ?? '');
      if (Number.isNaN(status)) {
        // No status at all: the server went away mid-call (gRPC calls that UNAVAILABLE) unless it answered
        // and broke the protocol.
        finish(
          responded && stream.rstCode === 0
            ? new GrpcCallError(GrpcStatus.INTERNAL, `${call.method}: response without grpc-status`)
            : new GrpcCallError(
                GrpcStatus.UNAVAILABLE,
                `${call.method}: the connection to the server was lost`,
              ),
        );
      } else if (status !== GrpcStatus.OK) {
        finish(new GrpcCallError(status, message || `${call.method}: status ${status}`));
      } else {
        try {
          finish(undefined, unframe(Buffer.concat(chunks), call.method));
        } catch (e) {
          finish(e as GrpcCallError);
        }
      }
    });
    stream.end(frame(call.request));
  });
}

/** gRPC length-prefixed message framing: 1 byte compressed flag (0), 4 bytes big-endian length. */
export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** Reverses {@link frame}: exactly one uncompressed message. */
export function unframe(body: Buffer, method: string): Uint8Array {
  if (body.length < 5)
    throw new GrpcCallError(GrpcStatus.INTERNAL, `${method}: response body of ${body.length} bytes`);
  if (body[0] !== 0)
    throw new GrpcCallError(GrpcStatus.INTERNAL, `${method}: compressed responses are not supported`);
  const len = body.readUInt32BE(1);
  if (body.length !== 5 + len)
    throw new GrpcCallError(
      GrpcStatus.INTERNAL,
      `${method}: framing says ${len} bytes, got ${body.length - 5}`,
    );
  return body.subarray(5);
}

function decodeGrpcMessage(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
