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
  type BranchLinkPort,
  type BranchNetworkPlan,
  type EnforcingMode,
  isSgpError,
  netlinkBranchLinkPort,
  planBranchNetwork,
  planBranchNode,
  setupBranchPod,
  teardownBranchNetwork,
} from '../src/index.js';

// A node namespace with a trunk link (a veth whose far end is in a "router" namespace holding the subnet
// gateway), a pod namespace, and the branch plumbed as the virtual VPC carries it: a macvlan with the branch MAC
// on the trunk (this kernel has no 802.1Q). The router knows the branch address by its MAC, as ADR 0006's does.
const BRANCH_MAC = '0a:b0:00:00:00:05';
const branch: BranchEni = {
  eniId: 'eni-b5',
  mac: BRANCH_MAC,
  ipv4: '10.0.0.9',
  subnetCidr: '10.0.0.0/24',
  vlanId: 5,
};

/** Routing objects of the node as iproute2 prints them (independent of the package's own rendering). */
function nodeView(ns: string): { rules: string[]; table: string[]; main: string[]; links: string[] } {
  const lines = (text: string) =>
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  return {
    rules: lines(inNs(ns, 'ip', '-4', 'rule', 'show')).filter((l) => /^(10|512|1536):/.test(l)),
    table: lines(inNs(ns, 'ip', '-4', 'route', 'show', 'table', '105')),
    main: lines(inNs(ns, 'ip', '-4', 'route', 'show', 'table', 'main')).filter((l) =>
      l.startsWith('10.0.0.9'),
    ),
    links: lines(inNs(ns, 'ip', '-o', 'link', 'show')).filter(
      (l) => l.includes('vlan.eth.') || /: (vlan|eni)[0-9a-f]{11}@/.test(l),
    ),
  };
}

/** rx packet count of a link, via ip -s (nsenter does not remount /sys). */
function rxPackets(ns: string, dev: string): number {
  const lines = inNs(ns, 'ip', '-s', 'link', 'show', 'dev', dev).split('\n');
  const i = lines.findIndex((l) => l.trim().startsWith('RX:'));
  return Number(lines[i + 1]!.trim().split(/\s+/)[1]);
}

describePrivileged('branch pod network on a real kernel (macvlan branch link)', () => {
  const node = uniqueName('vcksn');
  const router = uniqueName('vcksr');
  let cleanup = () => {};
  let handle: NetlinkHandleSync;
  let host: RoutingPort;
  let links: BranchLinkPort;

  beforeAll(() => {
    cleanup = createNamespaces([node, router]);
    inNs(node, 'ip', 'link', 'add', 'trunk0', 'type', 'veth', 'peer', 'name', 'vpc0', 'netns', router);
    inNs(node, 'ip', 'link', 'set', 'trunk0', 'up');
    inNs(node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    inNs(router, 'ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'vpc0');
    inNs(router, 'ip', 'link', 'set', 'vpc0', 'up');
    inNs(
      router,
      'ip',
      'neigh',
      'replace',
      '10.0.0.9',
      'lladdr',
      BRANCH_MAC,
      'dev',
      'vpc0',
      'nud',
      'permanent',
    );
    handle = openSync({ netns: `/var/run/netns/${node}` });
    host = netlinkRoutingPort(handle);
    links = netlinkBranchLinkPort(handle);
  });

  /** Plumbs a branch pod in namespace `pod` as the daemon would. */
  const plumb = (pod: string, plan: BranchNetworkPlan) =>
    setupBranchPod(
      { host, links, namespaces: netlinkPortFactory({ sync: true }), random: randomBytes, uniqueMac: false },
      { containerIf: 'eth0', netnsPath: `/var/run/netns/${pod}`, mtu: 1500 },
      plan,
    );

  afterAll(() => {
    handle?.close();
    cleanup();
  });

  for (const mode of ['strict', 'standard'] as EnforcingMode[]) {
    it(`${mode}: plumbs the pod, it reaches the subnet gateway through the branch link, teardown is idempotent`, async () => {
      const pod = uniqueName('vcksp');
      const dropPod = createNamespaces([pod]);
      const hostVeth = branchHostVethName(mode, 'eni', 'default', `db-${mode}`);
      const plan = planBranchNetwork({
        branch,
        trunkInterface: 'trunk0',
        hostVeth,
        mode,
        linkKind: 'macvlan',
      });
      try {
        await plumb(pod, plan);
        // Running it again (a retried ADD) converges on the same state.
        await plumb(pod, plan);

        const view = nodeView(node);
        const link = inNs(node, 'ip', '-d', 'link', 'show', 'vlan.eth.5');
        expect(link).toContain(`link/ether ${BRANCH_MAC}`);
        expect(link).toMatch(/macvlan mode vepa/);
        expect(link).toContain('vlan.eth.5@trunk0');
        expect(view.table.sort()).toEqual(
          [
            'default via 10.0.0.1 dev vlan.eth.5',
            '10.0.0.1 dev vlan.eth.5 scope link',
            ...(mode === 'strict' ? [`10.0.0.9 dev ${hostVeth} scope link`] : []),
          ].sort(),
        );
        if (mode === 'strict') {
          expect(hostVeth.startsWith('vlan')).toBe(true);
          expect(view.rules.sort()).toEqual(
            [`10:\tfrom all iif ${hostVeth} lookup 105`, '10:\tfrom all iif vlan.eth.5 lookup 105'].sort(),
          );
          expect(view.main).toEqual([]);
        } else {
          expect(view.rules.sort()).toEqual(
            ['1536:\tfrom 10.0.0.9 lookup 105', '512:\tfrom all to 10.0.0.9 lookup main'].sort(),
          );
          expect(view.main).toEqual([`10.0.0.9 dev ${hostVeth} scope link`]);
        }
        expect(inNs(node, 'sysctl', '-n', 'net.ipv6.conf.vlan/eth/5.accept_ra').trim()).toBe('0');

        // Packets: the pod's ping leaves through the branch link with the branch MAC and comes back the same way.
        const rxBefore = rxPackets(node, 'vlan.eth.5');
        expect(() => inNs(pod, 'ping', '-c', '1', '-W', '2', '10.0.0.1')).not.toThrow();
        expect(inNs(router, 'ip', 'neigh', 'show', '10.0.0.9')).toContain(BRANCH_MAC);
        expect(rxPackets(node, 'vlan.eth.5')).toBeGreaterThan(rxBefore);

        await teardownBranchNetwork(host, plan, { deleteVeth: true });
        const gone = nodeView(node);
        expect(gone).toEqual({ rules: [], table: [], main: [], links: [] });
        await teardownBranchNetwork(host, plan, { deleteVeth: true });
        expect(nodeView(node)).toEqual(gone);
      } finally {
        await teardownBranchNetwork(host, plan, { deleteVeth: true }).catch(() => undefined);
        dropPod();
      }
    });
  }

  it('an 802.1Q branch link fails closed on this kernel: typed KERNEL error, nothing left behind', async () => {
    const pod = uniqueName('vcksq');
    const dropPod = createNamespaces([pod]);
    try {
      const plan = planBranchNetwork({
        branch,
        trunkInterface: 'trunk0',
        hostVeth: 'vlanq0000000000',
        mode: 'strict',
      });
      const error = await plumb(pod, plan).catch((e: unknown) => e);
      expect(isSgpError(error, 'KERNEL')).toBe(true);
      expect(nodeView(node)).toEqual({ rules: [], table: [], main: [], links: [] });
    } finally {
      dropPod();
    }
  });

  it('a missing trunk link is TRUNK_LINK_NOT_FOUND', async () => {
    const plan = planBranchNetwork({
      branch,
      trunkInterface: 'nosuchtrunk',
      hostVeth: 'vlanq',
      mode: 'strict',
      linkKind: 'macvlan',
    });
    const error = await links.addBranchLink(plan.link).catch((e: unknown) => e);
    expect(isSgpError(error, 'TRUNK_LINK_NOT_FOUND')).toBe(true);
  });

  it('applies the node plan: tcp_early_demux and the local rule at 20 (strict) or 0 (standard), idempotently', async () => {
    const localRules = () =>
      inNs(node, 'ip', '-4', 'rule', 'show')
        .split('\n')
        .filter((l) => l.endsWith('lookup local'))
        .map((l) => l.trim());
    try {
      await applyBranchNode(host, planBranchNode({ disableTcpEarlyDemux: true, mode: 'strict' }));
      await applyBranchNode(host, planBranchNode({ disableTcpEarlyDemux: true, mode: 'strict' }));
      expect(inNs(node, 'sysctl', '-n', 'net.ipv4.tcp_early_demux').trim()).toBe('0');
      expect(localRules()).toEqual(['20:\tfrom all lookup local']);
    } finally {
      await applyBranchNode(host, planBranchNode({ disableTcpEarlyDemux: false, mode: 'standard' }));
    }
    expect(inNs(node, 'sysctl', '-n', 'net.ipv4.tcp_early_demux').trim()).toBe('1');
    expect(localRules()).toEqual(['0:\tfrom all lookup local']);
  });
});
