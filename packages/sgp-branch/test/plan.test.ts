import { planSnat, renderIptables } from '@vpc-cni-kit/iptables-snat';
import { describe, expect, it } from 'vitest';
import {
  BRANCH_LINK_PATTERN,
  type BranchEni,
  isSgpError,
  planBranchNetwork,
  planBranchNode,
  planBranchTeardown,
} from '../src/index.js';

const branch: BranchEni = {
  eniId: 'eni-0a1b',
  mac: '0a:00:00:00:00:07',
  ipv4: '10.0.1.9',
  subnetCidr: '10.0.0.0/19',
  ipv6: '2001:db8::9',
  subnetV6Cidr: '2001:db8::/64',
  vlanId: 3,
};

describe('planBranchNetwork', () => {
  it('strict mode: vlan.eth.<id> on the trunk, table id+100, iif rules at 10, pod route in that table', () => {
    const plan = planBranchNetwork({
      branch,
      trunkInterface: 'eth1',
      hostVeth: 'vlan0d7763386da',
      mode: 'strict',
    });
    expect(plan.link).toEqual({
      kind: 'vlan',
      name: 'vlan.eth.3',
      parent: 'eth1',
      vlanId: 3,
      mac: '0a:00:00:00:00:07',
    });
    expect(plan.table).toBe(103);
    expect(plan.routing.routes).toEqual([
      { kind: 'route', family: 4, table: 103, dst: '10.0.0.1/32', dev: 'vlan.eth.3', scope: 'link' },
      {
        kind: 'route',
        family: 4,
        table: 103,
        dst: '0.0.0.0/0',
        dev: 'vlan.eth.3',
        gateway: '10.0.0.1',
        scope: 'universe',
      },
      { kind: 'route', family: 4, table: 103, dst: '10.0.1.9/32', dev: 'vlan0d7763386da', scope: 'link' },
    ]);
    expect(plan.routing.rules).toEqual([
      { kind: 'rule', family: 4, priority: 10, table: 103, iif: 'vlan.eth.3' },
      { kind: 'rule', family: 4, priority: 10, table: 103, iif: 'vlan0d7763386da' },
    ]);
    expect(plan.linkSysctls.map(([k]) => k)).toEqual([
      'net/ipv6/conf/vlan.eth.3/accept_ra',
      'net/ipv6/conf/vlan.eth.3/accept_redirects',
      'net/ipv6/conf/vlan.eth.3/forwarding',
    ]);
  });

  it('standard mode: the IP-based rules (to-pod 512 main, from-pod 1536 table id+100), pod route in main', () => {
    const plan = planBranchNetwork({
      branch,
      trunkInterface: 'eth1',
      hostVeth: 'eni0d7763386da',
      mode: 'standard',
    });
    expect(plan.routing.rules).toEqual([
      { kind: 'rule', family: 4, priority: 512, table: 254, to: '10.0.1.9/32' },
      { kind: 'rule', family: 4, priority: 1536, table: 103, from: '10.0.1.9/32' },
    ]);
    expect(plan.routing.routes.at(-1)).toEqual({
      kind: 'route',
      family: 4,
      table: 254,
      dst: '10.0.1.9/32',
      dev: 'eni0d7763386da',
      scope: 'link',
    });
  });

  it('IPv6: gateway fe80:ec2::1, /128 routes, v6 rules', () => {
    const plan = planBranchNetwork({
      branch,
      trunkInterface: 'eth1',
      hostVeth: 'vlanaaaa',
      mode: 'strict',
      family: 6,
    });
    expect(plan.podIp).toBe('2001:db8::9');
    expect(plan.routing.routes[1]).toMatchObject({ family: 6, dst: '::/0', gateway: 'fe80:ec2::1' });
    expect(plan.routing.rules.every((r) => r.family === 6)).toBe(true);
  });

  it('the link kind is an option: macvlan (vepa unless told) with the same name, MAC and table', () => {
    const plan = planBranchNetwork({
      branch,
      trunkInterface: 'eth1',
      hostVeth: 'vlanaaaa',
      mode: 'strict',
      linkKind: 'macvlan',
    });
    expect(plan.link).toEqual({
      kind: 'macvlan',
      name: 'vlan.eth.3',
      parent: 'eth1',
      vlanId: 3,
      mac: '0a:00:00:00:00:07',
      macvlanMode: 'vepa',
    });
    const vlan = planBranchNetwork({ branch, trunkInterface: 'eth1', hostVeth: 'vlanaaaa', mode: 'strict' });
    expect(plan.routing).toEqual(vlan.routing);
  });

  it('refuses bad input with INVALID_ARGUMENT', () => {
    const bad = [
      { branch, trunkInterface: 'eth1', hostVeth: 'vlanaaaa', mode: 'loose' },
      { branch, trunkInterface: 'this-name-is-too-long', hostVeth: 'vlanaaaa', mode: 'strict' },
      { branch, trunkInterface: 'eth1', hostVeth: 'vlanaaaa', mode: 'strict', linkKind: 'ipvlan' },
      {
        branch: { ...branch, ipv6: undefined },
        trunkInterface: 'eth1',
        hostVeth: 'v',
        mode: 'strict',
        family: 6,
      },
      { branch: { ...branch, vlanId: 0 }, trunkInterface: 'eth1', hostVeth: 'v', mode: 'strict' },
    ];
    for (const input of bad) {
      try {
        planBranchNetwork(input as never);
        expect.unreachable(JSON.stringify(input));
      } catch (error) {
        expect(isSgpError(error, 'INVALID_ARGUMENT')).toBe(true);
      }
    }
  });
});

describe('planBranchNode', () => {
  it('sets tcp_early_demux from DISABLE_TCP_EARLY_DEMUX', () => {
    expect(planBranchNode({ disableTcpEarlyDemux: true }).sysctls).toEqual([
      ['net/ipv4/tcp_early_demux', '0'],
    ]);
    expect(planBranchNode({ disableTcpEarlyDemux: false }).sysctls).toEqual([
      ['net/ipv4/tcp_early_demux', '1'],
    ]);
  });

  it('strict mode moves the local rule from 0 to 20 (prio-10 branch rules first); standard keeps it at 0', () => {
    const local = (priority: number, family: 4 | 6 = 4) => ({ kind: 'rule', family, priority, table: 255 });
    const strict = planBranchNode({ disableTcpEarlyDemux: true, mode: 'strict' });
    expect([strict.rules, strict.absentRules]).toEqual([[local(20)], [local(0)]]);
    const standard = planBranchNode({ disableTcpEarlyDemux: false, mode: 'standard', family: 6 });
    expect([standard.rules, standard.absentRules]).toEqual([[local(0, 6)], [local(20, 6)]]);
    expect(() => planBranchNode({ disableTcpEarlyDemux: false, mode: 'loose' as never })).toThrow();
  });

  it("names the SNAT exception that iptables-snat's node plan carries (! -o vlan+)", () => {
    expect(planBranchNode({ disableTcpEarlyDemux: false }).snatSkipOutInterface).toBe(BRANCH_LINK_PATTERN);
    const snat = planSnat({ nodeIp: '10.0.0.10', primaryInterface: 'eth0', vpcCidrs: ['10.0.0.0/16'] });
    expect(renderIptables(snat)).toContain(`! -o ${BRANCH_LINK_PATTERN} `);
  });
});

describe('planBranchTeardown', () => {
  it('rebuilds the mode-agnostic teardown from what a prevResult records', () => {
    const plan = planBranchTeardown({ vlanId: 3, podIp: '10.0.1.9', hostVeth: 'vlan0d7763386da' });
    expect(plan.link).toEqual({ name: 'vlan.eth.3' });
    expect(plan.table).toBe(103);
    expect(plan.family).toBe(4);
    // Standard mode's IP-based objects, plus strict mode's pod route in the branch table.
    expect(plan.routing.rules).toEqual([
      { kind: 'rule', family: 4, priority: 512, table: 254, to: '10.0.1.9/32' },
      { kind: 'rule', family: 4, priority: 1536, table: 103, from: '10.0.1.9/32' },
    ]);
    expect(plan.routing.routes.map((r) => [r.table, r.dst, r.dev])).toEqual([
      [254, '10.0.1.9/32', 'vlan0d7763386da'],
      [103, '10.0.1.9/32', 'vlan0d7763386da'],
    ]);
  });

  it('refuses what it cannot plan', () => {
    for (const bad of [
      { vlanId: 0, podIp: '10.0.1.9', hostVeth: 'vlanx' },
      { vlanId: 3, podIp: 'nope', hostVeth: 'vlanx' },
      { vlanId: 3, podIp: '10.0.1.9', hostVeth: '' },
    ]) {
      let caught: unknown;
      try {
        planBranchTeardown(bad);
      } catch (e) {
        caught = e;
      }
      expect(isSgpError(caught, 'INVALID_ARGUMENT')).toBe(true);
    }
  });
});
