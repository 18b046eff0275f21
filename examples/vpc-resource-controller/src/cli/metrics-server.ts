import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControllerMetrics } from '../controller/metrics.js';
import type { DropObserver } from '../http-limits.js';
import { listen } from './health.js';

/**
 * Serves `GET /metrics` (Prometheus text format 0.0.4) from the controller's registry; anything else is 404, another
 * method 405. Resolves with the server and the address it listens on (port 0 picks one). `drops` is told of each
 * connection closed over `PROBE_HTTP_LIMITS.maxConnections`.
 */
export function serveMetrics(
  metrics: ControllerMetrics,
  address: { readonly host: string; readonly port: number },
  drops?: DropObserver,
): Promise<{ server: Server; address: AddressInfo }> {
  const server = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (e: unknown) =>
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${String(e)}\n`),
    );
  });
  return listen(server, address, drops);
}
