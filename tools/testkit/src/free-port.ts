import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 nothing listens on right now (bound once and released), for a program that takes its
 * address on the command line. Another process may take it before the program does; tests that can pass port 0
 * should.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
