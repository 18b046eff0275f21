import { connect, type Server, type Socket } from 'node:net';
import { eventually } from './eventually.js';

/**
 * Opens `n` TCP connections to `host:port` that send nothing, in batches of 128 so the server's listen queue
 * (Node's backlog is 511) takes them without the kernel dropping a SYN; resolves once each has connected. Errors
 * on them are ignored; the caller destroys them.
 */
export async function idleConnections(port: number, n: number, host = '127.0.0.1'): Promise<Socket[]> {
  const open = () =>
    new Promise<Socket>((resolve) => {
      const s = connect(port, host);
      s.on('error', () => {});
      s.once('connect', () => resolve(s));
    });
  const out: Socket[] = [];
  while (out.length < n)
    out.push(...(await Promise.all(Array.from({ length: Math.min(128, n - out.length) }, open))));
  return out;
}

/**
 * Resolves once `server` counts `n` open connections (it counts one as it accepts it, and stops as it closes);
 * throws after `ms`. A client's `connect` comes before the server has accepted, so a test that needs the server
 * at its cap waits for this.
 */
export async function serverHolds(server: Server, n: number, ms = 5000): Promise<void> {
  const count = () =>
    new Promise<number>((resolve, reject) => server.getConnections((e, c) => (e ? reject(e) : resolve(c))));
  await eventually(`the server to hold ${n} connections`, async () => (await count()) === n, ms, 10);
}

/** What {@link sendUntilClosed} saw. */
export interface ClosedExchange {
  /** Everything the server sent, as UTF-8. */
  readonly text: string;
  /** Milliseconds from the call until the connection closed. */
  readonly closedMs: number;
  /** Whether a TLS socket finished its handshake meanwhile. */
  readonly secured: boolean;
}

/**
 * Writes `request` on `socket` (once connected) and resolves when the connection closes, with what the server
 * sent. Ask the server to close (`Connection: close`) so that the close marks a whole answer; a server that drops
 * the connection unread leaves `text` empty.
 */
export function sendUntilClosed(socket: Socket, request: string): Promise<ClosedExchange> {
  const started = performance.now();
  let text = '';
  let secured = false;
  socket.on('error', () => {});
  socket.on('secureConnect', () => {
    secured = true;
  });
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => {
    text += c;
  });
  const closed = new Promise<ClosedExchange>((resolve) =>
    socket.once('close', () => resolve({ text, closedMs: performance.now() - started, secured })),
  );
  if (socket.connecting) socket.once('connect', () => socket.write(request));
  else if (!socket.destroyed) socket.write(request);
  return closed;
}
