import { randomBytes } from 'node:crypto';
import { type NetlinkHandleSync, openSync } from '@vpc-cni-kit/netlink';
import {
  branchHostVethName,
  netlinkPortFactory,
  netlinkRoutingPort,
  type RoutingPort,
} from '@vpc-cni-kit/routing-table';
import { createNamespaces, describePrivileged, inNs, uniqueName } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  applyBranchNode,
  type BranchEni,
  type BranchNetworkPlan,
  type EnforcingMode,
  netlinkBranchLinkPort,
  planBranchNetwork,
  planBranchNode,
  setupBranchPod,
  teardownBranchNetwork,
} from '../src/index.js';

// Two branch pods on one node. Strict mode: their traffic to each other leaves through the branch links and
// crosses the "VPC" (a router namespace that forwards between branches by MAC, as ADR 0006's does), so its
// forward counter moves. Standard mode: it stays on the node and the router counts nothing.
const branches: BranchEni[] = [
  { eniId: 'eni-b5', mac: '0a:b0:00:00:00:05', ipv4: '10.0.0.9', subnetCidr: '10.0.0.0/24', vlanId: 5 },
  { eniId: 'eni-b6', mac: '0a:b0:00:00:00:06', ipv4: '10.0.0.10', subnetCidr: '10.0.0.0/24', vlanId: 6 },
];

describePrivileged('strict and standard mode between two branch pods on one node', () => {
  const node = uniqueName('vcksm');
  const router = uniqueName('vcksv');
  let cleanup = () => {};
  let handle: NetlinkHandleSync;
  let host: RoutingPort;

  /** ICMP packets the router forwarded (an nft counter in its forward hook). */
  const forwarded = (): number => {
    const out = inNs(router, 'nft', 'list', 'chain', 'ip', 'vckvpc', 'relay');
    return Number(/counter packets (\d+)/.exec(out)![1]);
  };

  beforeAll(() => {
    cleanup = createNamespaces([node, router]);
    inNs(node, 'ip', 'link', 'add', 'trunk0', 'type', 'veth', 'peer', 'name', 'vpc0', 'netns', router);
    inNs(node, 'ip', 'link', 'set', 'trunk0', 'up');
    inNs(node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    inNs(
      router,
      'sysctl',
      '-qw',
      'net.ipv4.ip_forward=1',
      'net.ipv4.conf.all.send_redirects=0',
      'net.ipv4.conf.default.send_redirects=0',
    );
    inNs(router, 'ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'vpc0');
    inNs(router, 'ip', 'link', 'set', 'vpc0', 'up');
    inNs(router, 'sysctl', '-qw', 'net.ipv4.conf.vpc0.send_redirects=0');
    for (const b of branches)
      inNs(router, 'ip', 'neigh', 'replace', b.ipv4!, 'lladdr', b.mac, 'dev', 'vpc0', 'nud', 'permanent');
    inNs(
      router,
      'nft',
      'add table ip vckvpc; add chain ip vckvpc relay { type filter hook forward priority 0 ; }; add rule ip vckvpc relay ip protocol icmp counter',
    );
    handle = openSync({ netns: `/var/run/netns/${node}` });
    host = netlinkRoutingPort(handle);
  });

  afterAll(() => {
    handle?.close();
    cleanup();
  });

  for (const mode of ['strict', 'standard'] as EnforcingMode[]) {
    it(`${mode}: pod-to-pod traffic ${mode === 'strict' ? 'crosses the VPC' : 'stays on the node'}`, async () => {
      const pods = [uniqueName('vcksa'), uniqueName('vcksb')];
      const dropPods = createNamespaces(pods);
      const plans: BranchNetworkPlan[] = branches.map((branch, i) =>
        planBranchNetwork({
          branch,
          trunkInterface: 'trunk0',
          hostVeth: branchHostVethName(mode, 'eni', 'default', `pod-${mode}-${i}`),
          mode,
          linkKind: 'macvlan',
        }),
      );
      try {
        await applyBranchNode(host, planBranchNode({ disableTcpEarlyDemux: mode === 'strict', mode }));
        for (const [i, plan] of plans.entries()) {
          await setupBranchPod(
            {
              host,
              links: netlinkBranchLinkPort(handle),
              namespaces: netlinkPortFactory({ sync: true }),
              random: randomBytes,
              uniqueMac: false,
            },
            { containerIf: 'eth0', netnsPath: `/var/run/netns/${pods[i]}`, mtu: 1500 },
            plan,
          );
        }
        const before = forwarded();
        inNs(pods[0]!, 'ping', '-c', '3', '-i', '0.2', '-W', '2', '10.0.0.10');
        const crossed = forwarded() - before;
        // 3 requests and 3 replies through the router in strict mode; none in standard mode.
        if (mode === 'strict') expect(crossed).toBeGreaterThanOrEqual(6);
        else expect(crossed).toBe(0);
      } finally {
        for (const plan of plans)
          await teardownBranchNetwork(host, plan, { deleteVeth: true }).catch(() => undefined);
        await applyBranchNode(host, planBranchNode({ disableTcpEarlyDemux: false, mode: 'standard' }));
        dropPods();
      }
    });
  }
});
