/**
 * The controller's servers against slow clients, over real sockets on loopback: the admission webhook (HTTPS), the
 * health probes and /metrics close a connection that sends nothing, its headers a byte at a time, or a body that
 * never ends, within their limits (Node's defaults held them for 60 s, 120 s for a TLS handshake never started, and
 * 300 s for a body), while a real request is answered at once. Each holds at most its `maxConnections` at once:
 * one more is closed unread (before its TLS handshake on the webhook), counted in `http_connections_dropped_total`
 * and warned at most once a minute, while a connection already held is still answered.
 */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { request } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { dribble, idleConnections, scratchDir, sendUntilClosed, serverHolds } from '@vpc-cni-kit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { serveHealthProbes } from '../src/cli/health.js';
import { serveMetrics } from '../src/cli/metrics-server.js';
import {
  ControllerMetrics,
  connectionDrops,
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

/** The admission webhook on a loopback port, with a fresh self-signed certificate written as `<name>.crt/.key`. */
async function webhook(
  name: string,
  log: ReturnType<typeof jsonLogger>,
  metrics?: ControllerMetrics,
): Promise<{ server: Server; address: AddressInfo }> {
  const material = await selfSignedCertificate();
  const certFile = join(dir.path, `${name}.crt`);
  const keyFile = join(dir.path, `${name}.key`);
  writeFileSync(certFile, material.cert);
  writeFileSync(keyFile, material.key);
  const served = await serveWebhook({
    certFile,
    keyFile,
    host: '127.0.0.1',
    port: 0,
    lookup: async () => [],
    log,
    metrics,
    reload: false,
  });
  const server = served.server as unknown as Server;
  servers.push(server);
  return { server, address: served.address };
}

describe.concurrent('slow clients are closed within the limits', () => {
  it('the admission webhook: a TLS handshake never started, headers a byte at a time, a body that never ends', async () => {
    const { address } = await webhook(
      'slow',
      jsonLogger(() => {}, 'error'),
    );
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

/** `n` connections to `port` that have connected and sent nothing, destroyed after the tests. */
async function fill(port: number, n: number): Promise<Socket[]> {
  const opened = await idleConnections(port, n);
  sockets.push(...opened);
  return opened;
}

/** A GET that asks the server to close the connection once answered, so 'close' marks a whole answer. */
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

/** Log lines at warn and above, parsed. */
function warnings(): { lines: Record<string, unknown>[]; log: ReturnType<typeof jsonLogger> } {
  const lines: Record<string, unknown>[] = [];
  return { lines, log: jsonLogger((line) => lines.push(JSON.parse(line)), 'warn') };
}

async function dropped(metrics: ControllerMetrics, endpoint: string): Promise<number> {
  const m = metrics.registry.getSingleMetric('http_connections_dropped_total');
  return (await m!.get()).values.find((v) => v.labels['endpoint'] === endpoint)?.value ?? 0;
}

describe('each server holds at most its maxConnections', () => {
  it('the health probes and /metrics: one over 64 is closed unread, counted and warned; those held are served', async () => {
    expect(PROBE_HTTP_LIMITS.maxConnections).toBe(64);
    const metrics = new ControllerMetrics();
    const { lines, log } = warnings();
    const health = await serveHealthProbes(
      { ready: () => true },
      { host: '127.0.0.1', port: 0 },
      connectionDrops('probes', PROBE_HTTP_LIMITS, log, metrics),
    );
    const scrape = await serveMetrics(
      metrics,
      { host: '127.0.0.1', port: 0 },
      connectionDrops('metrics', PROBE_HTTP_LIMITS, log, metrics),
    );
    servers.push(health.server, scrape.server);
    for (const [endpoint, { server, address }, path] of [
      ['probes', health, '/healthz'],
      ['metrics', scrape, '/metrics'],
    ] as const) {
      const held = await fill(address.port, PROBE_HTTP_LIMITS.maxConnections);
      await serverHolds(server, PROBE_HTTP_LIMITS.maxConnections);
      const before = lines.length;
      const over = await sendUntilClosed(await plain(address.port), get(path));
      expect(over.text, `${endpoint}: the connection over the cap was answered`).toBe('');
      expect(over.closedMs).toBeLessThan(1000);
      expect(await dropped(metrics, endpoint)).toBe(1);
      expect(lines.slice(before)).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: 'connections refused over the cap',
          endpoint,
          dropped: 1,
          maxConnections: 64,
          lastPeer: '127.0.0.1',
          hint: expect.stringContaining('holding many connections open'),
        }),
      ]);
      // Another one within the minute: counted, not warned yet.
      expect((await sendUntilClosed(await plain(address.port), get(path))).text).toBe('');
      expect(await dropped(metrics, endpoint)).toBe(2);
      expect(lines).toHaveLength(before + 1);
      // A connection held all along still gets its whole answer.
      expect((await sendUntilClosed(held.pop()!, get(path))).text).toMatch(/^HTTP\/1\.1 200 /);
      // With the held connections gone, a new one is served.
      for (const s of held) s.destroy();
      await serverHolds(server, 0);
      const after = await sendUntilClosed(await plain(address.port), get(path));
      expect(after.text).toMatch(/^HTTP\/1\.1 200 /);
      if (endpoint === 'metrics') {
        expect(after.text).toContain('http_connections_dropped_total{endpoint="metrics"} 2');
        expect(after.text).toContain('http_connections_dropped_total{endpoint="probes"} 2');
      }
    }
    // Closing a server reports what was not warned about yet (each one's second drop): one more line each.
    for (const s of [health.server, scrape.server]) await new Promise((r) => s.close(r));
    expect(lines.map((l) => [l['endpoint'], l['dropped']])).toEqual([
      ['probes', 1],
      ['metrics', 1],
      ['probes', 1],
      ['metrics', 1],
    ]);
  }, 15_000);

  it('the admission webhook: one over 1024 is closed before its TLS handshake; one held is still answered', async () => {
    expect(WEBHOOK_HTTP_LIMITS.maxConnections).toBe(1024);
    const metrics = new ControllerMetrics();
    const { lines, log } = warnings();
    const { server, address } = await webhook('cap', log, metrics);
    // One held connection has done its handshake (as the API server's pooled ones have), the rest sent nothing.
    const pooled = await tls(address.port);
    const held = await fill(address.port, WEBHOOK_HTTP_LIMITS.maxConnections - 1);
    await serverHolds(server, WEBHOOK_HTTP_LIMITS.maxConnections);
    const overSocket: TLSSocket = tlsConnect({
      port: address.port,
      host: '127.0.0.1',
      rejectUnauthorized: false,
    });
    sockets.push(overSocket);
    overSocket.on('error', () => {});
    const over = await sendUntilClosed(overSocket, get('/mutate-v1-pod'));
    expect(over.secured, 'the connection over the cap finished its TLS handshake').toBe(false);
    expect(over.text).toBe('');
    expect(over.closedMs).toBeLessThan(1000);
    expect(await dropped(metrics, 'webhook')).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'connections refused over the cap',
        endpoint: 'webhook',
        dropped: 1,
        maxConnections: 1024,
        hint: expect.stringContaining('API server'),
      }),
    ]);
    // The pooled connection still gets a whole answer to its AdmissionReview (here a malformed one: 400).
    const answer = await sendUntilClosed(
      pooled,
      'POST /mutate-v1-pod HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 400 /);
    for (const s of held) s.destroy();
    await serverHolds(server, 0);
    const after = await tls(address.port);
    expect((await sendUntilClosed(after, get('/mutate-v1-pod'))).text).toMatch(/^HTTP\/1\.1 405 /);
    expect(await dropped(metrics, 'webhook')).toBe(1);
  }, 20_000);
});
