import { expect, describe as group, it } from 'vitest';
import {
  branchHostVethName,
  describe,
  generateHostMac,
  hostVethName,
  isRoutingError,
  PRIORITY,
  planBranchPod,
  planEni,
  planNodeRouting,
  planPodHost,
  planPodNetwork,
  routeTableId,
} from '../src/index.js';

function expectInvalid(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(isRoutingError(caught, 'INVALID_ARGUMENT')).toBe(true);
}

group('naming', () => {
  it('host veth names follow the reference (prefix + 11 hex of SHA-1 of "ns.pod", ".i" suffix)', () => {
    expect(hostVethName('eni', 'default', 'web-0')).toBe('eni0d7763386da');
    expect(hostVethName('eni', 'kube-system', 'coredns-abc', 1)).toBe('eni769f2b6ef39');
    expect(branchHostVethName('strict', 'eni', 'default', 'web-0')).toBe('vlan0d7763386da');
    expect(branchHostVethName('standard', 'eni', 'default', 'web-0')).toBe('eni0d7763386da');
    for (const bad of ['eth', 'vlan', 'lo', 'abcde', '', 'a b'])
      expectInvalid(() => hostVethName(bad, 'a', 'b'));
  });

  it('route table ids: main, d+1, 10000+d+100n', () => {
    expect(routeTableId(0, 0)).toBe(254);
    expect(routeTableId(1)).toBe(2);
    expect(routeTableId(7, 0)).toBe(8);
    expect(routeTableId(0, 1)).toBe(10100);
    expect(routeTableId(3, 2)).toBe(10203);
    expectInvalid(() => routeTableId(-1));
    expectInvalid(() => routeTableId(1.5));
  });

  it('host MACs are locally administered unicast and avoid taken ones', () => {
    const sequence = [
      [0x03, 1, 2, 3, 4, 5],
      [0xff, 9, 9, 9, 9, 9],
    ];
    let call = 0;
    const random = () => Uint8Array.from(sequence[call++ % sequence.length]!);
    // first candidate 03→02:01:02:03:04:05 is taken, so the second is used: ff→fe
    expect(generateHostMac(random, ['02:01:02:03:04:05'])).toBe('fe:09:09:09:09:09');
    let failures: unknown;
    try {
      generateHostMac(() => Uint8Array.from([2, 0, 0, 0, 0, 1]), ['02:00:00:00:00:01'], 3);
    } catch (error) {
      failures = error;
    }
    expect(isRoutingError(failures, 'MAC_EXHAUSTED')).toBe(true);
  });
});

group('planEni', () => {
  it('plans a secondary ENI exactly as the reference sets it up', () => {
    const plan = planEni({
      interfaceName: 'eth1',
      deviceNumber: 1,
      primaryIp: '10.0.32.10',
      subnetCidr: '10.0.32.0/19',
      mtu: 9001,
    });
    expect(plan.links).toEqual([{ name: 'eth1', mtu: 9001 }]);
    expect([...plan.addresses, ...plan.routes, ...plan.rules].map(describe)).toEqual([
      'address 10.0.32.10/19 dev eth1',
      'route v4 10.0.32.1/32 dev eth1 table 2 scope link',
      'route v4 0.0.0.0/0 via 10.0.32.1 dev eth1 table 2',
      'rule v4 32765: from 10.0.32.10/32 lookup 2',
    ]);
    expect(plan.absentRoutes.map(describe)).toEqual([
      'route v4 10.0.32.0/19 dev eth1 table main scope link src 10.0.32.10',
    ]);
  });

  it('uses 10000+d+100n on other network cards, no rule for trunks, nothing for the primary', () => {
    const plan = planEni({
      interfaceName: 'eth3',
      deviceNumber: 0,
      networkCard: 1,
      primaryIp: '10.0.0.5',
      subnetCidr: '10.0.0.0/24',
      trunk: true,
    });
    expect(plan.routes.map((r) => r.table)).toEqual([10100, 10100]);
    expect(plan.rules).toEqual([]);
    expect(
      planEni({ interfaceName: 'eth0', deviceNumber: 0, primaryIp: '10.0.0.5', subnetCidr: '10.0.0.0/24' })
        .routes,
    ).toEqual([]);
  });

  it('IPv6 ENIs route via fe80:ec2::1 and drop the subnet route by device', () => {
    const plan = planEni(
      {
        interfaceName: 'eth1',
        deviceNumber: 2,
        primaryIp: '2600:1f14:0:1::10',
        subnetCidr: '2600:1f14:0:1::/64',
      },
      6,
    );
    expect(plan.routes.map(describe)).toEqual([
      'route v6 fe80:ec2::1/128 dev eth1 table 3',
      'route v6 ::/0 via fe80:ec2::1 dev eth1 table 3',
    ]);
    expect(plan.absentRoutes.map(describe)).toEqual(['route v6 2600:1f14:0:1::/64 dev eth1 table main']);
  });

  it('rejects bad input', () => {
    expectInvalid(() =>
      planEni({ interfaceName: 'eth1', deviceNumber: 1, primaryIp: '10.1.0.1', subnetCidr: '10.0.0.0/24' }),
    );
    expectInvalid(() =>
      planEni({ interfaceName: 'eth 1', deviceNumber: 1, primaryIp: '10.0.0.1', subnetCidr: '10.0.0.0/24' }),
    );
    expectInvalid(() =>
      planEni({
        interfaceName: 'eth1',
        deviceNumber: 1,
        primaryIp: '10.0.0.1',
        subnetCidr: '10.0.0.0/24',
        mtu: 10,
      }),
    );
  });
});

group('pod plans', () => {
  it('host side: route in main, to-pod at 512, from-pod at 1536 for secondary-ENI addresses', () => {
    expect(
      [
        ...planPodHost({ podIp: '10.0.5.7', hostVeth: 'eni0d7763386da', table: 3 }).routes,
        ...planPodHost({ podIp: '10.0.5.7', hostVeth: 'eni0d7763386da', table: 3 }).rules,
      ].map(describe),
    ).toEqual([
      'route v4 10.0.5.7/32 dev eni0d7763386da table main scope link',
      'rule v4 512: to 10.0.5.7/32 lookup main',
      'rule v4 1536: from 10.0.5.7/32 lookup 3',
    ]);
    expect(
      planPodHost({ podIp: '10.0.5.7', hostVeth: 'enix', table: 254 }).rules.map((r) => r.priority),
    ).toEqual([512]);
  });

  it('namespace side: gateway link route, default route, /32, permanent neighbour; sysctls', () => {
    const plan = planPodNetwork(
      {
        podIp: '10.0.5.7',
        hostVeth: 'eni0d7763386da',
        containerIf: 'eth0',
        netnsPath: '/var/run/netns/p',
        mtu: 9001,
        eniTable: 254,
      },
      '02:11:22:33:44:55',
    );
    expect(plan.podObjects.map(describe)).toEqual([
      'route v4 169.254.1.1/32 dev eth0 table main scope link',
      'route v4 0.0.0.0/0 via 169.254.1.1 dev eth0 table main',
      'address 10.0.5.7/32 dev eth0',
      'neighbour 169.254.1.1 lladdr 02:11:22:33:44:55 dev eth0 permanent',
    ]);
    expect(plan.hostSysctls).toEqual([
      ['net/ipv6/conf/eni0d7763386da/accept_ra', '0'],
      ['net/ipv6/conf/eni0d7763386da/accept_redirects', '1'],
      ['net/ipv6/conf/eni0d7763386da/forwarding', '0'],
    ]);
    expect(plan.podSysctls).toEqual([]);
  });

  it('IPv6 and extra interfaces: fe80::(i+1), /128, table i and a from rule at 1', () => {
    const plan = planPodNetwork(
      {
        podIp: '2600:1f14::a:1',
        hostVeth: 'eni1',
        containerIf: 'mNicIf1',
        netnsPath: '/p',
        mtu: 1500,
        eniTable: 10100,
        index: 1,
      },
      '02:00:00:00:00:01',
    );
    expect(plan.podObjects.map(describe)).toEqual([
      'route v6 fe80::2/128 dev mNicIf1 table 1',
      'rule v6 1: from 2600:1f14::a:1/128 lookup 1',
      'route v6 ::/0 via fe80::2 dev mNicIf1 table 1',
      'address 2600:1f14::a:1/128 dev mNicIf1',
      'neighbour fe80::2 lladdr 02:00:00:00:00:01 dev mNicIf1 permanent',
    ]);
    expect(plan.podSysctls.map(([k]) => k)).toEqual([
      'net/ipv6/conf/mNicIf1/disable_ipv6',
      'net/ipv6/conf/lo/disable_ipv6',
    ]);
  });
});

group('planNodeRouting', () => {
  it('combines ENIs, pods, the fwmark rule and external service CIDRs, owning the reference priorities', () => {
    const plan = planNodeRouting({
      enis: [{ interfaceName: 'eth1', deviceNumber: 1, primaryIp: '10.0.1.10', subnetCidr: '10.0.1.0/24' }],
      pods: [{ podIp: '10.0.1.20', hostVeth: 'enia', table: 2 }],
      fwmark: 0x80,
      externalServiceCidrs: ['172.20.5.0/24', '172.20.5.9/24'],
    });
    expect(plan.rules.map(describe)).toEqual([
      'rule v4 32765: from 10.0.1.10/32 lookup 2',
      'rule v4 512: to 10.0.1.20/32 lookup main',
      'rule v4 1536: from 10.0.1.20/32 lookup 2',
      'rule v4 1024: from all fwmark 0x80/0x80 lookup main',
      'rule v4 1535: to 172.20.5.0/24 lookup main',
    ]);
    expect(plan.scope.rulePriorities).toEqual([512, 1024, 1535, 1536, 32765]);
    expect(plan.scope.routeTables).toEqual([2]);
  });

  it('refuses a malformed CIDR or address with INVALID_ARGUMENT', () => {
    const eni = { interfaceName: 'eth1', deviceNumber: 1, primaryIp: '10.0.1.10', subnetCidr: '10.0.1.0/24' };
    for (const cidr of [
      '172.20.5.0/08',
      '172.20.5.0/33',
      '01.2.3.4/8',
      '1.2.3/8',
      '::1::/64',
      '10.0.0.0/8/8',
    ])
      expectInvalid(() =>
        planNodeRouting({ enis: [eni], pods: [], fwmark: 0x80, externalServiceCidrs: [cidr] }),
      );
    for (const primaryIp of ['10.0.1.010', '10.0.1'])
      expectInvalid(() => planNodeRouting({ enis: [{ ...eni, primaryIp }], pods: [], fwmark: 0x80 }));
  });

  it('writes pod addresses in canonical text and refuses one of the other family', () => {
    const pod = { podIp: ' 2600:1F14:0:0:0:0:0:7 ', hostVeth: 'eni0d7763386da', table: 254 };
    expect(planPodHost(pod).rules.map((r) => r.to)).toEqual(['2600:1f14::7/128']);
    expect(planPodHost({ ...pod, podIp: '10.0.5.7' }, 4).rules.map((r) => r.to)).toEqual(['10.0.5.7/32']);
    expectInvalid(() => planPodHost(pod, 4));
    expectInvalid(() => planPodHost({ ...pod, podIp: '10.0.5.7' }, 6));
    expectInvalid(() => planPodHost({ ...pod, podIp: '::ffff:10.0.5.7x' }));
  });
});

group('planBranchPod', () => {
  const base = {
    vlanId: 3,
    trunkInterface: 'eth1',
    branchMac: '0A:BB:CC:DD:EE:01',
    podIp: '10.0.0.9',
    subnetCidr: '10.0.0.0/19',
    hostVeth: 'vlan0d7763386da',
  };
  it('strict: table vlan+100, iif rules at 10, pod route only in the VLAN table', () => {
    const plan = planBranchPod({ ...base, mode: 'strict' });
    expect(plan.vlanLink).toEqual({
      name: 'vlan.eth.3',
      parent: 'eth1',
      vlanId: 3,
      mac: '0a:bb:cc:dd:ee:01',
    });
    expect([...plan.routes, ...plan.rules].map(describe)).toEqual([
      'route v4 10.0.0.1/32 dev vlan.eth.3 table 103 scope link',
      'route v4 0.0.0.0/0 via 10.0.0.1 dev vlan.eth.3 table 103',
      'route v4 10.0.0.9/32 dev vlan0d7763386da table 103 scope link',
      'rule v4 10: from all iif vlan.eth.3 lookup 103',
      'rule v4 10: from all iif vlan0d7763386da lookup 103',
    ]);
  });
  it('standard: IP rules at 512 and 1536 with table vlan+100', () => {
    const plan = planBranchPod({ ...base, mode: 'standard' });
    expect(plan.rules.map((r) => [r.priority, r.table])).toEqual([
      [PRIORITY.toPod, 254],
      [PRIORITY.fromPod, 103],
    ]);
  });
});
