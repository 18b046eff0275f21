import { createServer, type Server, type ServerResponse } from 'node:http';
import type { VirtualVpcDescription } from './describe.js';
import { isVpcError } from './errors.js';
import type { RouterView } from './router.js';

/** A running admin server. */
export interface AdminServer {
  /** The HTTP server (listening on loopback). */
  readonly server: Server;
  /** Stops it. */
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The run's admin API on `127.0.0.1` (any free port): `GET /vpc` (the description plus the router view),
 * `GET /vpc/router` (address → ENI map and drop counters by reason), `GET /vpc/errors` (data-plane errors
 * seen while following EC2 changes).
 */
export function startAdminServer(deps: {
  describe: () => VirtualVpcDescription;
  routerView: () => RouterView;
  errors: () => unknown[];
}): Promise<AdminServer> {
  const server = createServer((req, res) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return json(res, 405, { code: 'METHOD_NOT_ALLOWED' });
    try {
      if (path === '/vpc') return json(res, 200, { ...deps.describe(), routerView: deps.routerView() });
      if (path === '/vpc/router') return json(res, 200, deps.routerView());
      if (path === '/vpc/errors') return json(res, 200, deps.errors());
      return json(res, 404, { code: 'NOT_FOUND', message: `no route GET ${path}` });
    } catch (e) {
      return json(res, 500, { code: isVpcError(e) ? e.code : 'INTERNAL', message: String(e) });
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve({
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
