import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallEvent, createImdsNodeMetadata, ImdsClient, isEniManagerError } from '../src/index.js';
import { TestClock } from './support/test-clock.js';

// IMDS edge cases the simulator is too well-behaved to produce (malformed values, 5xx, hangs, refused PUT),
// served by a raw node:http server on loopback. The happy paths run against ec2-simulator in imds.sim.test.ts.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;

async function serve(handler: Handler): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  const s = server;
  server = undefined;
  if (s === undefined) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
});

function tokenServer(
  values: Record<string, string>,
  counts: { put: number; get: number },
  accept = () => true,
): Handler {
  let token = 0;
  return (req, res) => {
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      counts.put++;
      res.writeHead(200, {
        'x-aws-ec2-metadata-token-ttl-seconds': req.headers['x-aws-ec2-metadata-token-ttl-seconds'],
      });
      res.end(`token-${++token}`);
      return;
    }
    counts.get++;
    if (req.headers['x-aws-ec2-metadata-token'] !== `token-${token}` || !accept()) {
      res.writeHead(401).end();
      return;
    }
    const path = (req.url ?? '').replace('/latest/meta-data/', '');
    const value = values[path];
    if (value === undefined) res.writeHead(404).end();
    else res.writeHead(200).end(value);
  };
}

describe('ImdsClient', () => {
  it('PUTs for a token once and reuses it for every GET until the TTL nears its end', async () => {
    const counts = { put: 0, get: 0 };
    const clock = new TestClock();
    const endpoint = await serve(tokenServer({ 'instance-id': 'i-0123456789abcdef0' }, counts));
    const imds = new ImdsClient({ endpoint, tokenTtlSeconds: 600, clock });
    for (let i = 0; i < 20; i++) expect(await imds.get('instance-id')).toBe('i-0123456789abcdef0');
    expect(counts).toEqual({ put: 1, get: 20 });
    clock.advance(600_000 - 60_000); // inside the renewal margin
    await imds.get('instance-id');
    expect(counts.put).toBe(2);
  });

  it('shares one token PUT between concurrent readers', async () => {
    const counts = { put: 0, get: 0 };
    const endpoint = await serve(tokenServer({ mac: '0a:00:00:00:00:01' }, counts));
    const imds = new ImdsClient({ endpoint });
    await Promise.all(Array.from({ length: 10 }, () => imds.get('mac')));
    expect(counts.put).toBe(1);
  });

  it('takes one fresh token after a 401, then gives up with ImdsUnauthorized', async () => {
    const counts = { put: 0, get: 0 };
    let refuse = 1;
    const endpoint = await serve(tokenServer({ mac: '0a:00:00:00:00:01' }, counts, () => refuse-- <= 0));
    const imds = new ImdsClient({ endpoint });
    expect(await imds.get('mac')).toBe('0a:00:00:00:00:01');
    expect(counts.put).toBe(2);

    refuse = 100;
    const error = await imds.get('mac').catch((e: unknown) => e);
    expect(isEniManagerError(error, 'ImdsUnauthorized')).toBe(true);
  });

  it('never falls back to IMDSv1 when the token PUT is refused', async () => {
    let gets = 0;
    const endpoint = await serve((req, res) => {
      if (req.method === 'PUT') res.writeHead(403).end();
      else {
        gets++;
        res.writeHead(200).end('i-0123456789abcdef0');
      }
    });
    const error = await new ImdsClient({ endpoint }).get('instance-id').catch((e: unknown) => e);
    expect(isEniManagerError(error, 'ImdsUnauthorized')).toBe(true);
    expect(gets).toBe(0);
  });

  it('retries 5xx with backoff, then reports ImdsUnavailable with the attempt count', async () => {
    const counts = { put: 0, get: 0 };
    const clock = new TestClock();
    const endpoint = await serve((req, res) => {
      if (req.method === 'PUT') res.writeHead(200).end('t');
      else {
        counts.get++;
        res.writeHead(503).end();
      }
    });
    const events: CallEvent[] = [];
    const imds = new ImdsClient({
      endpoint,
      clock,
      maxAttempts: 4,
      random: () => 0,
      hooks: { onCall: (e) => events.push(e) },
    });
    const error = await imds.get('mac').catch((e: unknown) => e);
    expect(isEniManagerError(error, 'ImdsUnavailable')).toBe(true);
    expect((error as { attempts: number }).attempts).toBe(4);
    expect(counts.get).toBe(4);
    expect(clock.sleeps).toEqual([50, 100, 200]);
    expect(events.filter((e) => e.action === 'mac').map((e) => e.errorCode)).toEqual(
      Array(4).fill('ImdsUnavailable'),
    );
  });

  it('times out a hung request', async () => {
    const endpoint = await serve((req, res) => {
      if (req.method === 'PUT') res.writeHead(200).end('t');
      // GETs never answer.
    });
    const imds = new ImdsClient({ endpoint, timeoutMs: 50, maxAttempts: 1 });
    const error = await imds.get('mac').catch((e: unknown) => e);
    expect(isEniManagerError(error, 'ImdsUnavailable')).toBe(true);
  });

  it('rejects bad options and bad paths before any request', () => {
    expect(() => new ImdsClient({ endpoint: 'not a url' })).toThrow(
      expect.objectContaining({ code: 'InvalidInput' }),
    );
    expect(() => new ImdsClient({ tokenTtlSeconds: 0 })).toThrow(
      expect.objectContaining({ code: 'InvalidInput' }),
    );
    const imds = new ImdsClient({ endpoint: 'http://127.0.0.1:9' });
    return expect(imds.get('../user-data')).rejects.toMatchObject({ code: 'InvalidInput' });
  });
});

describe('createImdsNodeMetadata validation', () => {
  const good: Record<string, string> = {
    'instance-id': 'i-0123456789abcdef0',
    'instance-type': 'm5.large',
    'placement/availability-zone': 'us-west-2a',
    'local-ipv4': '10.0.0.10',
    mac: '0a:00:00:00:00:01',
    'network/interfaces/macs/': '0a:00:00:00:00:01/',
    'network/interfaces/macs/0a:00:00:00:00:01/': 'device-number\ninterface-id\nlocal-ipv4s\nsubnet-id',
    'network/interfaces/macs/0a:00:00:00:00:01/interface-id': 'eni-0123456789abcdef0',
    'network/interfaces/macs/0a:00:00:00:00:01/device-number': '0',
    'network/interfaces/macs/0a:00:00:00:00:01/subnet-id': 'subnet-0123456789abcdef0',
    'network/interfaces/macs/0a:00:00:00:00:01/subnet-ipv4-cidr-block': '10.0.0.0/24',
    'network/interfaces/macs/0a:00:00:00:00:01/vpc-id': 'vpc-0123456789abcdef0',
    'network/interfaces/macs/0a:00:00:00:00:01/vpc-ipv4-cidr-blocks': '10.0.0.0/16',
    'network/interfaces/macs/0a:00:00:00:00:01/security-group-ids': 'sg-0123456789abcdef0',
    'network/interfaces/macs/0a:00:00:00:00:01/local-ipv4s': '10.0.0.10\n10.0.0.11',
  };

  it('reads a node without a region path, network-card, prefixes or IPv6 (defaults)', async () => {
    const endpoint = await serve(tokenServer(good, { put: 0, get: 0 }));
    const node = await createImdsNodeMetadata(new ImdsClient({ endpoint })).discoverNode();
    expect(node.region).toBe('us-west-2');
    expect(node.primaryEni).toMatchObject({
      networkCard: 0,
      ipv4Prefixes: [],
      ipv6Addresses: [],
      ipv4Addresses: ['10.0.0.10', '10.0.0.11'],
    });
  });

  it.each([
    ['network/interfaces/macs/0a:00:00:00:00:01/local-ipv4s', '10.0.0.300'],
    ['network/interfaces/macs/0a:00:00:00:00:01/subnet-ipv4-cidr-block', '10.0.0.1/24'],
    ['network/interfaces/macs/0a:00:00:00:00:01/interface-id', '<html>'],
    ['network/interfaces/macs/0a:00:00:00:00:01/device-number', '-1'],
    ['network/interfaces/macs/', 'ZZ:00:00:00:00:01/'],
    ['instance-id', ''],
  ])('fails closed when %s is %j', async (path, value) => {
    const endpoint = await serve(tokenServer({ ...good, [path]: value }, { put: 0, get: 0 }));
    const error = await createImdsNodeMetadata(new ImdsClient({ endpoint }))
      .discoverNode()
      .catch((e: unknown) => e);
    expect(isEniManagerError(error, 'ImdsInvalidResponse')).toBe(true);
  });
});
