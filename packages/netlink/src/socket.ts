import { NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST } from './codec/constants.js';
import type { NlMessage } from './codec/message.js';
import { encodeMessage } from './codec/message.js';
import { ReplyCollector } from './codec/reply.js';
import { errnoError, NetlinkError } from './errors.js';
import {
  AF_NETLINK,
  EAGAIN,
  EINTR,
  type Libc,
  libc,
  MSG_DONTWAIT,
  MSG_PEEK,
  MSG_TRUNC,
  NETLINK_EXT_ACK,
  NETLINK_GET_STRICT_CHK,
  NETLINK_ROUTE,
  SO_RCVTIMEO,
  SOCK_CLOEXEC,
  SOCK_RAW,
  SOL_NETLINK,
  SOL_SOCKET,
} from './ffi/libc.js';
import { withNetnsSync } from './netns-switch.js';

/** One request to the kernel. @internal */
export interface NlRequest {
  /** Operation name for errors, e.g. `link.add`. */
  op: string;
  /** RTM_* message type. */
  type: number;
  /** Extra NLM_F_* flags (REQUEST and ACK/DUMP are added). */
  flags: number;
  /** Body: the family header and attributes. */
  body: readonly Uint8Array[];
  /** A dump (NLM_F_DUMP) rather than an acknowledged request. */
  dump: boolean;
}

/** The data messages answering a request. @internal */
export interface NlReply {
  messages: NlMessage[];
  interrupted: boolean;
}

/** Options for {@link NetlinkSocket.open}. @internal */
export interface SocketOptions {
  netns?: string | undefined;
  timeoutMs?: number | undefined;
  clock?: (() => number) | undefined;
}

const INITIAL_BUFFER = 32 * 1024;

function int32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v, 0);
  return b;
}

function timeval(ms: number): Buffer {
  const b = Buffer.alloc(16);
  const t = Math.max(1, Math.ceil(ms));
  b.writeBigInt64LE(BigInt(Math.floor(t / 1000)), 0);
  b.writeBigInt64LE(BigInt((t % 1000) * 1000), 8);
  return b;
}

/**
 * An rtnetlink socket bound (for life) to the namespace it was created in. Requests are correlated by
 * sequence number and port id. `requestSync` blocks the thread; `request` runs the kernel-side work
 * (`send`, which executes the request in the kernel, and the wait for the reply) on koffi's worker thread,
 * so the event loop keeps running during slow operations. Async requests on one socket are serialised.
 * @internal
 */
export class NetlinkSocket {
  private seq = 0;
  private buf = Buffer.alloc(INITIAL_BUFFER);
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly L: Libc;
  private readonly timeoutMs: number;
  private readonly clock: () => number;

  private constructor(
    readonly fd: number,
    readonly portId: number,
    opts: SocketOptions,
    L: Libc,
  ) {
    this.L = L;
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.clock = opts.clock ?? (() => performance.now());
  }

  /**
   * Opens a socket in the caller's namespace, or inside `netns` (a namespace file path). `L` is the libc
   * binding; tests pass a hand-written fake of it.
   */
  static open(opts: SocketOptions = {}, L: Libc = libc()): NetlinkSocket {
    const make = (): number => {
      const fd = L.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
      if (fd < 0) throw errnoError('socket', L.errno());
      return fd;
    };
    const fd = opts.netns === undefined ? make() : withNetnsSync(opts.netns, make);
    try {
      const one = int32(1);
      if (L.setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, one, 4) !== 0)
        throw errnoError('setsockopt', L.errno());
      if (L.setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, one, 4) !== 0) {
        throw errnoError('setsockopt', L.errno());
      }
      const tv = timeval(opts.timeoutMs ?? 5000);
      if (L.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv, 16) !== 0) throw errnoError('setsockopt', L.errno());
      const sa = Buffer.alloc(12);
      sa.writeUInt16LE(AF_NETLINK, 0);
      if (L.bind(fd, sa, 12) !== 0) throw errnoError('bind', L.errno());
      const len = int32(12);
      if (L.getsockname(fd, sa, len) !== 0) throw errnoError('getsockname', L.errno());
      return new NetlinkSocket(fd, sa.readUInt32LE(4), opts, L);
    } catch (e) {
      L.close(fd);
      throw e;
    }
  }

  private closedError(op: string): NetlinkError {
    return new NetlinkError({ code: 'CLOSED', op, detail: 'socket is closed' });
  }

  private prepare(req: NlRequest): { msg: Buffer; collector: ReplyCollector; deadline: number } {
    this.seq = (this.seq + 1) >>> 0 || 1;
    const flags = NLM_F_REQUEST | (req.dump ? NLM_F_DUMP : NLM_F_ACK) | req.flags;
    const msg = encodeMessage({ type: req.type, flags, seq: this.seq, pid: 0 }, req.body);
    return {
      msg,
      collector: new ReplyCollector(this.seq, this.portId, req.dump),
      deadline: this.clock() + this.timeoutMs,
    };
  }

  private finish(req: NlRequest, c: ReplyCollector): NlReply {
    if (c.errno !== 0) throw errnoError(req.op, c.errno, c.extack);
    return { messages: c.messages, interrupted: c.interrupted };
  }

  /** Handles a failed libc call: returns true to retry (EINTR within the deadline), else throws. */
  private retryable(op: string, rc: number, deadline: number): true {
    const e = this.L.errno();
    if (e === EINTR) {
      const left = deadline - this.clock();
      if (left > 0) {
        this.L.setsockopt(this.fd, SOL_SOCKET, SO_RCVTIMEO, timeval(left), 16);
        return true;
      }
    }
    if (e === EAGAIN || e === EINTR) {
      throw new NetlinkError({ code: 'TIMEOUT', op, detail: `no reply within ${this.timeoutMs} ms` });
    }
    throw errnoError(op, e, undefined, `rc ${rc}`);
  }

  private sendSync(op: string, msg: Buffer, deadline: number): void {
    for (;;) {
      const rc = this.L.send(this.fd, msg, msg.length, 0);
      if (rc >= 0) return;
      this.retryable(op, rc, deadline);
    }
  }

  /** Receives the datagram whose size a peek reported: it is already queued, so this never blocks. */
  private take(op: string, size: number, deadline: number): Buffer {
    if (size > this.buf.length) this.buf = Buffer.alloc((size + 4095) & ~4095);
    for (;;) {
      const n = this.L.recv(this.fd, this.buf, this.buf.length, MSG_DONTWAIT);
      if (n >= 0) return Buffer.from(this.buf.subarray(0, n));
      this.retryable(op, n, deadline);
    }
  }

  private checkDeadline(op: string, deadline: number): void {
    if (this.clock() > deadline) {
      throw new NetlinkError({
        code: 'TIMEOUT',
        op,
        detail: `reply not complete within ${this.timeoutMs} ms`,
      });
    }
  }

  /** Sends a request and collects its replies, blocking the calling thread. */
  requestSync(req: NlRequest): NlReply {
    if (this.closed) throw this.closedError(req.op);
    const { msg, collector, deadline } = this.prepare(req);
    this.sendSync(req.op, msg, deadline);
    while (!collector.done) {
      const size = this.L.recv(this.fd, this.buf, this.buf.length, MSG_PEEK | MSG_TRUNC);
      if (size < 0) {
        this.retryable(req.op, size, deadline);
        continue;
      }
      collector.feed(this.take(req.op, size, deadline));
      if (!collector.done) this.checkDeadline(req.op, deadline);
    }
    return this.finish(req, collector);
  }

  private callAsync(fn: 'send' | 'recv', args: unknown[]): Promise<number> {
    return new Promise((resolve, reject) => {
      const f = this.L[fn] as unknown as { async(...a: unknown[]): void };
      f.async(...args, (err: unknown, rc: number) => (err ? reject(err) : resolve(rc)));
    });
  }

  /** Sends a request and collects its replies without blocking the event loop. */
  request(req: NlRequest): Promise<NlReply> {
    // Requests made before close() still run; the fd is closed after the last of them.
    if (this.closed) return Promise.reject(this.closedError(req.op));
    const run = async (): Promise<NlReply> => {
      const { msg, collector, deadline } = this.prepare(req);
      for (;;) {
        const rc = await this.callAsync('send', [this.fd, msg, msg.length, 0]);
        if (rc >= 0) break;
        this.retryable(req.op, rc, deadline);
      }
      while (!collector.done) {
        // The kernel runs a request inside send(), so its answer is usually queued already: take it without a
        // worker hop, and wait on the worker only when nothing is there yet.
        let size = this.L.recv(this.fd, this.buf, this.buf.length, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
        if (size < 0 && this.L.errno() === EAGAIN) {
          size = await this.callAsync('recv', [this.fd, this.buf, this.buf.length, MSG_PEEK | MSG_TRUNC]);
        }
        if (size < 0) {
          this.retryable(req.op, size, deadline);
          continue;
        }
        collector.feed(this.take(req.op, size, deadline));
        if (!collector.done) this.checkDeadline(req.op, deadline);
      }
      return this.finish(req, collector);
    };
    const p = this.tail.then(run, run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  /** Refuses new requests and closes the socket once those already queued have finished. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const fd = this.fd;
    void this.tail.then(() => this.L.close(fd));
  }

  /** Closes the socket now (for the sync path). Idempotent. */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    this.L.close(this.fd);
  }
}
