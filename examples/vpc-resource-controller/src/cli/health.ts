import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DropObserver, limitHttpServer, PROBE_HTTP_LIMITS } from '../http-limits.js';

/** What the probes ask. */
export interface HealthSource {
  /** `/readyz`: 200 when true, 503 when false. */
  readonly ready: () => boolean;
}

/**
 * Serves the kubelet's probes: `/healthz` answers 200 while the process's event loop turns (a wedged process
 * does not answer and is restarted), `/readyz` 200 or 503 from `source.ready()`. Anything else is 404. Resolves
 * with the server and the address it listens on (port 0 picks one). `drops` is told of each connection closed
 * over {@link PROBE_HTTP_LIMITS}' `maxConnections`.
 */
export function serveHealthProbes(
  source: HealthSource,
  address: { readonly host: string; readonly port: number },
  drops?: DropObserver,
): Promise<{ server: Server; address: AddressInfo }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const [status, body] =
      req.method !== 'GET' && req.method !== 'HEAD'
        ? [405, 'method not allowed']
        : path === '/healthz'
          ? [200, 'ok']
          : path === '/readyz'
            ? source.ready()
              ? [200, 'ok']
              : [503, 'not ready: waiting for the cluster to be listed']
            : [404, 'not found'];
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${body}\n`);
  });
  return listen(server, address, drops);
}

/**
 * Listens on `address` ('' host: every address; port 0 picks one) with {@link PROBE_HTTP_LIMITS}, telling `drops`
 * of each connection closed over the cap. Resolves with the server and the address it listens on; rejects with the
 * listen error (`EADDRINUSE`, `EACCES`…).
 */
export function listen(
  server: Server,
  address: { readonly host: string; readonly port: number },
  drops?: DropObserver,
): Promise<{ server: Server; address: AddressInfo }> {
  limitHttpServer(server, PROBE_HTTP_LIMITS, drops);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host === '' ? undefined : address.host, () => {
      server.off('error', reject);
      resolve({ server, address: server.address() as AddressInfo });
    });
  });
}
