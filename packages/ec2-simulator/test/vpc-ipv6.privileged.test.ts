/**
 * The dual-stack virtual VPC: an IPv6 block on the VPC and its subnet, one IPv6 address on each node's eth0,
 * /80 prefixes assigned through the real SDK routed to their ENI, an IPv6-only internet host next to the
 * IPv4-only one, and the IPv6 source/destination check.
 */
import { AssignIpv6AddressesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eui64LinkLocal, startVirtualVpc, type VirtualVpc, VPC_IPV6_ADDRESSES } from '../src/vpc/index.js';
import { getJson, imdsIn, inNs, NODE_A, NODE_B, pings, SUBNET_A, sdk, VPC_ID } from './vpc-support.js';

const dualStack = {
  region: 'us-west-2',
  vpcs: [{ id: VPC_ID, cidrBlocks: ['10.0.0.0/16'], ipv6CidrBlock: '2001:db8:c00::/56' }],
  subnets: [
    {
      id: SUBNET_A,
      cidrBlock: '10.0.0.0/24',
      ipv6CidrBlock: '2001:db8:c00:1::/64',
      availabilityZone: 'us-west-2a',
    },
  ],
  instances: [
    { id: NODE_A, instanceType: 'm5.large', subnetId: SUBNET_A, ipv6AddressCount: 1 },
    { id: NODE_B, instanceType: 'm5.large', subnetId: SUBNET_A, ipv6AddressCount: 1 },
  ],
};

describePrivileged('virtual VPC: dual stack', () => {
  let vpc: VirtualVpc;
  let ec2: EC2Client;
  let nsA: string;
  let nsB: string;
  let v6A: string;
  let v6B: string;

  beforeAll(async () => {
    vpc = await startVirtualVpc({ scenario: dualStack, simulator: { rateLimits: false }, pollMs: 100 });
    ec2 = sdk(vpc);
    const d = vpc.describe();
    const a = d.instances.find((i) => i.instanceId === NODE_A)!;
    const b = d.instances.find((i) => i.instanceId === NODE_B)!;
    nsA = a.netnsPath;
    nsB = b.netnsPath;
    v6A = a.ipv6!;
    v6B = b.ipv6!;
  });

  afterAll(async () => {
    ec2?.destroy();
    await vpc?.close();
  });

  it('describes the IPv6 block, the subnet /64, each node address and the IPv6 internet host', () => {
    const d = vpc.describe();
    expect(d.vpcs[0]?.ipv6CidrBlock).toBe('2001:db8:c00::/56');
    expect(d.subnets[0]?.ipv6Cidr).toBe('2001:db8:c00:1::/64');
    expect(v6A).toMatch(/^2001:db8:c00:1:/);
    expect(v6B).toMatch(/^2001:db8:c00:1:/);
    expect(d.internet.hostIpv6).toBe(VPC_IPV6_ADDRESSES.internetHost);
    const addrs = inNs(nsA, ['ip', '-6', 'addr', 'show', 'dev', 'eth0']);
    expect(addrs).toContain(`${v6A}/128`);
    expect(inNs(nsA, ['ip', '-6', 'route', 'show', 'default'])).toContain('via fe80:ec2::1 dev eth0');
  });

  it("serves the node's IPv6 paths in IMDS", async () => {
    const imds = vpc.describe().instances[0]!.imdsEndpoint;
    const { get } = await imdsIn(nsA, imds);
    expect(await get('ipv6')).toBe(v6A);
    const mac = (await get('mac')).trim();
    expect(await get(`network/interfaces/macs/${mac}/ipv6s`)).toBe(v6A);
    expect(await get(`network/interfaces/macs/${mac}/subnet-ipv6-cidr-blocks`)).toBe('2001:db8:c00:1::/64');
    expect(await get(`network/interfaces/macs/${mac}/vpc-ipv6-cidr-blocks`)).toBe('2001:db8:c00::/56');
  });

  it('routes node↔node and node→IPv6 internet host; the IPv4-only host has no IPv6 address', () => {
    expect(pings(nsA, v6B)).toBe(true);
    expect(pings(nsB, v6A)).toBe(true);
    expect(pings(nsA, VPC_IPV6_ADDRESSES.internetHost)).toBe(true);
    // The IPv4 internet host answers on IPv4 only.
    const inet = vpc.describe().internet;
    expect(inNs(inet.netnsPath, ['ip', '-6', 'addr', 'show', 'dev', 'lo'])).not.toContain(inet.host);
    expect(pings(nsA, inet.host)).toBe(true);
  });

  it('routes an assigned /80 to its ENI via the ENI link-local, and drops a spoofed IPv6 source', async () => {
    const d = vpc.describe();
    const eniB = d.instances.find((i) => i.instanceId === NODE_B)!.enis[0]!;
    const out = await ec2.send(
      new AssignIpv6AddressesCommand({ NetworkInterfaceId: eniB.eniId, Ipv6PrefixCount: 1 }),
    );
    const prefix = out.AssignedIpv6Prefixes?.[0];
    expect(prefix).toMatch(/^2001:db8:c00:1:.*\/80$/);
    const routes = inNs(d.router.netnsPath, ['ip', '-6', 'route', 'show', prefix!]);
    expect(routes).toContain(`via ${eui64LinkLocal(eniB.mac)} dev ${eniB.routerLink}`);
    // An address of the /80 on node B (as a pod would have) is reachable from node A and the internet host.
    const podAddress = `${prefix!.split('/')[0]!.replace(/::$/, '')}::5`;
    inNs(nsB, ['ip', 'addr', 'add', `${podAddress}/128`, 'dev', 'lo', 'nodad']);
    expect(pings(nsA, podAddress)).toBe(true);
    expect(pings(d.internet.netnsPath, podAddress)).toBe(true);
    expect(vpc.routerView().addresses[prefix!]?.eniId).toBe(eniB.eniId);
    // Node A sending from an address it does not own: dropped by the IPv6 source/destination check.
    const before = vpc.routerView().drops['source-dest-check'];
    inNs(nsA, ['ip', 'addr', 'add', '2001:db8:c00:1::dead/128', 'dev', 'lo', 'nodad']);
    expect(pings(nsA, VPC_IPV6_ADDRESSES.internetHost, '2001:db8:c00:1::dead')).toBe(false);
    expect(vpc.routerView().drops['source-dest-check']).toBeGreaterThan(before);
    const admin = await getJson(`${d.adminEndpoint}/vpc/router`);
    expect(admin.status).toBe(200);
  });
});
