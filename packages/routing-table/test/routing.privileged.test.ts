import { randomBytes } from 'node:crypto';
import { openSync } from '@vpc-cni-kit/netlink';
import {
  askPeer,
  createNamespaces,
  describePrivileged,
  inNs,
  startPeerReporter,
  uniqueName,
} from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  hostVethName,
  MAIN_TABLE,
  netlinkPortFactory,
  netlinkRoutingPort,
  type PodRouteInput,
  planNodeRouting,
  type RoutingPlan,
  type RoutingPort,
  type RuleSpec,
  reconcileRouting,
  setupPodNetwork,
  teardownRouting,
  verifyRouting,
} from '../src/index.js';

/** rx packet count of a link, via ip -s (nsenter does not remount /sys). */
function rxPackets(ns: string, dev: string): number {
  const lines = inNs(ns, 'ip', '-s', 'link', 'show', 'dev', dev).split('\n');
  const i = lines.findIndex((l) => l.trim().startsWith('RX:'));
  return Number(lines[i + 1]!.trim().split(/\s+/)[1]);
}

const OWNED = [512, 1024, 1535, 1536, 32765];

/** A rule as `ip rule show` prints it (written independently of the package's own rendering). */
function iproute2Rule(r: RuleSpec): string {
  const host = (p: string) => p.replace(/\/32$/, '');
  let text = `${r.priority}:\tfrom ${r.from ? host(r.from) : 'all'}`;
  if (r.to) text += ` to ${host(r.to)}`;
  if (r.fwmark !== undefined)
    text += ` fwmark 0x${r.fwmark.toString(16)}/0x${(r.fwmask ?? 0xffffffff).toString(16)}`;
  if (r.iif) text += ` iif ${r.iif}`;
  return `${text} lookup ${r.table === MAIN_TABLE ? 'main' : r.table}`;
}

function ownedRuleLines(ns: string): string[] {
  return inNs(ns, 'ip', '-4', 'rule', 'show')
    .split('\n')
    .filter((l) => OWNED.includes(Number(l.split(':')[0])))
    .map((l) => l.trimEnd())
    .sort();
}

/** Routes we own as `ip route show` prints them: the ENI table and the main-table pod routes. */
function ownedRouteLines(ns: string, table: number): string[] {
  const eni = inNs(ns, 'ip', '-4', 'route', 'show', 'table', String(table)).split('\n').filter(Boolean);
  const pods = inNs(ns, 'ip', '-4', 'route', 'show', 'table', 'main')
    .split('\n')
    .filter((l) => / dev eni/.test(l));
  return [...eni.map((l) => `${table}: ${l.trim()}`), ...pods.map((l) => `main: ${l.trim()}`)].sort();
}

function plannedRouteLines(plan: RoutingPlan): string[] {
  return plan.routes
    .map((r) => {
      const dst = r.dst === '0.0.0.0/0' ? 'default' : r.dst.replace(/\/32$/, '');
      const via = r.gateway ? ` via ${r.gateway}` : '';
      const scope = r.scope === 'link' ? ' scope link' : '';
      return `${r.table === MAIN_TABLE ? 'main' : r.table}: ${dst}${via} dev ${r.dev}${scope}`;
    })
    .sort();
}

describePrivileged('routing-table on a real kernel', () => {
  const node = uniqueName('vckrn');
  const vpc = uniqueName('vckrv');
  const pods = [uniqueName('vckr0'), uniqueName('vckr1'), uniqueName('vckr2')];
  let cleanup = () => {};
  let stopReporter = () => {};
  let host: RoutingPort;
  let closeHost = () => {};
  const port = 18081;
  const podInputs: (PodRouteInput & { ns: string })[] = [];

  const plan = (extraPods: PodRouteInput[] = []) =>
    planNodeRouting({
      enis: [
        {
          interfaceName: 'eth1',
          deviceNumber: 1,
          primaryIp: '10.0.1.10',
          subnetCidr: '10.0.1.0/24',
          mtu: 1500,
        },
      ],
      pods: [...podInputs, ...extraPods].map(({ podIp, hostVeth, table }) => ({ podIp, hostVeth, table })),
      fwmark: 0x80,
      externalServiceCidrs: ['172.20.0.0/16'],
    });

  beforeAll(async () => {
    cleanup = createNamespaces([node, vpc, ...pods]);
    // The node's two ENIs are veths into a "VPC" namespace that routes between them.
    inNs(node, 'ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'to-eth0', 'netns', vpc);
    inNs(node, 'ip', 'link', 'add', 'eth1', 'type', 'veth', 'peer', 'name', 'to-eth1', 'netns', vpc);
    inNs(node, 'ip', 'addr', 'add', '10.0.0.9/24', 'dev', 'eth0');
    inNs(node, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(node, 'ip', 'route', 'add', 'default', 'via', '10.0.0.1');
    inNs(
      node,
      'sysctl',
      '-qw',
      'net.ipv4.ip_forward=1',
      'net.ipv4.conf.all.rp_filter=0',
      'net.ipv4.conf.default.rp_filter=0',
    );
    inNs(vpc, 'ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'to-eth0');
    inNs(vpc, 'ip', 'addr', 'add', '10.0.1.1/24', 'dev', 'to-eth1');
    inNs(vpc, 'ip', 'addr', 'add', '10.0.2.1/32', 'dev', 'lo');
    inNs(vpc, 'ip', 'link', 'set', 'to-eth0', 'up');
    inNs(vpc, 'ip', 'link', 'set', 'to-eth1', 'up');
    // Like source/destination check: a pod address is only accepted on its own ENI's link.
    inNs(
      vpc,
      'sysctl',
      '-qw',
      'net.ipv4.conf.all.rp_filter=1',
      'net.ipv4.conf.to-eth0.rp_filter=1',
      'net.ipv4.conf.to-eth1.rp_filter=1',
    );

    const handle = openSync({ netns: `/var/run/netns/${node}` });
    host = netlinkRoutingPort(handle);
    closeHost = () => handle.close();
    const specs = [
      { podIp: '10.0.0.20', table: MAIN_TABLE, via: '10.0.0.9', link: 'to-eth0' },
      { podIp: '10.0.1.20', table: 2, via: '10.0.1.10', link: 'to-eth1' },
      { podIp: '10.0.1.21', table: 2, via: '10.0.1.10', link: 'to-eth1' },
    ];
    for (const [i, s] of specs.entries()) {
      const hostVeth = hostVethName('eni', 'default', `pod-${i}`);
      podInputs.push({ podIp: s.podIp, hostVeth, table: s.table, ns: pods[i]! });
      inNs(vpc, 'ip', 'route', 'add', `${s.podIp}/32`, 'via', s.via, 'dev', s.link);
    }
    stopReporter = await startPeerReporter(vpc, port);
  });

  afterAll(() => {
    stopReporter();
    closeHost();
    cleanup();
  });

  it('sets up pods through the real applier: veth in the pod namespace, /32, gateway neighbour, host routes', async () => {
    for (const [i, p] of podInputs.entries()) {
      // Both ways of picking the MAC: checked against the host's links, and random without the link dump.
      const applied = await setupPodNetwork(
        {
          host,
          namespaces: netlinkPortFactory({ sync: true }),
          random: (n) => randomBytes(n),
          uniqueMac: i % 2 === 0,
        },
        {
          podIp: p.podIp,
          hostVeth: p.hostVeth,
          containerIf: 'eth0',
          netnsPath: `/var/run/netns/${p.ns}`,
          mtu: 1400,
          eniTable: p.table,
        },
      );
      await verifyRouting(host, applied.host);
      const mac = /link\/ether (\S+)/.exec(inNs(node, 'ip', '-o', 'link', 'show', 'dev', p.hostVeth))![1]!;
      expect(Number.parseInt(mac.slice(0, 2), 16) & 0x03).toBe(0x02);
      expect(inNs(p.ns, 'ip', '-4', 'neigh', 'show', 'dev', 'eth0')).toContain(
        `169.254.1.1 lladdr ${mac} PERMANENT`,
      );
      expect(inNs(p.ns, 'ip', '-4', 'route', 'show')).toBe(
        'default via 169.254.1.1 dev eth0 \n169.254.1.1 dev eth0 scope link \n',
      );
      expect(inNs(p.ns, 'ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0')).toContain(`inet ${p.podIp}/32`);
      expect(inNs(p.ns, 'ip', '-o', 'link', 'show', 'dev', 'eth0')).toContain('mtu 1400');
      expect(inNs(node, 'sysctl', '-n', `net.ipv6.conf.${p.hostVeth}.accept_redirects`).trim()).toBe('1');
    }
    // ADD again for a plumbed pod without the link dump: the leftover veth is deleted by name and recreated.
    const p = podInputs[1]!;
    const hostMac = () =>
      /link\/ether (\S+)/.exec(inNs(node, 'ip', '-o', 'link', 'show', 'dev', p.hostVeth))![1]!;
    const random = () =>
      Uint8Array.from([0x02, 0x42, 0x42, 0x42, 0x42, hostMac().endsWith('42') ? 0x43 : 0x42]);
    const again = await setupPodNetwork(
      { host, namespaces: netlinkPortFactory({ sync: true }), random, uniqueMac: false },
      {
        podIp: p.podIp,
        hostVeth: p.hostVeth,
        containerIf: 'eth0',
        netnsPath: `/var/run/netns/${p.ns}`,
        mtu: 1400,
        eniTable: p.table,
      },
    );
    expect(hostMac()).toBe(again.veth.mac);
    expect(inNs(p.ns, 'ip', '-4', 'neigh', 'show', 'dev', 'eth0')).toContain(
      `lladdr ${again.veth.mac} PERMANENT`,
    );
    await verifyRouting(host, again.host);
  });

  it('reconcile makes ip rule / ip route show exactly the plan, and a second run changes nothing', async () => {
    const p = plan();
    const first = await reconcileRouting(host, p);
    expect(first.changes).toBeGreaterThan(0);
    expect(ownedRuleLines(node)).toEqual(p.rules.map(iproute2Rule).sort());
    expect(ownedRouteLines(node, 2)).toEqual(plannedRouteLines(p));
    expect(inNs(node, 'ip', '-4', 'route', 'show', 'table', 'main')).not.toContain('10.0.1.0/24');
    expect(inNs(node, 'ip', '-4', '-o', 'addr', 'show', 'dev', 'eth1')).toContain('inet 10.0.1.10/24');
    const second = await reconcileRouting(host, p);
    expect(second.changes).toBe(0);
    await verifyRouting(host, p, true);
  });

  it('packets: a primary-ENI pod leaves by eth0, a secondary-ENI pod by its own table and eth1; replies return', async () => {
    expect(askPeer(podInputs[0]!.ns, '10.0.2.1', port)).toBe('10.0.0.20');
    expect(askPeer(podInputs[1]!.ns, '10.0.2.1', port)).toBe('10.0.1.20');
    const before = rxPackets(vpc, 'to-eth1');
    expect(askPeer(podInputs[2]!.ns, '10.0.2.1', port)).toBe('10.0.1.21');
    expect(rxPackets(vpc, 'to-eth1')).toBeGreaterThan(before);
    // Without its from-pod rule the secondary pod's packets take main (eth0) and the VPC drops them.
    inNs(node, 'ip', 'rule', 'del', 'from', '10.0.1.21', 'lookup', '2', 'pref', '1536');
    expect(() => askPeer(podInputs[2]!.ns, '10.0.2.1', port)).toThrow();
    await reconcileRouting(host, plan());
    expect(askPeer(podInputs[2]!.ns, '10.0.2.1', port)).toBe('10.0.1.21');
  });

  it('removes injected stale rules and routes; teardown leaves nothing of ours', async () => {
    inNs(node, 'ip', 'rule', 'add', 'to', '10.0.1.99', 'lookup', 'main', 'pref', '512');
    inNs(node, 'ip', 'rule', 'add', 'from', '10.0.1.99', 'lookup', '2', 'pref', '1536');
    inNs(node, 'ip', 'route', 'add', '10.0.1.99/32', 'dev', podInputs[1]!.hostVeth, 'scope', 'link');
    inNs(node, 'ip', 'route', 'add', '10.9.0.0/16', 'via', '10.0.1.1', 'dev', 'eth1', 'table', '2');
    inNs(node, 'ip', 'rule', 'add', 'to', '192.0.2.1', 'lookup', 'main', 'pref', '600'); // not ours
    const p = plan();
    const result = await reconcileRouting(host, p);
    expect(result.diff.removeRules.length).toBe(2);
    expect(result.diff.removeRoutes.length).toBe(2);
    expect(ownedRuleLines(node)).toEqual(p.rules.map(iproute2Rule).sort());
    expect(ownedRouteLines(node, 2)).toEqual(plannedRouteLines(p));
    expect(inNs(node, 'ip', 'rule', 'show')).toContain('600:\tfrom all to 192.0.2.1 lookup main');

    await teardownRouting(host, p);
    await teardownRouting(host, p);
    expect(ownedRuleLines(node)).toEqual([]);
    expect(inNs(node, 'ip', '-4', 'route', 'show', 'table', '2')).toBe('');
    expect(inNs(node, 'ip', '-4', 'route', 'show', 'table', 'main')).not.toMatch(/dev eni/);
  });
});
