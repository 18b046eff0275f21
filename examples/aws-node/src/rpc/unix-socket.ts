/**
 * A client connection to a unix stream socket, as the plugin's gRPC client needs it: connect, write, read,
 * close — over libuv's pipe handle directly when this Node serves it, else over `node:net`.
 *
 * `node:net` wraps the same handle in a Duplex stream, and loading it loads Node's public `stream` module:
 * +7 ms per plugin process measured, against nothing measurable for the handle alone
 * (docs/adr/0004-plugin-start-path.md). The handle is what `net.Socket` drives, through an interface Node
 * does not document (`process.binding('pipe_wrap')`, `process.binding('stream_wrap')`) and whose misuse
 * aborts the process rather than throwing. So it is used only on the Node majors this package is tested on
 * ({@link PIPE_HANDLE_NODE_MAJORS}) and only when it has the expected shape; elsewhere `node:net` takes
 * over, which costs speed, not correctness.
 */
import { getSystemErrorName } from 'node:util';
import { processBinding } from './process-binding.js';

/** What a connection reports. Nothing is reported after {@link UnixSocket.close}. */
export interface UnixSocketEvents {
  /** The connection is established (writes made before it were queued and are sent now). */
  connect(): void;
  /** Bytes from the server. */
  data(chunk: Buffer): void;
  /** The connection could not be made, or failed; the error carries `code` (errno name) and `syscall`. */
  error(error: NodeJS.ErrnoException): void;
  /** The server closed the connection. */
  end(): void;
}

/** A connection made by {@link connectUnix}. */
export interface UnixSocket {
  /** Sends bytes (queued until connected). */
  write(bytes: Buffer): void;
  /** Closes the connection; no event is reported after this. Idempotent. */
  close(): void;
}

/** How the plugin's unix-socket client reaches the daemon: libuv's pipe handle, or `node:net`. */
export type UnixTransport = 'pipe-handle' | 'net';

/**
 * Connects to the unix socket at `path`.
 *
 * @param transport - `pipe-handle` (the default when {@link pipeHandleAvailable}) or `net`. Asking for
 * `pipe-handle` where it is unavailable uses `net`.
 */
export function connectUnix(
  path: string,
  events: UnixSocketEvents,
  transport: UnixTransport = 'pipe-handle',
): UnixSocket {
  const pipe = transport === 'pipe-handle' ? pipeHandle() : undefined;
  return pipe ? connectWithPipeHandle(pipe, path, events) : connectWithNet(path, events);
}

/**
 * The Node major versions whose pipe handle {@link connectUnix} drives: those its tests run on. Add one only
 * after the package's tests pass on it.
 */
export const PIPE_HANDLE_NODE_MAJORS: readonly number[] = [20];

/** Whether this Node serves libuv's pipe handle in the shape {@link connectUnix} expects. */
export function pipeHandleAvailable(): boolean {
  return pipeHandle() !== undefined;
}

function ignoreRead(): void {}

/** libuv's end-of-stream status; the same value on every platform libuv supports. */
const UV_EOF = -4095;

interface PipeHandle {
  connect(req: ConnectRequest, path: string): number;
  readStart(): number;
  writeBuffer(req: WriteRequest, bytes: Buffer): number;
  close(callback?: () => void): void;
  /** Set only to a function: the native setter asserts it (an abort, not an exception). */
  onread: (arrayBuffer: ArrayBuffer | undefined) => void;
}
interface ConnectRequest {
  oncomplete: (status: number) => void;
  address?: string;
}
interface WriteRequest {
  handle: PipeHandle;
  oncomplete: (status: number) => void;
  buffer: Buffer;
}
interface PipeBindings {
  newPipe(): PipeHandle;
  newConnectRequest(): ConnectRequest;
  newWriteRequest(): WriteRequest;
  /** Shared with the native side: the result of the last read (bytes or a negative status) and its offset. */
  state: Int32Array;
  readBytesOrError: number;
  arrayBufferOffset: number;
}

let bindings: PipeBindings | null | undefined;

function pipeHandle(): PipeBindings | undefined {
  if (bindings === undefined) bindings = loadPipeBindings() ?? null;
  return bindings ?? undefined;
}

type Ctor<T> = new (...args: unknown[]) => T;

function loadPipeBindings(): PipeBindings | undefined {
  if (!PIPE_HANDLE_NODE_MAJORS.includes(Number.parseInt(process.versions.node, 10))) return undefined;
  const pipeWrap = processBinding('pipe_wrap');
  const streamWrap = processBinding('stream_wrap');
  if (pipeWrap === undefined || streamWrap === undefined) return undefined;
  const { Pipe, PipeConnectWrap, constants } = pipeWrap as {
    Pipe?: unknown;
    PipeConnectWrap?: unknown;
    constants?: { SOCKET?: unknown };
  };
  const { WriteWrap, streamBaseState, kReadBytesOrError, kArrayBufferOffset } = streamWrap;
  if (
    typeof Pipe !== 'function' ||
    typeof PipeConnectWrap !== 'function' ||
    typeof WriteWrap !== 'function' ||
    typeof constants?.SOCKET !== 'number' ||
    !(streamBaseState instanceof Int32Array) ||
    typeof kReadBytesOrError !== 'number' ||
    typeof kArrayBufferOffset !== 'number'
  ) {
    return undefined;
  }
  const proto = Pipe.prototype as Record<string, unknown>;
  for (const method of ['connect', 'readStart', 'writeBuffer', 'close']) {
    if (typeof proto[method] !== 'function') return undefined;
  }
  const socketType = constants.SOCKET;
  return {
    newPipe: () => new (Pipe as Ctor<PipeHandle>)(socketType),
    newConnectRequest: () => new (PipeConnectWrap as Ctor<ConnectRequest>)(),
    newWriteRequest: () => new (WriteWrap as Ctor<WriteRequest>)(),
    state: streamBaseState,
    readBytesOrError: kReadBytesOrError,
    arrayBufferOffset: kArrayBufferOffset,
  };
}

function errnoError(status: number, syscall: string, path: string): NodeJS.ErrnoException {
  let code: string;
  try {
    code = getSystemErrorName(status);
  } catch {
    code = `errno ${status}`;
  }
  return Object.assign(new Error(`${syscall} ${code} ${path}`), { code, errno: status, syscall, path });
}

/** The connection over libuv's pipe handle, driven the way `net.Socket` drives it. */
function connectWithPipeHandle(b: PipeBindings, path: string, events: UnixSocketEvents): UnixSocket {
  const handle = b.newPipe();
  let closed = false;
  let connected = false;
  let queued: Buffer[] = [];

  const close = (): void => {
    if (closed) return;
    closed = true;
    queued = [];
    // Never null: the native setter accepts only a function and aborts the process otherwise.
    handle.onread = ignoreRead;
    handle.close();
  };
  const fail = (status: number, syscall: string): void => {
    if (closed) return;
    close();
    events.error(errnoError(status, syscall, path));
  };
  const send = (bytes: Buffer): void => {
    const req = b.newWriteRequest();
    req.handle = handle;
    // Keeps the bytes alive until the write completes, when it does not at once.
    req.buffer = bytes;
    req.oncomplete = (status) => {
      if (status < 0) fail(status, 'write');
    };
    const status = handle.writeBuffer(req, bytes);
    if (status < 0) fail(status, 'write');
  };

  handle.onread = (arrayBuffer) => {
    if (closed) return;
    const n = b.state[b.readBytesOrError] ?? 0;
    if (n > 0 && arrayBuffer !== undefined) {
      events.data(Buffer.from(arrayBuffer, b.state[b.arrayBufferOffset] ?? 0, n));
      return;
    }
    if (n === 0) return;
    if (n === UV_EOF) {
      close();
      events.end();
      return;
    }
    fail(n, 'read');
  };

  const req = b.newConnectRequest();
  req.address = path;
  req.oncomplete = (status) => {
    if (closed) return;
    if (status < 0) {
      fail(status, 'connect');
      return;
    }
    connected = true;
    const started = handle.readStart();
    if (started < 0) {
      fail(started, 'read');
      return;
    }
    events.connect();
    const pending = queued;
    queued = [];
    for (const bytes of pending) if (!closed) send(bytes);
  };
  const status = handle.connect(req, path);
  if (status < 0) {
    // Reported from the event loop, as net does, so the caller has its connection object first.
    setImmediate(() => fail(status, 'connect'));
  }

  return {
    write(bytes) {
      if (closed) return;
      if (connected) send(bytes);
      else queued.push(bytes);
    },
    close,
  };
}

/** The connection over `node:net`, loaded only when used. */
function connectWithNet(path: string, events: UnixSocketEvents): UnixSocket {
  let closed = false;
  let socket: import('node:net').Socket | undefined;
  let queued: Buffer[] = [];
  const settle = (report: () => void): void => {
    if (closed) return;
    closed = true;
    socket?.destroy();
    report();
  };
  void import('node:net').then(
    ({ connect }) => {
      if (closed) return;
      const s = connect(path);
      socket = s;
      s.on('connect', () => {
        if (!closed) events.connect();
      });
      s.on('data', (chunk: Buffer) => {
        if (!closed) events.data(chunk);
      });
      s.on('error', (e: NodeJS.ErrnoException) => settle(() => events.error(e)));
      s.on('close', () => settle(() => events.end()));
      for (const bytes of queued) s.write(bytes);
      queued = [];
    },
    (e: unknown) =>
      settle(() => events.error(Object.assign(new Error(`node:net: ${String(e)}`), { code: 'ENOSYS' }))),
  );
  return {
    write(bytes) {
      if (closed) return;
      if (socket) socket.write(bytes);
      else queued.push(bytes);
    },
    close() {
      if (closed) return;
      closed = true;
      queued = [];
      socket?.destroy();
    },
  };
}

/**
 * Whether a server listens on the unix socket at `path`: a connection is made (and closed at once), or the
 * socket's backlog is full (`EAGAIN`). A socket file nobody listens on (`ECONNREFUSED`: its server died without
 * removing it) or no file at all (`ENOENT`) is `false`; a server that neither accepts nor refuses within
 * `timeoutMs` counts as listening (it holds the path). Other failures (e.g. `EACCES`) reject with the errno error.
 */
export function isListening(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const done = (outcome: boolean | NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.close();
      if (typeof outcome === 'boolean') resolve(outcome);
      else reject(outcome);
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    const socket = connectUnix(path, {
      connect: () => done(true),
      data: () => undefined,
      end: () => done(true),
      error: (e) =>
        done(e.code === 'EAGAIN' ? true : e.code === 'ECONNREFUSED' || e.code === 'ENOENT' ? false : e),
    });
  });
}
