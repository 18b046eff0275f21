import { setupPodNetwork } from '@vpc-cni-kit/routing-table';
import { FakeNetwork } from '@vpc-cni-kit/routing-table/testing';
import { describe, expect, it } from 'vitest';
import { keyedQueue, yieldingPorts } from '../src/daemon/host.js';

const input = {
  podIp: '10.0.1.20',
  hostVeth: 'enipod0',
  containerIf: 'eth0',
  netnsPath: '/var/run/netns/pod1',
  mtu: 9001,
  eniTable: 2,
};
const random = () => Uint8Array.from([2, 1, 2, 3, 4, 5]);

describe('pod plumbing ports that give the event loop turns', () => {
  it('plumb exactly as the plain ports do', async () => {
    const plain = new FakeNetwork();
    const yielding = new FakeNetwork();
    for (const net of [plain, yielding]) net.namespace(input.netnsPath);
    const a = await setupPodNetwork(
      { host: plain.namespace('/host'), namespaces: plain, random, uniqueMac: false },
      input,
    );
    const b = await setupPodNetwork(
      { ...yieldingPorts(yielding.namespace('/host'), yielding), random, uniqueMac: false },
      input,
    );
    expect(b).toEqual(a);
    for (const kind of ['route', 'rule'] as const) {
      expect(yielding.namespace('/host').show(kind)).toEqual(plain.namespace('/host').show(kind));
      expect(yielding.namespace(input.netnsPath).show(kind)).toEqual(
        plain.namespace(input.netnsPath).show(kind),
      );
    }
    expect(await yielding.namespace('/host').links()).toEqual(await plain.namespace('/host').links());
  });

  it('let callbacks already due run while a pod is plumbed (three turns), not only after', async () => {
    const net = new FakeNetwork();
    net.namespace(input.netnsPath);
    const host = net.namespace('/host');
    const order: string[] = [];
    const originalAdd = host.add.bind(host);
    host.add = async (o) => {
      if (o.kind === 'rule') order.push('host rule');
      return originalAdd(o);
    };
    // Three immediates queued in a chain, as the checkpoint's write, rename and fsync callbacks come one by one.
    setImmediate(() => {
      order.push('turn 1');
      setImmediate(() => {
        order.push('turn 2');
        setImmediate(() => order.push('turn 3'));
      });
    });
    await setupPodNetwork({ ...yieldingPorts(host, net), random, uniqueMac: false }, input);
    order.push('done');
    expect(order.slice(0, 3)).toEqual(['turn 1', 'turn 2', 'turn 3']);
    expect(order.indexOf('turn 3')).toBeLessThan(order.indexOf('host rule'));
  });
});

describe('keyedQueue', () => {
  it('runs work for one key one after another, other keys meanwhile, and survives a failure', async () => {
    const queue = keyedQueue();
    const log: string[] = [];
    const turn = () => new Promise<void>((r) => setImmediate(r));
    const job =
      (name: string, fail = false) =>
      async () => {
        log.push(`${name} start`);
        await turn();
        await turn();
        log.push(`${name} end`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue('veth-a', job('a1', true)),
      queue('veth-a', job('a2')),
      queue('veth-b', job('b1')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(log.indexOf('a1 end')).toBeLessThan(log.indexOf('a2 start'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
    expect(await queue('veth-a', async () => 'again')).toBe('again');
  });
});
