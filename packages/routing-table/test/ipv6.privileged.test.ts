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
});
