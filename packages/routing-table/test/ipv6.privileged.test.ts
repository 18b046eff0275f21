import { randomBytes } from 'node:crypto';
import { openSync } from '@vpc-cni-kit/netlink';
import { createNamespaces, describePrivileged, inNs, uniqueName } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  hostVethName,
  netlinkPortFactory,
  netlinkRoutingPort,
  type RoutingPort,
  setupPodNetwork,
  teardownPodNetwork,
  verifyRouting,
} from '../src/index.js';

describePrivileged('routing-table: an IPv6 pod on a real kernel', () => {
  const node = uniqueName('vckr6n');
  const pod = uniqueName('vckr6p');
  let cleanup = () => {};
  let host: RoutingPort;
  let closeHost = () => {};

  beforeAll(() => {
    cleanup = createNamespaces([node, pod]);
    const handle = openSync({ netns: `/var/run/netns/${node}` });
    host = netlinkRoutingPort(handle);
    closeHost = () => handle.close();
  });
  afterAll(() => {
    closeHost();
    cleanup();
  });

  it('plumbs /128, fe80::1 routes and neighbour, waits out DAD, and the pod reaches the host over it', async () => {
    const hostVeth = hostVethName('eni', 'default', 'v6-pod');
    const plan = await setupPodNetwork(
      { host, namespaces: netlinkPortFactory(), random: (n) => randomBytes(n) },
      {
        podIp: '2600:1f14:0:1::20',
        hostVeth,
        containerIf: 'eth0',
        netnsPath: `/var/run/netns/${pod}`,
        mtu: 1500,
        eniTable: 254,
      },
    );
    expect(plan.gateway).toBe('fe80::1');
    const addr = inNs(pod, 'ip', '-6', '-o', 'addr', 'show', 'dev', 'eth0', 'scope', 'global');
    expect(addr).toContain('inet6 2600:1f14:0:1::20/128');
    expect(addr).not.toContain('tentative');
    expect(inNs(pod, 'ip', '-6', 'route', 'show')).toContain('default via fe80::1 dev eth0');
    expect(inNs(pod, 'ip', '-6', 'neigh', 'show', 'dev', 'eth0')).toMatch(/fe80::1 lladdr \S+ PERMANENT/);
    expect(inNs(node, 'ip', '-6', 'rule', 'show')).toContain(
      '512:\tfrom all to 2600:1f14:0:1::20 lookup main',
    );
    expect(inNs(node, 'sysctl', '-n', `net.ipv6.conf.${hostVeth}.accept_ra`).trim()).toBe('0');
    expect(inNs(node, 'sysctl', '-n', `net.ipv6.conf.${hostVeth}.forwarding`).trim()).toBe('0');
    await verifyRouting(host, plan.host);
    // Traffic from the pod to a node address goes through the default route and the static neighbour (no
    // one answers neighbour discovery for fe80::1), and the reply finds the pod by its /128 host route.
    inNs(node, 'ip', '-6', 'addr', 'add', '2600:1f14:0:2::1/128', 'dev', 'lo', 'nodad');
    expect(inNs(pod, 'ping', '-6', '-c', '1', '-W', '2', '2600:1f14:0:2::1')).toContain('1 received');
    await teardownPodNetwork(host, { podIp: '2600:1f14:0:1::20', hostVeth, eniTable: 254, deleteVeth: true });
    await teardownPodNetwork(host, { podIp: '2600:1f14:0:1::20', hostVeth, eniTable: 254, deleteVeth: true });
    expect(inNs(node, 'ip', '-6', 'rule', 'show')).not.toContain('2600:1f14:0:1::20');
    expect(inNs(node, 'ip', 'link', 'show')).not.toContain(hostVeth);
  });

  it('without duplicate-address detection: no wait, no tentative address, link-local included', async () => {
    const hostVeth = hostVethName('eni', 'default', 'v6-nodad');
    const other = uniqueName('vckr6q');
    const drop = createNamespaces([other]);
    try {
      let slept = 0;
      const started = performance.now();
      await setupPodNetwork(
        {
          host,
          namespaces: netlinkPortFactory(),
          random: (n) => randomBytes(n),
          sleep: async (ms) => {
            slept += ms;
            await new Promise((r) => setTimeout(r, ms));
          },
        },
        {
          podIp: '2600:1f14:0:1::21',
          hostVeth,
          containerIf: 'eth0',
          netnsPath: `/var/run/netns/${other}`,
          mtu: 1500,
          eniTable: 254,
          duplicateAddressDetection: false,
        },
      );
      const elapsed = performance.now() - started;
      // A few 2 ms polls at most: the kernel clears the tentative flag from a work item right after the address is made.
      expect(slept).toBeLessThanOrEqual(10);
      expect(elapsed).toBeLessThan(1000);
      expect(inNs(other, 'sysctl', '-n', 'net.ipv6.conf.eth0.accept_dad').trim()).toBe('0');
      const all = inNs(other, 'ip', '-6', '-o', 'addr', 'show', 'dev', 'eth0');
      expect(all).toContain('inet6 2600:1f14:0:1::21/128');
      expect(all).toContain('inet6 fe80::');
      expect(all).not.toContain('tentative');
      inNs(node, 'ip', '-6', 'addr', 'add', '2600:1f14:0:2::2/128', 'dev', 'lo', 'nodad');
      const out = inNs(other, 'ping', '-6', '-c', '1', '-W', '2', '2600:1f14:0:2::2');
      expect(out).toContain('1 received');
      // The first reply came at once: the host end needed no DAD wait to find the pod either.
      expect(Number(/time=([\d.]+) ms/.exec(out)?.[1])).toBeLessThan(500);
      expect(inNs(node, 'sysctl', '-n', `net.ipv6.conf.${hostVeth}.accept_dad`).trim()).toBe('0');
    } finally {
      await teardownPodNetwork(host, {
        podIp: '2600:1f14:0:1::21',
        hostVeth,
        eniTable: 254,
        deleteVeth: true,
      });
      drop();
    }
  });
});
