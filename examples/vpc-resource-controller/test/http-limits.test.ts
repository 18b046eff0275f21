/**
 * The controller's servers against slow clients, over real sockets on loopback: the admission webhook (HTTPS), the
 * health probes and /metrics close a connection that sends nothing, its headers a byte at a time, or a body that
 * never ends, within their limits (Node's defaults held them for 60 s, 120 s for a TLS handshake never started, and
 * 300 s for a body), while a real request is answered at once.
 */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { dribble, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { serveHealthProbes } from '../src/cli/health.js';
import { serveMetrics } from '../src/cli/metrics-server.js';
import {
  ControllerMetrics,
  jsonLogger,
  PROBE_HTTP_LIMITS,
  serveWebhook,
  WEBHOOK_HTTP_LIMITS,
} from '../src/index.js';

const dir = scratchDir('vpc-rc-limits-');
const servers: Server[] = [];
const sockets: Socket[] = [];
afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  dir.remove();
});

/** How much later than its limit the server may close a connection: the check interval and a second of slack. */
const late = (checkEveryMs: number) => checkEveryMs + 1000;

async function plain(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  return s;
}

async function tls(port: number): Promise<Socket> {
  const s = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false });
  sockets.push(s);
  s.on('error', () => {});
  await new Promise((r) => s.once('secureConnect', r));
  return s;
}

describe.concurrent('slow clients are closed within the limits', () => {
  it('the admission webhook: a TLS handshake never started, headers a byte at a time, a body that never ends', async () => {
    const material = await selfSignedCertificate();
    const certFile = join(dir.path, 'tls.crt');
    const keyFile = join(dir.path, 'tls.key');
    writeFileSync(certFile, material.cert);
    writeFileSync(keyFile, material.key);
    const { server, address } = await serveWebhook({
      certFile,
      keyFile,
      host: '127.0.0.1',
      port: 0,
      lookup: async () => [],
      log: jsonLogger(() => {}, 'error'),
      reload: false,
    });
    servers.push(server as unknown as Server);
    const port = address.port;
    const held = Promise.all([
      plain(port).then((s) => dribble(s)),
      tls(port).then((s) => dribble(s, 'POST /mutate-v1-pod HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 'a')),
      tls(port).then((s) =>
        dribble(
          s,
          'POST /mutate-v1-pod HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{',
          ' ',
        ),
      ),
    ]);
    // Meanwhile an AdmissionReview sent at once is answered.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/mutate-v1-pod', rejectUnauthorized: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(400);
    const [handshake, headers, body] = await held;
    const slack = late(WEBHOOK_HTTP_LIMITS.checkEveryMs);
    expect(handshake).toBeLessThan(WEBHOOK_HTTP_LIMITS.handshakeMs! + slack);
    expect(headers).toBeLessThan(WEBHOOK_HTTP_LIMITS.headersMs + slack);
    expect(body).toBeLessThan(WEBHOOK_HTTP_LIMITS.requestMs + slack);
  }, 25_000);

  it('the health probes and /metrics: silence, headers a byte at a time, a body that never ends', async () => {
    const health = await serveHealthProbes({ ready: () => true }, { host: '127.0.0.1', port: 0 });
    const metrics = await serveMetrics(new ControllerMetrics(), { host: '127.0.0.1', port: 0 });
    servers.push(health.server, metrics.server);
    const results = await Promise.all(
      [
        [health.address.port, '/healthz'],
        [metrics.address.port, '/metrics'],
      ].map(([port, path]) =>
        Promise.all([
          plain(port as number).then((s) => dribble(s)),
          plain(port as number).then((s) =>
            dribble(s, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `, 'a'),
          ),
          plain(port as number).then((s) =>
            dribble(s, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n`, 'a'),
          ),
        ]),
      ),
    );
    const slack = late(PROBE_HTTP_LIMITS.checkEveryMs);
    for (const [silent, headers, body] of results) {
      expect(silent).toBeLessThan(PROBE_HTTP_LIMITS.headersMs + slack);
      expect(headers).toBeLessThan(PROBE_HTTP_LIMITS.headersMs + slack);
      expect(body).toBeLessThan(PROBE_HTTP_LIMITS.requestMs + slack);
    }
  }, 20_000);
});
