import type { Socket } from 'node:net';

/**
 * Plays a slow client on a connected `socket` (plain or TLS): writes `start`, then one `drip` every `everyMs`
 * (nothing when `drip` is empty) until the server closes the connection; what the server sends is read and
 * dropped. Resolves with how long the connection stayed open, in milliseconds, so a test can hold it against the
 * server's timeouts (a slowloris: headers a byte at a time; a body that never ends; silence).
 */
export function dribble(socket: Socket, start = '', drip = '', everyMs = 200): Promise<number> {
  const opened = performance.now();
  socket.on('error', () => {});
  socket.resume();
  if (start !== '') socket.write(start);
  const timer = drip === '' ? undefined : setInterval(() => socket.writable && socket.write(drip), everyMs);
  return new Promise((resolve) => {
    socket.once('close', () => {
      clearInterval(timer);
      resolve(performance.now() - opened);
    });
  });
}
