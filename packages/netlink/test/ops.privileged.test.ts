import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync as openSync_, readlinkSync } from 'node:fs';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isNetlinkError, type NetlinkHandleSync, openSync } from '../src/index.js';
import { type Scratch, scratchNamespaces } from './ns.js';

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isNetlinkError(e)) return e.code;
    throw e;
  }
  return 'none';
}

describePrivileged('netlink operations round-trip in fresh namespaces (sync handle)', () => {
  let ns: Scratch;
  let h: NetlinkHandleSync;
  let peer: NetlinkHandleSync;

  beforeAll(() => {
    ns = scratchNamespaces(2);
    h = openSync({ netns: ns.paths[0]! });
    peer = openSync({ netns: ns.paths[1]! });
    h.linkSet('lo', { up: true });
  });

  afterAll(() => {
    h?.close();
    peer?.close();
    expect(ns.remove()).toEqual([]);
  });

  it('links: bridge add, set (mtu, mac, rename, up), enslave, release, del', () => {
    h.linkAdd({ kind: 'bridge', name: 'br0', mtu: 1400 });
    expect(h.linkList({ kind: 'bridge' }).map((l) => l.name)).toEqual(['br0']);
    h.linkSet('br0', { mtu: 1300, address: '02:00:00:00:01:01', name: 'br1', up: true });
    const br = h.linkGet('br1');
    expect(br).toMatchObject({ kind: 'bridge', mtu: 1300, address: '02:00:00:00:01:01', up: true });
    expect(codeOf(() => h.linkGet('br0'))).toBe('ENODEV');
    h.linkAdd({ kind: 'veth', name: 'bv0', peer: { name: 'bv1' }, master: 'br1' });
    expect(h.linkGet('bv0').master).toBe(br.index);
    expect(h.linkList({ master: br.index }).map((l) => l.name)).toEqual(['bv0']);
    h.linkSet('bv0', { master: null });
    expect(h.linkGet('bv0').master).toBeUndefined();
    h.linkDel('bv0');
    h.linkDel(br.index);
    expect(codeOf(() => h.linkGet('br1'))).toBe('ENODEV');
    expect(codeOf(() => h.linkGet('bv1'))).toBe('ENODEV');
    expect(codeOf(() => h.linkDel('br1'))).toBe('ENODEV');
    // By name without a rename, the kernel finds the link itself: a missing one is ENODEV, nothing is made.
    expect(codeOf(() => h.linkSet('br1', { up: true }))).toBe('ENODEV');
    expect(codeOf(() => h.linkSet('br1', { mtu: 1300, name: 'br2' }))).toBe('ENODEV');
    expect(h.linkList().map((l) => l.name)).toEqual(['lo']);
  });

  it('links: set by name changes only that link (mtu, mac, down/up), whatever its index', () => {
    h.linkAdd({ kind: 'veth', name: 'sa0', peer: { name: 'sa1' } });
    const before = h.linkGet('sa1');
    h.linkSet('sa0', { mtu: 1280, address: '02:00:00:00:02:02', up: true });
    expect(h.linkGet('sa0')).toMatchObject({ mtu: 1280, address: '02:00:00:00:02:02', up: true });
    expect(h.linkGet('sa1')).toMatchObject({ mtu: before.mtu, address: before.address, up: false });
    h.linkSet('sa0', { up: false });
    expect(h.linkGet('sa0').up).toBe(false);
    h.linkDel('sa0');
    expect(codeOf(() => h.linkGet('sa1'))).toBe('ENODEV');
  });

  it('links: veth with the peer created directly in another namespace, then a move', () => {
    h.linkAdd({ kind: 'veth', name: 'hv0', up: true, peer: { name: 'pv0', netns: ns.paths[1]! } });
    const host = h.linkGet('hv0');
    expect(host).toMatchObject({ kind: 'veth', up: true });
    expect(host.linkNetnsId).toBeGreaterThanOrEqual(0);
    expect(codeOf(() => h.linkGet('pv0'))).toBe('ENODEV');
    expect(peer.linkGet('pv0')).toMatchObject({ kind: 'veth', up: false, parentIndex: host.index });
    expect(codeOf(() => h.linkAdd({ kind: 'bridge', name: 'hv0' }))).toBe('EEXIST');
    h.linkSet('hv0', { netns: ns.paths[1]! });
    expect(codeOf(() => h.linkGet('hv0'))).toBe('ENODEV');
    expect(
      peer
        .linkList({ kind: 'veth' })
        .map((l) => l.name)
        .sort(),
    ).toEqual(['hv0', 'pv0']);
    peer.linkDel('hv0');
    expect(peer.linkList({ kind: 'veth' })).toEqual([]);
  });

  it('links: move by process id (IFLA_NET_NS_PID) and by open fd (IFLA_NET_NS_FD)', () => {
    const sleeper = spawn('ip', ['netns', 'exec', ns.names[1]!, 'sleep', '30'], { stdio: 'ignore' });
    try {
      // `ip netns exec` execs the command, so the child's pid ends up in the target namespace.
      for (
        let i = 0;
        i < 200 && readlinkSync(`/proc/${sleeper.pid}/ns/net`) === readlinkSync('/proc/self/ns/net');
        i++
      ) {
        execFileSync('sleep', ['0.01']);
      }
      h.linkAdd({ kind: 'veth', name: 'pid0', peer: { name: 'pid1' } });
      h.linkSet('pid0', { netns: { pid: sleeper.pid! } });
      expect(peer.linkGet('pid0').kind).toBe('veth');
      const fd = openSync_(ns.paths[1]!, 'r');
      try {
        h.linkSet('pid1', { netns: { fd } });
      } finally {
        closeSync(fd);
      }
      expect(peer.linkGet('pid1').kind).toBe('veth');
      peer.linkDel('pid0');
      expect(codeOf(() => peer.linkGet('pid1'))).toBe('ENODEV');
    } finally {
      sleeper.kill();
    }
  });

  it('links: vxlan and macvlan', () => {
    h.linkAdd({ kind: 'veth', name: 'up0', peer: { name: 'up1' } });
    h.linkAdd({
      kind: 'vxlan',
      name: 'vx0',
      vni: 42,
      local: '10.9.0.1',
      port: 4789,
      dev: 'up0',
      learning: false,
    });
    expect(h.linkGet('vx0')).toMatchObject({ kind: 'vxlan', vxlanId: 42 });
    h.linkAdd({ kind: 'macvlan', name: 'mv0', parent: 'up0', mode: 'bridge', address: '02:00:00:00:02:02' });
    expect(h.linkGet('mv0')).toMatchObject({ kind: 'macvlan', address: '02:00:00:00:02:02' });
    h.linkDel('vx0');
    h.linkDel('mv0');
    h.linkDel('up0');
    expect(h.linkList().map((l) => l.name)).toEqual(['lo']);
  });

  it('addresses: add, list, duplicate, del (IPv4 and IPv6)', () => {
    h.linkAdd({ kind: 'veth', name: 'a0', up: true, peer: { name: 'a1' } });
    h.linkSet('a1', { up: true });
    h.addrAdd({ dev: 'a0', address: '10.1.0.5/32' });
    h.addrAdd({ dev: 'a0', address: '10.1.1.5/24', broadcast: '10.1.1.255', label: 'a0:x' });
    h.addrAdd({ dev: 'a0', address: '2001:db8::5/64', nodad: true });
    const list = h.addrList({ dev: 'a0' });
    expect(list.interrupted).toBe(false);
    expect(
      list
        .filter((a) => a.scope === 0)
        .map((a) => a.cidr)
        .sort(),
    ).toEqual(['10.1.0.5/32', '10.1.1.5/24', '2001:db8::5/64'].sort());
    expect(list.find((a) => a.address === '10.1.1.5')).toMatchObject({
      label: 'a0:x',
      broadcast: '10.1.1.255',
    });
    expect(h.addrList({ family: 6, dev: 'a0' }).every((a) => a.family === 6)).toBe(true);
    expect(codeOf(() => h.addrAdd({ dev: 'a0', address: '10.1.0.5/32' }))).toBe('EEXIST');
    h.addrReplace({ dev: 'a0', address: '10.1.0.5/32' });
    for (const a of ['10.1.0.5/32', '10.1.1.5/24', '2001:db8::5/64']) h.addrDel({ dev: 'a0', address: a });
    expect(h.addrList({ dev: 'a0' }).filter((a) => a.scope === 0)).toEqual([]);
    expect(codeOf(() => h.addrDel({ dev: 'a0', address: '10.1.0.5/32' }))).toBe('EADDRNOTAVAIL');
  });

  it('routes: link scope, via gateway, table > 255, onlink, IPv6; replace and del', () => {
    h.addrAdd({ dev: 'a0', address: '10.2.0.1/24' });
    h.addrAdd({ dev: 'a0', address: '2001:db8:2::1/64', nodad: true });
    h.routeAdd({ dst: '169.254.1.1', dev: 'a0', scope: 'link' });
    h.routeAdd({ dst: '10.3.0.0/24', gateway: '10.2.0.2', dev: 'a0', metric: 10 });
    h.routeAdd({ dst: 'default', gateway: '169.254.1.1', dev: 'a0', table: 1000 });
    h.routeAdd({ dst: '10.4.0.0/24', gateway: '192.0.2.9', dev: 'a0', onlink: true });
    h.routeAdd({ dst: '2001:db8:9::/48', gateway: '2001:db8:2::2', dev: 'a0' });
    const main = h.routeList({ family: 4 });
    expect(main.find((r) => r.dst === '169.254.1.1/32')).toMatchObject({ scope: 253, table: 254 });
    expect(main.find((r) => r.dst === '10.3.0.0/24')).toMatchObject({ gateway: '10.2.0.2', priority: 10 });
    expect(main.find((r) => r.dst === '10.4.0.0/24')).toMatchObject({ gateway: '192.0.2.9', onlink: true });
    expect(h.routeList({ table: 1000 })).toEqual([
      expect.objectContaining({ dst: '0.0.0.0/0', gateway: '169.254.1.1', table: 1000 }),
    ]);
    expect(h.routeList({ family: 6 }).find((r) => r.dst === '2001:db8:9::/48')?.gateway).toBe(
      '2001:db8:2::2',
    );
    expect(codeOf(() => h.routeAdd({ dst: '10.3.0.0/24', gateway: '10.2.0.2', dev: 'a0', metric: 10 }))).toBe(
      'EEXIST',
    );
    h.routeReplace({ dst: 'default', gateway: '10.2.0.3', dev: 'a0', table: 1000 });
    expect(h.routeList({ table: 1000 })[0]?.gateway).toBe('10.2.0.3');
    const unreachable = (() => {
      try {
        h.routeAdd({ dst: '10.5.0.0/24', gateway: '198.51.100.1' });
      } catch (e) {
        return e;
      }
    })();
    expect(isNetlinkError(unreachable, 'ENETUNREACH')).toBe(true);
    expect((unreachable as { extack?: string }).extack).toMatch(/gateway/i);
    h.routeDel({ dst: 'default', table: 1000 });
    h.routeDel({ dst: '10.3.0.0/24', metric: 10 });
    h.routeDel({ dst: '10.4.0.0/24' });
    h.routeDel({ dst: '169.254.1.1' });
    h.routeDel({ dst: '2001:db8:9::/48', family: 6 });
    expect(h.routeList({ table: 1000 })).toEqual([]);
    expect(h.routeList({ family: 4 }).map((r) => r.dst)).toEqual(['10.2.0.0/24']);
    expect(codeOf(() => h.routeDel({ dst: '10.3.0.0/24' }))).toBe('ESRCH');
  });

  it('rules: priorities 512/1536, table > 255, fwmark/mask, iif/oif, IPv6; del', () => {
    const before = h.ruleList();
    h.ruleAdd({ to: '10.2.0.9/32', priority: 512, table: 'main' });
    h.ruleAdd({ from: '10.2.0.9/32', priority: 1536, table: 1000 });
    h.ruleAdd({ fwmark: 0x80, fwmask: 0x80, priority: 1024, table: 'main' });
    h.ruleAdd({ iif: 'a0', priority: 100, table: 100 });
    h.ruleAdd({ oif: 'a0', priority: 101, table: 100, invert: true });
    h.ruleAdd({ from: '2001:db8:2::/64', priority: 1536, table: 1000 });
    const v4 = h.ruleList({ family: 4 });
    expect(v4.find((r) => r.priority === 512)).toMatchObject({ to: '10.2.0.9/32', table: 254 });
    expect(v4.find((r) => r.priority === 1536)).toMatchObject({ from: '10.2.0.9/32', table: 1000 });
    expect(v4.find((r) => r.priority === 1024)).toMatchObject({ fwmark: 0x80, fwmask: 0x80 });
    expect(v4.find((r) => r.priority === 100)).toMatchObject({ iif: 'a0', table: 100 });
    expect(v4.find((r) => r.priority === 101)).toMatchObject({ oif: 'a0', invert: true });
    expect(h.ruleList({ family: 6, table: 1000 })).toEqual([
      expect.objectContaining({ from: '2001:db8:2::/64', priority: 1536 }),
    ]);
    expect(codeOf(() => h.ruleAdd({ from: '10.2.0.9/32', priority: 1536, table: 1000 }))).toBe('EEXIST');
    h.ruleDel({ to: '10.2.0.9/32', priority: 512 });
    h.ruleDel({ from: '10.2.0.9/32', priority: 1536, table: 1000 });
    h.ruleDel({ priority: 1024 });
    h.ruleDel({ priority: 100 });
    h.ruleDel({ priority: 101 });
    h.ruleDel({ family: 6, priority: 1536 });
    expect(h.ruleList()).toEqual(before);
    expect(codeOf(() => h.ruleDel({ priority: 1536 }))).toBe('ENOENT');
  });

  it('neighbours: permanent add, list, replace, del (IPv4 and IPv6)', () => {
    h.neighAdd({ dev: 'a0', address: '169.254.1.1', lladdr: '02:00:00:00:00:01' });
    h.neighAdd({ dev: 'a0', address: 'fe80::1', lladdr: '02:00:00:00:00:06' });
    const list = h.neighList({ dev: 'a0' });
    expect(list.find((n) => n.address === '169.254.1.1')).toMatchObject({
      lladdr: '02:00:00:00:00:01',
      state: 0x80,
    });
    expect(list.find((n) => n.address === 'fe80::1')).toMatchObject({ family: 6, state: 0x80 });
    expect(codeOf(() => h.neighAdd({ dev: 'a0', address: '169.254.1.1', lladdr: '02:00:00:00:00:01' }))).toBe(
      'EEXIST',
    );
    h.neighReplace({ dev: 'a0', address: '169.254.1.1', lladdr: '02:00:00:00:00:02' });
    expect(h.neighList({ family: 4, dev: 'a0' }).map((n) => n.lladdr)).toEqual(['02:00:00:00:00:02']);
    h.neighDel({ dev: 'a0', address: '169.254.1.1' });
    h.neighDel({ dev: 'a0', address: 'fe80::1' });
    expect(h.neighList({ dev: 'a0' }).filter((n) => n.state === 0x80)).toEqual([]);
    expect(codeOf(() => h.neighDel({ dev: 'a0', address: '169.254.1.1' }))).toBe('ENOENT');
    h.linkDel('a0');
  });

  it('vlan: encoded like iproute2, created when the kernel has 8021q', (ctx) => {
    h.linkAdd({ kind: 'veth', name: 'vp0', peer: { name: 'vp1' } });
    try {
      try {
        h.linkAdd({ kind: 'vlan', name: 'vp0.5', parent: 'vp0', id: 5 });
      } catch (e) {
        if (isNetlinkError(e, 'EOPNOTSUPP')) {
          ctx.skip(
            `kernel lacks CONFIG_VLAN_8021Q (${e.extack ?? 'EOPNOTSUPP'}); encoding is covered by golden.test.ts`,
          );
        }
        throw e;
      }
      expect(h.linkGet('vp0.5')).toMatchObject({ kind: 'vlan', vlanId: 5 });
      h.linkDel('vp0.5');
    } finally {
      h.linkDel('vp0');
    }
  });
});
