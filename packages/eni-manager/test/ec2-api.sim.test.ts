import { createServer, type Socket } from 'node:net';
import { ManualClock } from '@vpc-cni-kit/ec2-simulator';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallEvent, createEc2Api, errorCodeInfo, isEniManagerError } from '../src/index.js';
import { newApi, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('Ec2Api against ec2-simulator', () => {
  it('reports every attempt to the hook: action, latency, error code, attempt number', async () => {
    world = await startWorld();
    world.sim.faults.throttleNext(2, 'DescribeSubnets');
    await world.ec2.call('DescribeSubnets', {});
    const events = world.ec2Calls('DescribeSubnets');
    expect(events.map((e) => [e.attempt, e.errorCode])).toEqual([
      [1, 'RequestLimitExceeded'],
      [2, 'RequestLimitExceeded'],
      [3, undefined],
    ]);
    for (const e of events) {
      expect(e.service).toBe('ec2');
      expect(e.latencyMs).toBeGreaterThanOrEqual(0);
    }
    expect(world.sim.calls.filter((c) => c.action === 'DescribeSubnets')).toHaveLength(3);
  });

  it('maps AWS codes to the closed union, with retryability from one table', async () => {
    world = await startWorld();
    const cases: [string, string][] = [
      ['InsufficientFreeAddressesInSubnet', 'InsufficientFreeAddressesInSubnet'],
      ['InvalidParameterCombination', 'InvalidParameterCombination'],
      ['InternalError', 'InternalError'],
      ['SomethingNew', 'Ec2Unknown'],
    ];
    for (const [aws, code] of cases) {
      world.sim.faults.failNext('DescribeSubnets', aws, { count: 10 });
      const error = await world.ec2.call('DescribeSubnets', {}).catch((e: unknown) => e);
      world.sim.faults.clear();
      expect(isEniManagerError(error)).toBe(true);
      expect(error).toMatchObject({
        code,
        action: 'DescribeSubnets',
        retryable: errorCodeInfo[code as 'Ec2Unknown'].retryable,
      });
      if (code === 'Ec2Unknown') expect(error).toMatchObject({ awsCode: 'SomethingNew' });
      expect((error as { attempts: number }).attempts).toBe(
        errorCodeInfo[code as 'Ec2Unknown'].retryable ? 6 : 1,
      );
    }
  });

  it('the client-side bucket spaces calls out without EC2 ever throttling', async () => {
    world = await startWorld({ simRateLimits: true });
    const events: CallEvent[] = [];
    const api = newApi(world.sim, {
      rateLimits: { describe: { capacity: 2, refillPerSecond: 50 } },
      hooks: { onCall: (e) => events.push(e) },
    });
    await Promise.all(Array.from({ length: 6 }, () => api.call('DescribeSubnets', {})));
    api.destroy();
    expect(events.filter((e) => e.throttledMs > 0).length).toBeGreaterThanOrEqual(4);
    expect(events.every((e) => e.errorCode === undefined)).toBe(true);
  });

  it('the simulator’s own AWS buckets: 110 describes at once, the 10 past the burst throttled and retried to success', async () => {
    // The simulator's buckets run on a manual clock, so exactly the AWS burst (100) passes at first; each
    // throttle then advances that clock by one refill interval (50 ms at 20/s), freeing one token.
    const simClock = new ManualClock();
    world = await startWorld({ simRateLimits: true, simClock });
    const events: CallEvent[] = [];
    const api = newApi(world.sim, {
      maxAttempts: 10,
      backoff: { baseMs: 1, maxMs: 20, factor: 2, jitter: 0.5 },
      hooks: {
        onCall: (e) => {
          events.push(e);
          if (e.errorCode === 'RequestLimitExceeded') simClock.advance(50);
        },
      },
    });
    const filter = { Filters: [{ Name: 'vpc-id', Values: ['vpc-0a000000000000001'] }] };
    const results = await Promise.all(Array.from({ length: 110 }, () => api.call('DescribeSubnets', filter)));
    api.destroy();
    expect(results).toHaveLength(110);
    // 110 successes need 110 tokens: the 100 of the burst plus one per throttle, so at least 10 throttles.
    expect(events.filter((e) => e.errorCode === undefined)).toHaveLength(110);
    expect(events.filter((e) => e.errorCode === 'RequestLimitExceeded').length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...events.map((e) => e.attempt))).toBeLessThanOrEqual(10);
  });

  it('no server: Ec2Transport, retried up to maxAttempts', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const events: CallEvent[] = [];
    const api = createEc2Api({
      region: 'us-west-2',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'x' },
      maxAttempts: 3,
      backoff: { baseMs: 1, maxMs: 5, factor: 2, jitter: 0 },
      hooks: { onCall: (e) => events.push(e) },
    });
    const error = await api.call('DescribeSubnets', {}).catch((e: unknown) => e);
    api.destroy();
    expect(error).toMatchObject({ code: 'Ec2Transport', retryable: true, attempts: 3 });
    expect(events.map((e) => e.errorCode)).toEqual(['Ec2Transport', 'Ec2Transport', 'Ec2Transport']);
  });

  it('a hung EC2 endpoint: the request times out as Ec2Transport, retried up to maxAttempts', async () => {
    const sockets = new Set<Socket>();
    const hung = createServer((socket) => sockets.add(socket)); // accepts connections, never answers
    const port = await new Promise<number>((resolve) =>
      hung.listen(0, '127.0.0.1', () => resolve((hung.address() as { port: number }).port)),
    );
    const api = createEc2Api({
      region: 'us-west-2',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'x' },
      requestTimeoutMs: 100,
      maxAttempts: 2,
      backoff: { baseMs: 1, maxMs: 5, factor: 2, jitter: 0 },
    });
    try {
      const error = await api.call('DescribeSubnets', {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'Ec2Transport', retryable: true, attempts: 2 });
    } finally {
      api.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it('rejects a malformed region before loading the SDK', () => {
    expect(() => createEc2Api({ region: 'Mars' })).toThrow(expect.objectContaining({ code: 'InvalidInput' }));
  });
});
