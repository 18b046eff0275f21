/**
 * A unary gRPC client speaking HTTP/2 itself over one unix-socket connection: what the CNI plugin needs to
 * call the daemon. It loads neither `@grpc/grpc-js` (~100 ms per plugin exec on these machines) nor
 * `node:http2` (+12 ms: it pulls in TLS, crypto and the fs promises API), and by default not `node:net`
 * either (+7 ms with the public stream module it loads): the connection is libuv's pipe handle, driven
 * directly (./unix-socket.ts).
 *
 * One call is one connection with one stream (id 1): the preface, SETTINGS, a connection WINDOW_UPDATE,
 * HEADERS and DATA go out in a single write, before the server's SETTINGS arrive (RFC 9113 §3.4 allows it).
 * The request must fit the default 65,535-octet flow-control window; the response may be up to
 * {@link MAX_RESPONSE_BYTES}.
 */
import { GrpcCallError, GrpcStatus, statusForHttp } from './grpc-status.js';
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  encodeFrame,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  framePayloadBody,
  Setting,
  settingsPayload,
  u32Payload,
} from './h2/frames.js';
import { encodeHeaders, type HeaderField, HpackDecoder } from './h2/hpack.js';
import { connectUnix, type UnixSocket, type UnixTransport } from './unix-socket.js';

export { GrpcCallError, GrpcStatus, isGrpcCallError } from './grpc-status.js';
export type { UnixTransport } from './unix-socket.js';

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
  /**
   * Deadline for establishing the connection; when it passes the call fails with DEADLINE_EXCEEDED and
   * `connected` false. When set, {@link UnaryCall.timeoutMs} runs from the moment the connection is
   * established (as grpc-health-probe's `-connect-timeout` and `-rpc-timeout`). Default: none, `timeoutMs`
   * covers connecting too.
   */
  connectTimeoutMs?: number;
  /** A `user-agent` header for the call. Default: none. */
  userAgent?: string;
  /**
   * How the socket is reached: libuv's pipe handle (the default; `node:net` where this Node does not serve
   * it) or `node:net`.
   */
  transport?: UnixTransport;
}

/** The largest response body (framed message) the client accepts; a larger one fails the call with INTERNAL. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The default initial flow-control window of a connection and of a stream (RFC 9113 §6.9.2). */
const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 2 ** 31 - 1;
const STREAM = 1;

/** RST_STREAM and GOAWAY error codes this client names (RFC 9113 §7). */
const H2_REFUSED_STREAM = 0x7;
const H2_CANCEL = 0x8;

/**
 * Makes one unary call and returns the encoded response message.
 *
 * @throws {@link GrpcCallError}: UNAVAILABLE when the socket cannot be reached (the daemon is down) or the
 * connection is lost before the answer, DEADLINE_EXCEEDED on timeout, INTERNAL when the server breaks the
 * protocol, the server's status otherwise.
 */
export function unaryCall(call: UnaryCall): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const { method } = call;
    let request: Buffer;
    try {
      request = requestBytes(call);
    } catch (e) {
      reject(e);
      return;
    }
    // Connected last, once every handler below exists; its events all come from the event loop.
    let socket: UnixSocket | undefined;
    const reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE);
    const hpack = new HpackDecoder();
    let connected = false;
    let settled = false;
    /** Header block being collected (HEADERS + CONTINUATION), and whether it ends the stream. */
    let block: Buffer[] | undefined;
    let blockEndsStream = false;
    let responded = false;
    const body: Buffer[] = [];
    let bodyBytes = 0;

    const finish = (err: GrpcCallError | undefined, value?: Uint8Array): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(connectTimer);
      socket?.close();
      if (err)
        reject(
          connected
            ? err
            : new GrpcCallError(err.grpcStatus, err.message, { cause: err.cause, connected: false }),
        );
      else resolve(value as Uint8Array);
    };
    const protocolError = (what: string): void =>
      finish(new GrpcCallError(GrpcStatus.INTERNAL, `${method}: HTTP/2 protocol error: ${what}`));

    const callDeadline = () =>
      setTimeout(
        () =>
          finish(
            new GrpcCallError(
              GrpcStatus.DEADLINE_EXCEEDED,
              `${method}: deadline of ${call.timeoutMs} ms exceeded`,
            ),
          ),
        call.timeoutMs,
      );
    // With a connect deadline of its own, the call's deadline runs from the connection.
    let timer = call.connectTimeoutMs === undefined ? callDeadline() : undefined;
    const connectTimer =
      call.connectTimeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              finish(
                new GrpcCallError(
                  GrpcStatus.DEADLINE_EXCEEDED,
                  `cannot reach ${call.socketPath} within ${call.connectTimeoutMs} ms`,
                ),
              ),
            call.connectTimeoutMs,
          );

    /** The status of a complete response: the trailers (or a trailers-only header block) decide. */
    const complete = (trailers: readonly HeaderField[]): void => {
      const status = field(trailers, 'grpc-status');
      if (status === undefined || !/^\d+$/.test(status)) {
        finish(new GrpcCallError(GrpcStatus.INTERNAL, `${method}: response without grpc-status`));
        return;
      }
      const code = Number(status);
      if (code !== GrpcStatus.OK) {
        const message = decodeGrpcMessage(field(trailers, 'grpc-message') ?? '');
        finish(new GrpcCallError(code, message || `${method}: status ${code}`));
        return;
      }
      try {
        finish(undefined, unframe(Buffer.concat(body), method));
      } catch (e) {
        finish(e as GrpcCallError);
      }
    };

    const onHeaderBlock = (fields: readonly HeaderField[], endsStream: boolean): void => {
      if (!responded) {
        responded = true;
        const httpStatus = Number(field(fields, ':status'));
        if (httpStatus !== 200) {
          finish(new GrpcCallError(statusForHttp(httpStatus), `${method}: HTTP status ${httpStatus}`));
          return;
        }
        // A trailers-only response carries the status in its only header block.
        if (endsStream) complete(fields);
        return;
      }
      if (!endsStream) {
        protocolError('a third header block, or trailers that do not end the stream');
        return;
      }
      complete(fields);
    };

    const onStreamFrame = (frame: Frame): void => {
      switch (frame.type) {
        case FrameType.HEADERS: {
          const fragment = framePayloadBody(frame);
          if (fragment === undefined) {
            protocolError('HEADERS padding exceeds the payload');
            return;
          }
          block = [fragment];
          blockEndsStream = (frame.flags & Flag.END_STREAM) !== 0;
          break;
        }
        case FrameType.CONTINUATION:
          if (block === undefined) {
            protocolError('CONTINUATION without HEADERS');
            return;
          }
          block.push(frame.payload);
          break;
        case FrameType.DATA: {
          if (!responded) {
            protocolError('DATA before HEADERS');
            return;
          }
          const data = framePayloadBody(frame);
          if (data === undefined) {
            protocolError('DATA padding exceeds the payload');
            return;
          }
          bodyBytes += data.length;
          if (bodyBytes > MAX_RESPONSE_BYTES) {
            finish(
              new GrpcCallError(GrpcStatus.INTERNAL, `${method}: response over ${MAX_RESPONSE_BYTES} bytes`),
            );
            return;
          }
          body.push(Buffer.from(data));
          if (frame.flags & Flag.END_STREAM) protocolError('the stream ended without trailers');
          return;
        }
        case FrameType.RST_STREAM: {
          const code = frame.payload.length === 4 ? frame.payload.readUInt32BE(0) : -1;
          finish(
            new GrpcCallError(
              code === H2_REFUSED_STREAM
                ? GrpcStatus.UNAVAILABLE
                : code === H2_CANCEL
                  ? GrpcStatus.CANCELLED
                  : GrpcStatus.INTERNAL,
              `${method}: the server reset the stream (HTTP/2 error code ${code})`,
            ),
          );
          return;
        }
        default:
          // WINDOW_UPDATE and PRIORITY for the stream need nothing from a client that sends one small request.
          return;
      }
      if (frame.flags & Flag.END_HEADERS && block !== undefined) {
        const fields = hpack.decode(Buffer.concat(block));
        block = undefined;
        onHeaderBlock(fields, blockEndsStream);
      }
    };

    const onConnectionFrame = (frame: Frame): void => {
      switch (frame.type) {
        case FrameType.SETTINGS:
          if (frame.flags & Flag.ACK) return;
          if (frame.payload.length % 6 !== 0) {
            protocolError('SETTINGS payload not a multiple of 6');
            return;
          }
          socket?.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0)));
          return;
        case FrameType.PING:
          if (!(frame.flags & Flag.ACK))
            socket?.write(encodeFrame(FrameType.PING, Flag.ACK, 0, frame.payload));
          return;
        case FrameType.GOAWAY: {
          const lastStream = frame.payload.length >= 8 ? frame.payload.readUInt32BE(0) & 0x7fffffff : 0;
          // The server will not process our stream: nothing was done, the caller may retry.
          if (lastStream < STREAM) {
            const code = frame.payload.length >= 8 ? frame.payload.readUInt32BE(4) : -1;
            finish(
              new GrpcCallError(
                GrpcStatus.UNAVAILABLE,
                `${method}: the server is going away (HTTP/2 error code ${code})`,
              ),
            );
          }
          return;
        }
        default:
          return;
      }
    };

    const onData = (chunk: Buffer): void => {
      try {
        for (const frame of reader.push(chunk)) {
          if (settled) return;
          // While a header block is open, only its CONTINUATION frames may arrive (RFC 9113 §6.10).
          if (block !== undefined && (frame.type !== FrameType.CONTINUATION || frame.streamId !== STREAM)) {
            protocolError('header block interrupted');
            return;
          }
          if (frame.streamId === 0) onConnectionFrame(frame);
          else if (frame.streamId === STREAM) onStreamFrame(frame);
          else if (frame.type === FrameType.PUSH_PROMISE || frame.type === FrameType.HEADERS) {
            protocolError(`frame for stream ${frame.streamId}, which this client never opened`);
            return;
          }
        }
      } catch (e) {
        protocolError(e instanceof Error ? e.message : String(e));
      }
    };
    socket = connectUnix(
      call.socketPath,
      {
        connect: () => {
          connected = true;
          if (connectTimer !== undefined) {
            clearTimeout(connectTimer);
            timer = callDeadline();
          }
        },
        data: onData,
        error: (e) =>
          finish(
            new GrpcCallError(
              GrpcStatus.UNAVAILABLE,
              connected
                ? `${method}: the connection to the server was lost: ${e.message}`
                : `cannot reach ${call.socketPath}: ${e.message}`,
              { cause: e },
            ),
          ),
        end: () =>
          finish(
            new GrpcCallError(GrpcStatus.UNAVAILABLE, `${method}: the connection to the server was lost`),
          ),
      },
      call.transport,
    );
    socket.write(request);
  });
}

/** Everything the client sends, as one buffer. */
function requestBytes(call: UnaryCall): Buffer {
  const message = frame(call.request);
  if (message.length > DEFAULT_WINDOW) {
    throw new GrpcCallError(
      GrpcStatus.INTERNAL,
      `${call.method}: request of ${message.length} bytes exceeds this client's ${DEFAULT_WINDOW}-byte limit`,
    );
  }
  const headers = encodeHeaders([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', call.method],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['grpc-timeout', `${Math.min(99_999_999, Math.max(1, Math.ceil(call.timeoutMs)))}m`],
    ...(call.userAgent === undefined ? [] : [['user-agent', call.userAgent] as const]),
  ]);
  if (headers.length > DEFAULT_MAX_FRAME_SIZE) {
    throw new GrpcCallError(GrpcStatus.INTERNAL, `${call.method}: request headers too large`);
  }
  const parts: Buffer[] = [
    CLIENT_PREFACE,
    encodeFrame(
      FrameType.SETTINGS,
      0,
      0,
      settingsPayload([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, MAX_WINDOW],
      ]),
    ),
    // Open the connection window too, so a response never waits for a WINDOW_UPDATE from us.
    encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, u32Payload(MAX_WINDOW - DEFAULT_WINDOW)),
    encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, STREAM, headers),
  ];
  for (let off = 0; off < message.length || off === 0; off += DEFAULT_MAX_FRAME_SIZE) {
    const end = Math.min(message.length, off + DEFAULT_MAX_FRAME_SIZE);
    parts.push(
      encodeFrame(
        FrameType.DATA,
        end === message.length ? Flag.END_STREAM : 0,
        STREAM,
        message.subarray(off, end),
      ),
    );
  }
  return Buffer.concat(parts);
}

function field(fields: readonly HeaderField[], name: string): string | undefined {
  for (const [n, v] of fields) if (n === name) return v;
  return undefined;
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

/** grpc-message is percent-encoded (gRPC over HTTP/2 spec); a malformed encoding is shown as sent. */
function decodeGrpcMessage(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
