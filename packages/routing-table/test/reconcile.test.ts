import { expect, describe as group, it } from 'vitest';
import {
  describe,
  isRoutingError,
  planNodeRouting,
  reconcileRouting,
  setupPodNetwork,
  teardownPodNetwork,
  teardownRouting,
  verifyRouting,
} from '../src/index.js';
import { FakeNetwork } from '../src/testing/index.js';

function nodePlan(pods = 3) {
  return planNodeRouting({
    enis: [
      {
        interfaceName: 'eth1',
        deviceNumber: 1,
        primaryIp: '10.0.1.10',
        subnetCidr: '10.0.1.0/24',
        mtu: 9001,
      },
    ],
    pods: Array.from({ length: pods }, (_, i) => ({
      podIp: `10.0.1.${20 + i}`,
      hostVeth: `enipod${i}`,
      table: i % 2 === 0 ? 2 : 254,
    })),
    fwmark: 0x80,
  });
}

function hostWithLinks(pods = 3) {
  const net = new FakeNetwork();
  const host = net.namespace('/host');
  host.addLink('eth0', '02:00:00:00:00:10');
  host.addLink('eth1', '02:00:00:00:00:11');
  for (let i = 0; i < pods; i++)
    host.addLink(`enipod${i}`, `02:00:00:00:01:${i.toString(16).padStart(2, '0')}`);
  return { net, host };
}

group('reconcileRouting with the fake', () => {
  it('applies exactly the plan, removes the kernel subnet route, then changes nothing', async () => {
    const { host } = hostWithLinks();
    const plan = nodePlan();
    const first = await reconcileRouting(host, plan);
    expect(first.changes).toBeGreaterThan(0);
    expect(host.show('rule')).toEqual(plan.rules.map(describe).sort());
    expect(host.show('route')).toEqual(plan.routes.map(describe).sort());
    expect(host.show('address')).toEqual(['address 10.0.1.10/24 dev eth1']);
    expect((await host.links()).find((l) => l.name === 'eth1')).toMatchObject({ up: true, mtu: 9001 });
    await verifyRouting(host, plan, true);

    const writes = host.writes;
    const second = await reconcileRouting(host, plan);
    expect(second.changes).toBe(0);
    expect(host.writes).toBe(writes);
  });

  it('removes stale owned rules and routes, keeps foreign ones', async () => {
    const { host } = hostWithLinks(5);
    await reconcileRouting(host, nodePlan(5));
    await host.add({ kind: 'rule', family: 4, priority: 100, table: 50, to: '192.0.2.0/24' }); // not ours
    await host.add({ kind: 'route', family: 4, table: 254, dst: '192.0.2.0/24', dev: 'eth0', scope: 'link' }); // not ours
    const smaller = nodePlan(3);
    const result = await reconcileRouting(host, smaller);
    expect(result.diff.removeRules.map(describe)).toEqual([
      'rule v4 512: to 10.0.1.23/32 lookup main',
      'rule v4 512: to 10.0.1.24/32 lookup main',
      'rule v4 1536: from 10.0.1.24/32 lookup 2',
    ]);
    expect(result.diff.removeRoutes.length).toBe(2);
    expect(host.show('rule')).toContain('rule v4 100: to 192.0.2.0/24 lookup 50');
    expect(host.show('route')).toContain('route v4 192.0.2.0/24 dev eth0 table main scope link');
    await verifyRouting(host, smaller, true);
  });

  it('verify reports what is missing and unexpected with a typed error', async () => {
    const { host } = hostWithLinks();
    const plan = nodePlan();
    await reconcileRouting(host, plan);
    await host.remove(plan.rules[1]!);
    await host.add({ kind: 'rule', family: 4, priority: 512, table: 254, to: '10.9.9.9/32' });
    let caught: unknown;
    try {
      await verifyRouting(host, plan, true);
    } catch (error) {
      caught = error;
    }
    expect(isRoutingError(caught, 'VERIFY_FAILED')).toBe(true);
    expect((caught as { missing: string[] }).missing).toEqual([describe(plan.rules[1]!)]);
    expect((caught as { unexpected: string[] }).unexpected).toEqual([
      'rule v4 512: to 10.9.9.9/32 lookup main',
    ]);
  });

  it('teardown tolerates what is already gone and leaves nothing', async () => {
    const { host } = hostWithLinks();
    const plan = nodePlan();
    await reconcileRouting(host, plan);
    await host.remove(plan.rules[0]!);
    await teardownRouting(host, plan);
    await teardownRouting(host, plan);
    expect(host.show('rule')).toEqual([]);
    expect(host.show('route')).toEqual([]);
    expect(host.show('address')).toEqual([]);
  });

  it('a kernel failure surfaces as a typed error', async () => {
    const { host } = hostWithLinks();
    host.failNext('add', 'KERNEL');
    let caught: unknown;
    try {
      await reconcileRouting(host, nodePlan());
    } catch (error) {
      caught = error;
    }
    expect(isRoutingError(caught, 'KERNEL')).toBe(true);
  });
});

group('setupPodNetwork with the fake', () => {
  it('creates the veth in the pod namespace and plumbs both sides; teardown removes the host side', async () => {
    const net = new FakeNetwork();
    const host = net.namespace('/host');
    host.addLink('eth0', '02:00:00:00:00:10');
    const pod = net.namespace('/var/run/netns/pod1');
    const random = () => Uint8Array.from([0x01, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
    const plan = await setupPodNetwork(
      { host, namespaces: net, random },
      {
        podIp: '10.0.1.20',
        hostVeth: 'enipod0',
        containerIf: 'eth0',
        netnsPath: '/var/run/netns/pod1',
        mtu: 9001,
        eniTable: 2,
      },
    );
    expect(plan.veth.mac).toBe('02:aa:bb:cc:dd:ee');
    expect((await host.links()).find((l) => l.name === 'enipod0')).toMatchObject({
      mac: '02:aa:bb:cc:dd:ee',
      mtu: 9001,
      up: true,
    });
    expect((await pod.links()).find((l) => l.name === 'eth0')).toMatchObject({ mtu: 9001, up: true });
    expect(pod.show('neighbour')).toEqual([
      'neighbour 169.254.1.1 lladdr 02:aa:bb:cc:dd:ee dev eth0 permanent',
    ]);
    expect(pod.show('route')).toEqual([
      'route v4 0.0.0.0/0 via 169.254.1.1 dev eth0 table main',
      'route v4 169.254.1.1/32 dev eth0 table main scope link',
    ]);
    expect(host.sysctls.get('net/ipv6/conf/enipod0/accept_redirects')).toBe('1');
    expect(host.show('rule')).toEqual([
      'rule v4 1536: from 10.0.1.20/32 lookup 2',
      'rule v4 512: to 10.0.1.20/32 lookup main',
    ]);
    await verifyRouting(host, plan.host);

    // Re-running ADD for the same pod replaces the leftover veth and converges.
    await setupPodNetwork(
      { host, namespaces: net, random },
      {
        podIp: '10.0.1.20',
        hostVeth: 'enipod0',
        containerIf: 'eth1',
        netnsPath: '/var/run/netns/pod1',
        mtu: 9001,
        eniTable: 2,
      },
    );
    await teardownPodNetwork(host, {
      podIp: '10.0.1.20',
      hostVeth: 'enipod0',
      eniTable: 2,
      deleteVeth: true,
    });
    await teardownPodNetwork(host, {
      podIp: '10.0.1.20',
      hostVeth: 'enipod0',
      eniTable: 2,
      deleteVeth: true,
    });
    expect(host.show('rule')).toEqual([]);
    expect(host.show('route')).toEqual([]);
  });

  it('uniqueMac: false plumbs the same without reading the host (no link dump, no table dumps)', async () => {
    const net = new FakeNetwork();
    const host = net.namespace('/host');
    host.addLink('eth0', '02:00:00:00:00:10');
    net.namespace('/var/run/netns/pod2');
    const reads: string[] = [];
    const links = host.links.bind(host);
    const list = host.list.bind(host);
    host.links = async () => {
      reads.push('links');
      return links();
    };
    host.list = (async (kind: Parameters<typeof list>[0], family: Parameters<typeof list>[1]) => {
      reads.push(`list ${kind}`);
      return list(kind, family);
    }) as typeof host.list;
    const removed: string[] = [];
    const setLink = host.setLink.bind(host);
    host.setLink = async (name, change) => {
      if (change.remove) removed.push(name);
      return setLink(name, change);
    };
    // A stale main-table route for the address through another veth, and one of the pod's rules already there.
    await host.add({ kind: 'route', family: 4, table: 254, dst: '10.0.1.30/32', dev: 'eth0', scope: 'link' });
    await host.add({ kind: 'rule', family: 4, priority: 512, table: 254, to: '10.0.1.30/32' });
    const input = {
      podIp: '10.0.1.30',
      hostVeth: 'enipod9',
      containerIf: 'eth0',
      netnsPath: '/var/run/netns/pod2',
      mtu: 9001,
      eniTable: 2,
    };
    const random = () => Uint8Array.from([0x00, 1, 2, 3, 4, 5]);
    const plan = await setupPodNetwork({ host, namespaces: net, random, uniqueMac: false }, input);
    expect(reads).toEqual([]);
    expect(removed).toEqual([]); // no leftover: nothing deleted, no extra request
    expect(plan.veth.mac).toBe('02:01:02:03:04:05');
    expect(host.show('route')).toEqual(['route v4 10.0.1.30/32 dev enipod9 table main scope link']);
    expect(host.show('rule')).toEqual([
      'rule v4 1536: from 10.0.1.30/32 lookup 2',
      'rule v4 512: to 10.0.1.30/32 lookup main',
    ]);
    await verifyRouting(host, plan.host);

    // Again for the same pod: the leftover veth is deleted by name and recreated, the host side converges.
    // (The fake keeps a deleted veth's peer, so the retry names another pod interface.)
    reads.length = 0; // verifyRouting read the host
    const again = await setupPodNetwork(
      { host, namespaces: net, random: () => Uint8Array.from([2, 9, 9, 9, 9, 9]), uniqueMac: false },
      { ...input, containerIf: 'eth1' },
    );
    expect(reads).toEqual([]);
    expect(removed).toEqual(['enipod9']); // creating the pair said EXISTS: the leftover was replaced
    expect((await links()).filter((l) => l.name === 'enipod9').map((l) => l.mac)).toEqual([again.veth.mac]);
    expect(host.show('rule')).toHaveLength(2);
    await verifyRouting(host, again.host, true);
  });

  it('rejects bad input before changing anything (uniqueMac: false too)', async () => {
    const net = new FakeNetwork();
    const host = net.namespace('/host');
    host.addLink('enipod1', '02:00:00:00:00:11');
    const before = await host.links();
    for (const uniqueMac of [true, false]) {
      let caught: unknown;
      try {
        await setupPodNetwork(
          { host, namespaces: net, random: () => new Uint8Array(6), uniqueMac },
          {
            podIp: 'nope',
            hostVeth: 'enipod1',
            containerIf: 'eth0',
            netnsPath: '/p',
            mtu: 1500,
            eniTable: 2,
          },
        );
      } catch (error) {
        caught = error;
      }
      expect(isRoutingError(caught, 'INVALID_ARGUMENT')).toBe(true);
      expect(await host.links()).toEqual(before);
    }
  });

  it('IPv6 waits for DAD with the injected sleep and times out with a typed error', async () => {
    const net = new FakeNetwork();
    const host = net.namespace('/host');
    const pod = net.namespace('/p6');
    const original = pod.add.bind(pod);
    pod.add = async (o) => original(o.kind === 'address' ? { ...o, tentative: true } : o);
    let slept = 0;
    let caught: unknown;
    try {
      await setupPodNetwork(
        {
          host,
          namespaces: net,
          random: () => new Uint8Array([2, 1, 1, 1, 1, 1]),
          sleep: async (ms) => void (slept += ms),
          dadTimeoutMs: 200,
        },
        {
          podIp: '2600::5',
          hostVeth: 'eni6',
          containerIf: 'eth0',
          netnsPath: '/p6',
          mtu: 1500,
          eniTable: 254,
        },
      );
    } catch (error) {
      caught = error;
    }
    expect(isRoutingError(caught, 'TIMEOUT')).toBe(true);
    expect(slept).toBe(200);
    expect(pod.sysctls.get('net/ipv6/conf/eth0/disable_ipv6')).toBe('0');
  });
});
