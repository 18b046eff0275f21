import { expect, describe as group, it } from 'vitest';
import {
  branchHostVethName,
  describe,
  hostVethName,
  nodeFwmark,
  planBranchPod,
  planNodeRouting,
  planPodNetwork,
  routeTableId,
} from '../src/index.js';

// Every combination of the reference's env variables that shape routing: AWS_VPC_CNI_NODE_PORT_SUPPORT ×
// AWS_VPC_K8S_CNI_EXTERNALSNAT (fwmark rule), AWS_EXTERNAL_SERVICE_CIDRS, AWS_VPC_K8S_CNI_VETHPREFIX,
// ENABLE_IPv6, ENABLE_MULTI_NIC (network card tables), POD_MTU, POD_SECURITY_GROUP_ENFORCING_MODE.
const combos: { name: string; render: () => string; check: () => void }[] = [];
for (const nodePortSupport of [true, false])
  for (const externalSnat of [false, true])
    for (const externalServiceCidrs of [[], ['172.20.0.0/16']])
      for (const vethPrefix of ['eni', 'cali'])
        for (const family of [4, 6] as const)
          for (const networkCard of [0, 1])
            for (const mtu of [9001, 1500]) {
              const v6 = family === 6;
              const input = {
                family,
                vethPrefix,
                fwmark: nodeFwmark({ nodePortSupport, externalSnat }),
                externalServiceCidrs: v6
                  ? externalServiceCidrs.map(() => 'fd00:ac::/64')
                  : externalServiceCidrs,
                enis: [
                  {
                    interfaceName: 'eth1',
                    deviceNumber: 1,
                    networkCard,
                    primaryIp: v6 ? '2600:1f14::10' : '10.0.1.10',
                    subnetCidr: v6 ? '2600:1f14::/64' : '10.0.1.0/24',
                    mtu,
                  },
                ],
                pods: [
                  {
                    podIp: v6 ? '2600:1f14::20' : '10.0.1.20',
                    hostVeth: hostVethName(vethPrefix, 'default', 'a'),
                    table: routeTableId(1, networkCard),
                  },
                  {
                    podIp: v6 ? '2600:1f15::20' : '10.0.0.20',
                    hostVeth: hostVethName(vethPrefix, 'default', 'b'),
                    table: 254,
                  },
                ],
              };
              const pod = () =>
                planPodNetwork(
                  {
                    podIp: input.pods[0]!.podIp,
                    hostVeth: input.pods[0]!.hostVeth,
                    containerIf: 'eth0',
                    netnsPath: '/var/run/netns/p',
                    mtu,
                    eniTable: input.pods[0]!.table,
                  },
                  '02:00:00:00:00:01',
                );
              combos.push({
                name: `NODE_PORT_SUPPORT=${nodePortSupport} EXTERNALSNAT=${externalSnat} EXTERNAL_SERVICE_CIDRS=${externalServiceCidrs.length > 0} VETHPREFIX=${vethPrefix} IPv${family} card=${networkCard} MTU=${mtu}`,
                render: () => {
                  const plan = planNodeRouting(input);
                  const p = pod();
                  return [
                    ...plan.links.map((l) => `link ${l.name} up mtu ${l.mtu}`),
                    ...[...plan.addresses, ...plan.routes, ...plan.rules].map(describe),
                    ...plan.absentRoutes.map((r) => `absent ${describe(r)}`),
                    `veth ${p.veth.name} mtu ${p.veth.mtu} peer ${p.veth.peerName}`,
                    ...p.podObjects.map((o) => `pod ${describe(o)}`),
                  ].join('\n');
                },
                check: () => {
                  const plan = planNodeRouting(input);
                  const fw = plan.rules.filter((r) => r.priority === 1024);
                  expect(fw.length).toBe(nodePortSupport || !externalSnat ? 1 : 0);
                  expect(plan.rules.filter((r) => r.priority === 1535).length).toBe(
                    externalServiceCidrs.length,
                  );
                  expect(plan.rules.filter((r) => r.priority === 32765).map((r) => r.table)).toEqual([
                    networkCard === 0 ? 2 : 10101,
                  ]);
                  expect(plan.rules.filter((r) => r.priority === 1536).length).toBe(1);
                  expect(plan.scope.mainRouteDevPrefixes).toEqual([vethPrefix]);
                  const p = pod();
                  expect(p.veth.mtu).toBe(mtu);
                  expect(p.gateway).toBe(v6 ? 'fe80::1' : '169.254.1.1');
                  expect(p.podSysctls.length).toBe(v6 ? 2 : 0);
                },
              });
            }

group('routing plans for every env combination', () => {
  it.each(combos)('$name', ({ check }) => check());

  it('match the golden rendering of the whole matrix', async () => {
    const text = combos.map((c) => `### ${c.name}\n${c.render()}\n`).join('\n');
    await expect(text).toMatchFileSnapshot('./golden/routing-matrix.txt');
  });

  it('branch-ENI layouts for both enforcing modes and families', async () => {
    const text = (['strict', 'standard'] as const)
      .flatMap((mode) =>
        [4, 6].map((family) => {
          const plan = planBranchPod({
            vlanId: 7,
            trunkInterface: 'eth1',
            branchMac: '0a:00:00:00:00:07',
            podIp: family === 4 ? '10.0.0.9' : '2600:1f14::9',
            subnetCidr: family === 4 ? '10.0.0.0/19' : '2600:1f14::/64',
            hostVeth: branchHostVethName(mode, 'eni', 'default', 'sgp'),
            mode,
          });
          return `### ${mode} IPv${family}\n${[...plan.routes, ...plan.rules].map(describe).join('\n')}\n`;
        }),
      )
      .join('\n');
    await expect(text).toMatchFileSnapshot('./golden/branch-matrix.txt');
  });
});
