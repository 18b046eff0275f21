/**
 * The daemon's HTTP endpoints (introspection and metrics) against hostile clients, over real sockets on
 * loopback: a method other than GET or HEAD is refused with 405 and changes nothing; a client that sends half a
 * request and then nothing neither blocks other clients nor holds the daemon's shutdown; a client that sends
 * nothing, or its headers or body a byte at a time, is closed within HTTP_LIMITS; a connection over
 * HTTP_LIMITS.maxConnections is closed unread at once, counted in awscni_http_connections_dropped_total and warned
 * at most once a minute, while the connections already held are still served.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { dribble, idleConnections, sendUntilClosed, serverHolds } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { connectionDrops } from '../src/daemon/connection-drops.js';
import {
  type EarlyHttpEndpoint,
  HTTP_LIMITS,
  type HttpEndpoint,
  introspectionServer,
  listen,
  listenEarly,
  metricsServer,
} from '../src/daemon/http-servers.js';
import { type Logger, silentLogger } from '../src/daemon/logger.js';
import { DaemonMetrics } from '../src/daemon/metrics.js';

function datastore(): Datastore {
  const ds = new Datastore({
    clock: new ManualClock(),
    checkpointer: new InMemoryCheckpointer(),
    cooldownMs: 0,
  });
  ds.addEni({ id: 'eni-0a', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  ds.addCidr('eni-0a', '10.0.1.10/32');
  return ds;
}

const open: HttpEndpoint[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(open.splice(0).map((e) => e.close()));
});

async function endpoint(kind: 'introspection' | 'metrics'): Promise<{ ep: EarlyHttpEndpoint; port: number }> {
  const ep = await listenEarly('127.0.0.1:0');
  open.push(ep);
  const ds = datastore();
  ep.serve(
    kind === 'introspection'
      ? introspectionServer(ds, loadConfig({}), silentLogger)
      : metricsServer(new DaemonMetrics(), ds),
  );
  return { ep, port: Number(ep.address.split(':').at(-1)) };
}

function call(
  port: number,
  method: string,
  path: string,
): Promise<{ status: number; allow: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, allow: res.headers['allow'] as string | undefined, body }),
      );
    });
    req.on('error', reject);
    req.end(method === 'GET' || method === 'HEAD' ? undefined : '{}');
  });
}

/** A client that opened a connection, sent the start of a request's headers, and went quiet. */
async function stalledClient(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  s.write('GET /v1/enis HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  return s;
}

describe('introspection and metrics endpoints: methods', () => {
  it('refuse POST, PUT, DELETE and PATCH with 405 and Allow: GET, HEAD; GET and HEAD (with a query) answer', async () => {
    for (const [kind, path] of [
      ['introspection', '/v1/enis'],
      ['metrics', '/metrics'],
    ] as const) {
      const { port } = await endpoint(kind);
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const r = await call(port, method, path);
        expect(r.status, `${kind} ${method}`).toBe(405);
        expect(r.allow).toBe('GET, HEAD');
      }
      expect((await call(port, 'GET', `${path}?x=1&y`)).status).toBe(200);
      const head = await call(port, 'HEAD', path);
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
    }
  });
});

describe('introspection and metrics endpoints: a client that stalls mid-request', () => {
  it('does not keep other clients waiting', async () => {
    const { port } = await endpoint('introspection');
    await stalledClient(port);
    await stalledClient(port);
    const r = await call(port, 'GET', '/v1/enis');
    expect(r.status).toBe(200);
  });

  it('does not hold close() (the daemon shutdown) beyond a second', async () => {
    for (const kind of ['introspection', 'metrics'] as const) {
      const { ep, port } = await endpoint(kind);
      const stalled = await stalledClient(port);
      // And a kept-alive idle one, which close() may end at once.
      const idle = connect(port, '127.0.0.1');
      sockets.push(idle);
      idle.on('error', () => {});
      await new Promise((r) => idle.once('connect', r));
      const started = performance.now();
      await ep.close();
      open.splice(open.indexOf(ep), 1);
      expect(performance.now() - started, `${kind}: close() waited`).toBeLessThan(3000);
      // The stalled connection was ended by the server.
      await new Promise<void>((resolve) => {
        if (stalled.destroyed || stalled.readableEnded) resolve();
        else stalled.once('close', () => resolve());
      });
    }
  }, 15_000);
});

/** A connection to `port` that dribbles (testkit's `dribble`); resolves with how long the server kept it open. */
async function dribbler(port: number, start: string, drip: string): Promise<number> {
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  return dribble(s, start, drip);
}

describe('introspection and metrics endpoints: slow clients (HTTP_LIMITS)', () => {
  it('closes a silent connection, headers sent a byte at a time and a request body never finished, within the limits', async () => {
    // Node's defaults held these for 60 s, 60 s and 300 s (plus up to 30 s before the check): the test's own
    // deadline (20 s) ends them first.
    const slack = HTTP_LIMITS.checkEveryMs + 1000;
    const results = await Promise.all(
      (['introspection', 'metrics'] as const).map(async (kind) => {
        const { port } = await endpoint(kind);
        const path = kind === 'metrics' ? '/metrics' : '/v1/enis';
        const held = Promise.all([
          dribbler(port, '', ''),
          dribbler(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `, 'a'),
          dribbler(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n`, 'a'),
        ]);
        // Meanwhile a real client is answered at once.
        expect((await call(port, 'GET', path)).status).toBe(200);
        return held;
      }),
    );
    for (const [silent, headers, body] of results) {
      expect(silent).toBeLessThan(HTTP_LIMITS.headersMs + slack);
      expect(headers).toBeLessThan(HTTP_LIMITS.headersMs + slack);
      expect(body).toBeLessThan(HTTP_LIMITS.requestMs + slack);
    }
  }, 20_000);
});

/** Connections to `port` that have connected and sent nothing, destroyed after the test. */
async function idle(port: number, n = 1): Promise<Socket[]> {
  const opened = await idleConnections(port, n);
  sockets.push(...opened);
  return opened;
}

/** A GET of `path` on `s` that asks the server to close once it has answered (see testkit's `sendUntilClosed`). */
const exchange = (s: Socket, path: string) =>
  sendUntilClosed(s, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);

describe('introspection and metrics endpoints: at most HTTP_LIMITS.maxConnections at once', () => {
  it('close one over the cap unread at once, count and warn it, and still serve the connections held', async () => {
    const max = HTTP_LIMITS.maxConnections;
    expect(max).toBe(64);
    for (const kind of ['metrics', 'introspection'] as const) {
      const metrics = new DaemonMetrics();
      const warnings: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
      const log: Logger = { ...silentLogger, warn: (msg, fields) => warnings.push({ msg, fields }) };
      const ds = datastore();
      const server =
        kind === 'metrics'
          ? metricsServer(metrics, ds)
          : introspectionServer(ds, loadConfig({}), silentLogger);
      const path = kind === 'metrics' ? '/metrics' : '/v1/enis';
      const ep = await listen(
        server,
        '127.0.0.1:0',
        undefined,
        connectionDrops(kind, log, () => metrics.httpConnectionsDropped(kind)),
      );
      open.push(ep);
      const port = Number(ep.address.split(':').at(-1));
      const dropped = async () =>
        (await metrics.registry.getSingleMetric('awscni_http_connections_dropped_total')!.get()).values.find(
          (v) => v.labels['endpoint'] === kind,
        )?.value ?? 0;

      const held = await idle(port, max);
      await serverHolds(server, max);
      // One more: closed by the server as it is accepted, before its request is read.
      const over = await exchange((await idle(port))[0]!, path);
      expect(over.text, `${kind}: the connection over the cap was answered`).toBe('');
      expect(over.closedMs, `${kind}: the connection over the cap was held`).toBeLessThan(1000);
      expect(await dropped()).toBe(1);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toBe(`${kind} endpoint refused 1 connection: at its cap`);
      expect(warnings[0]!.fields).toMatchObject({ endpoint: kind, dropped: 1, maxConnections: max });
      expect(warnings[0]!.fields?.['lastPeer']).toBe('127.0.0.1');
      expect(String(warnings[0]!.fields?.['hint'])).toContain('holding many connections open');

      // A connection held all along still gets its whole answer (the metrics one shows the drop).
      const answer = await exchange(held.pop()!, path);
      expect(answer.text).toMatch(/^HTTP\/1\.1 200 /);
      if (kind === 'metrics')
        expect(answer.text).toContain('awscni_http_connections_dropped_total{endpoint="metrics"} 1');
      else expect(answer.text).toContain('"eni-0a"');

      // Back at the cap (the answered one is gone, one more takes its place): two more over it within the minute
      // are counted at once and warned about in one line later, here when the endpoint closes.
      held.push(...(await idle(port)));
      await serverHolds(server, max);
      for (const extra of [(await idle(port))[0]!, (await idle(port))[0]!])
        expect((await exchange(extra, path)).text).toBe('');
      expect(await dropped()).toBe(3);
      expect(warnings).toHaveLength(1);

      // Once the held connections are gone, a new one is served.
      for (const s of held) s.destroy();
      await serverHolds(server, 0);
      const after = await exchange((await idle(port))[0]!, path);
      expect(after.text).toMatch(/^HTTP\/1\.1 200 /);
      expect(await dropped()).toBe(3);

      await ep.close();
      open.splice(open.indexOf(ep), 1);
      expect(warnings.map((w) => w.fields?.['dropped'])).toEqual([1, 2]);
      expect(warnings[1]!.msg).toBe(`${kind} endpoint refused 2 connections: at its cap`);
    }
  }, 15_000);

  it('the early endpoint (503 until served) has the same cap', async () => {
    const drops: (string | undefined)[] = [];
    const ep = await listenEarly('127.0.0.1:0', undefined, {
      dropped: (peer) => drops.push(peer),
      stop() {},
    });
    open.push(ep);
    const port = Number(ep.address.split(':').at(-1));
    const held = await idle(port, HTTP_LIMITS.maxConnections);
    // The server accepts in the order the connections came (the listen queue): the last one is over the cap.
    expect((await exchange((await idle(port))[0]!, '/metrics')).text).toBe('');
    expect(drops).toHaveLength(1);
    expect((await exchange(held[0]!, '/metrics')).text).toMatch(/^HTTP\/1\.1 503 /);
  });
});
