import { existsSync } from 'node:fs';
import {
  AssignPrivateIpAddressesCommand,
  AssociateVpcCidrBlockCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DetachNetworkInterfaceCommand,
  DisassociateVpcCidrBlockCommand,
  type EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startVirtualVpc, type VirtualVpc } from '../src/vpc/index.js';
import { NFT_TABLE } from '../src/vpc/plan.js';
import {
  children,
  getJson,
  imdsIn,
  inNs,
  inNsAsync,
  links,
  mountsWith,
  NODE_A,
  NODE_B,
  netnsNames,
  pings,
  rootLinks,
  SUBNET_A,
  SUBNET_CGNAT,
  sdk,
  socketCount,
  twoNodes,
  VPC_ID,
} from './vpc-support.js';

describePrivileged('virtual VPC: two instances, live ENIs, router checks', () => {
  let vpc: VirtualVpc;
  let ec2: EC2Client;
  let nsA: string;
  let nsB: string;
  const baseline = { netns: [] as string[], rootLinks: [] as string[], sockets: 0 };
  const eni2: { id: string; mac: string; primary: string; attachmentId: string; secondary: string } = {
    id: '',
    mac: '',
    primary: '',
    attachmentId: '',
    secondary: '',
  };

  beforeAll(async () => {
    baseline.netns = netnsNames();
    baseline.rootLinks = rootLinks();
    baseline.sockets = socketCount();
    vpc = await startVirtualVpc({ scenario: twoNodes, simulator: { rateLimits: false }, pollMs: 100 });
    ec2 = sdk(vpc);
    const d = vpc.describe();
    nsA = d.instances.find((i) => i.instanceId === NODE_A)!.netnsPath;
    nsB = d.instances.find((i) => i.instanceId === NODE_B)!.netnsPath;
  });

  afterAll(async () => {
    ec2?.destroy();
    const runId = vpc?.runId;
    await vpc?.close();
    if (!runId) return;
    // Nothing left: no namespace, mount, state, root-namespace link, socket or child process.
    expect(netnsNames().filter((n) => n.includes(runId))).toEqual([]);
    expect(mountsWith(runId)).toEqual([]);
    expect(existsSync(`/run/vck-vpc/${runId}`)).toBe(false);
    expect(rootLinks()).toEqual(baseline.rootLinks);
    expect(socketCount()).toBeLessThanOrEqual(baseline.sockets);
    expect(children()).toEqual([]);
  });

  it('launches each instance as a namespace whose eth0 has the primary ENI MAC, address and default route', () => {
    const d = vpc.describe();
    expect(d.instances).toHaveLength(2);
    for (const inst of d.instances) {
      expect(inst.netns).toContain(vpc.runId);
      const eth0 = links(inst.netnsPath).find((l) => l.ifname === 'eth0')!;
      expect(eth0.address).toBe(inst.enis[0]!.mac);
      expect(inNs(inst.netnsPath, ['ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0'])).toContain(
        `${inst.privateIp}/24`,
      );
      expect(inNs(inst.netnsPath, ['ip', 'route', 'show', 'default'])).toContain('via 10.0.0.1 dev eth0');
    }
    expect(d.down).toBe(`vpc-sim down --run ${vpc.runId}`);
    expect(existsSync(d.stateFile)).toBe(true);
  });

  it('routes primary addresses to each other through the router, and the gateway answers', () => {
    expect(pings(nsA, '10.0.0.20')).toBe(true);
    expect(pings(nsB, '10.0.0.10')).toBe(true);
    expect(pings(nsA, '10.0.0.1')).toBe(true);
    // Unassigned VPC address: no ARP answer, no route; counted when something is sent there.
    expect(pings(nsA, '10.0.0.99')).toBe(false);
  });

  it('hot-plugs an attached ENI into the instance namespace with its MAC (real SDK calls)', async () => {
    const created = await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_A }));
    eni2.id = created.NetworkInterface!.NetworkInterfaceId!;
    eni2.mac = created.NetworkInterface!.MacAddress!;
    eni2.primary = created.NetworkInterface!.PrivateIpAddress!;
    const att = await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eni2.id, InstanceId: NODE_A, DeviceIndex: 1 }),
    );
    eni2.attachmentId = att.AttachmentId!;
    const eth1 = links(nsA).find((l) => l.address === eni2.mac);
    expect(eth1?.ifname).toBe('eth1');
    expect(links(nsB).some((l) => l.address === eni2.mac)).toBe(false);
    const described = vpc.describe().instances.find((i) => i.instanceId === NODE_A)!;
    expect(described.enis.map((e) => [e.eniId, e.ifname])).toContainEqual([eni2.id, 'eth1']);
  });

  it('delivers a secondary address of the second ENI once configured inside the instance', async () => {
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni2.id, SecondaryPrivateIpAddressCount: 1 }),
    );
    eni2.secondary = r.AssignedPrivateIpAddresses![0]!.PrivateIpAddress!;
    expect(vpc.routerView().addresses[eni2.secondary]).toMatchObject({ eniId: eni2.id, instanceId: NODE_A });
    // What aws-node does for a secondary ENI: link up, addresses, a table with the gateway, a from-rule.
    inNs(nsA, ['ip', 'link', 'set', 'eth1', 'up']);
    inNs(nsA, ['ip', 'addr', 'add', `${eni2.primary}/24`, 'dev', 'eth1', 'noprefixroute']);
    inNs(nsA, ['ip', 'addr', 'add', `${eni2.secondary}/32`, 'dev', 'eth1']);
    inNs(nsA, ['ip', 'route', 'add', '10.0.0.1', 'dev', 'eth1', 'scope', 'link', 'table', '2']);
    inNs(nsA, ['ip', 'route', 'add', 'default', 'via', '10.0.0.1', 'dev', 'eth1', 'table', '2']);
    inNs(nsA, ['ip', 'rule', 'add', 'from', eni2.secondary, 'lookup', '2', 'prio', '1536']);
    expect(pings(nsB, eni2.secondary)).toBe(true);
  });

  it('drops traffic from that address leaving through the wrong ENI (source/destination check) and counts it', () => {
    const before = vpc.routerView();
    inNs(nsA, ['ip', 'rule', 'del', 'from', eni2.secondary, 'lookup', '2', 'prio', '1536']);
    expect(pings(nsA, '10.0.0.20', eni2.secondary)).toBe(false);
    const after = vpc.routerView();
    const primaryEni = vpc.describe().instances.find((i) => i.instanceId === NODE_A)!.enis[0]!.eniId;
    expect(after.drops['source-dest-check']).toBeGreaterThan(before.drops['source-dest-check']);
    expect(after.sourceDestCheckDropsByEni[primaryEni] ?? 0).toBeGreaterThan(
      before.sourceDestCheckDropsByEni[primaryEni] ?? 0,
    );
    inNs(nsA, ['ip', 'rule', 'add', 'from', eni2.secondary, 'lookup', '2', 'prio', '1536']);
    expect(pings(nsA, '10.0.0.20', eni2.secondary)).toBe(true);
  });

  it('makes an unassigned address unreachable at once', async () => {
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni2.id,
        PrivateIpAddresses: [eni2.secondary],
      }),
    );
    expect(vpc.routerView().addresses[eni2.secondary]).toBeUndefined();
    const before = vpc.routerView().drops['unassigned-destination'];
    expect(pings(nsB, eni2.secondary)).toBe(false);
    expect(vpc.routerView().drops['unassigned-destination']).toBeGreaterThan(before);
  });

  it('removes the link when the ENI is detached', async () => {
    await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: eni2.attachmentId }));
    expect(links(nsA).some((l) => l.address === eni2.mac)).toBe(false);
    expect(vpc.routerView().addresses[eni2.primary]).toBeUndefined();
  });

  it('lets primary addresses reach the internet and refuses un-SNATed secondary addresses', async () => {
    const d = vpc.describe();
    expect(pings(nsA, d.internet.host)).toBe(true);
    const primaryEni = d.instances.find((i) => i.instanceId === NODE_B)!.enis[0]!.eniId;
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: primaryEni,
        SecondaryPrivateIpAddressCount: 1,
      }),
    );
    const pod = r.AssignedPrivateIpAddresses![0]!.PrivateIpAddress!;
    inNs(nsB, ['ip', 'addr', 'add', `${pod}/32`, 'dev', 'eth0']);
    const before = vpc.routerView().drops['egress-not-public'];
    expect(pings(nsB, d.internet.host, pod)).toBe(false);
    expect(vpc.routerView().drops['egress-not-public']).toBeGreaterThan(before);
    // Inside the VPC the same address is fine (the source check passes: eth0's ENI owns it).
    expect(pings(nsB, '10.0.0.10', pod)).toBe(true);
  });

  it('routes a second VPC CIDR (100.64.0.0/16) like the first', async () => {
    const created = await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET_CGNAT }));
    const id = created.NetworkInterface!.NetworkInterfaceId!;
    const ip = created.NetworkInterface!.PrivateIpAddress!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: NODE_B, DeviceIndex: 1 }),
    );
    const link = links(nsB).find((l) => l.address === created.NetworkInterface!.MacAddress)!.ifname;
    inNs(nsB, ['ip', 'link', 'set', link, 'up']);
    inNs(nsB, ['ip', 'addr', 'add', `${ip}/24`, 'dev', link]);
    inNs(nsB, ['ip', 'route', 'add', 'default', 'via', '100.64.0.1', 'dev', link, 'table', '3']);
    inNs(nsB, ['ip', 'rule', 'add', 'from', ip, 'lookup', '3', 'prio', '1536']);
    expect(pings(nsA, ip)).toBe(true);
    expect(pings(nsB, '100.64.0.1')).toBe(true);
  });

  it('routes a block associated while running (AssociateVpcCidrBlock) and forgets it when disassociated', async () => {
    const d = vpc.describe();
    const inetRoutes = () => inNs(d.internet.netnsPath, ['ip', '-4', 'route', 'show']);
    const vpcSet = () =>
      inNs(d.router.netnsPath, ['nft', 'list', 'set', 'ip', NFT_TABLE, 'vpc_cidrs']).replace(/\s+/g, ' ');
    const out = await ec2.send(
      new AssociateVpcCidrBlockCommand({ VpcId: VPC_ID, CidrBlock: '100.70.0.0/16' }),
    );
    expect(inetRoutes()).toContain('100.70.0.0/16 via');
    expect(vpcSet()).toContain('100.70.0.0/16');
    expect(vpc.describe().vpcs[0]!.cidrBlocks).toContain('100.70.0.0/16');
    // An address of the new block that no ENI owns is an unassigned destination, as in the first block.
    const before = vpc.routerView().drops['unassigned-destination'];
    expect(pings(nsA, '100.70.0.9')).toBe(false);
    expect(vpc.routerView().drops['unassigned-destination']).toBeGreaterThan(before);
    await ec2.send(
      new DisassociateVpcCidrBlockCommand({ AssociationId: out.CidrBlockAssociation!.AssociationId! }),
    );
    expect(inetRoutes()).not.toContain('100.70.0.0/16');
    expect(vpcSet()).not.toContain('100.70.0.0/16');
    expect(vpc.errors).toEqual([]);
  });

  it('delivers every address of a delegated /28 prefix to its ENI', async () => {
    const d = vpc.describe();
    const primaryEni = d.instances.find((i) => i.instanceId === NODE_A)!.enis[0]!.eniId;
    const r = await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: primaryEni, Ipv4PrefixCount: 1 }),
    );
    const prefix = r.AssignedIpv4Prefixes![0]!.Ipv4Prefix!;
    expect(vpc.routerView().addresses[prefix]).toMatchObject({ eniId: primaryEni });
    const [a, b, c, last] = prefix.split('/')[0]!.split('.').map(Number) as [number, number, number, number];
    const pod = `${a}.${b}.${c}.${last + 7}`;
    inNs(nsA, ['ip', 'addr', 'add', `${pod}/32`, 'dev', 'eth0']);
    expect(pings(nsB, pod)).toBe(true);
    expect(pings(nsA, '10.0.0.20', pod)).toBe(true);
  });

  it('follows ModifyNetworkInterfaceAttribute SourceDestCheck', async () => {
    const d = vpc.describe();
    const eniB = d.instances.find((i) => i.instanceId === NODE_B)!.enis[0]!.eniId;
    inNs(nsB, ['ip', 'addr', 'add', '10.0.0.77/32', 'dev', 'eth0']);
    const counted = () => vpc.routerView().sourceDestCheckDropsByEni[eniB] ?? 0;
    const before = counted();
    pings(nsB, '10.0.0.10', '10.0.0.77');
    expect(counted()).toBeGreaterThan(before);
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: eniB,
        SourceDestCheck: { Value: false },
      }),
    );
    await new Promise((r) => setTimeout(r, 400));
    const off = counted();
    // The packet now passes the source check (the reply to an unowned address is what fails, as on AWS).
    pings(nsB, '10.0.0.10', '10.0.0.77');
    expect(counted()).toBe(off);
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: eniB,
        SourceDestCheck: { Value: true },
      }),
    );
    await new Promise((r) => setTimeout(r, 400));
    pings(nsB, '10.0.0.10', '10.0.0.77');
    expect(counted()).toBeGreaterThan(off);
    inNs(nsB, ['ip', 'addr', 'del', '10.0.0.77/32', 'dev', 'eth0']);
  });

  it('serves IMDS and the EC2 API inside every instance namespace', async () => {
    const d = vpc.describe();
    for (const inst of d.instances) {
      const { get } = await imdsIn(inst.netnsPath, inst.imdsEndpoint);
      expect(await get('instance-id')).toBe(inst.instanceId);
      expect(await get('mac')).toBe(inst.enis[0]!.mac);
      expect(await get('local-ipv4')).toBe(inst.privateIp);
      const xml = await inNsAsync(inst.netnsPath, [
        'curl',
        '-sf',
        '-X',
        'POST',
        '-d',
        'Action=DescribeInstances&Version=2016-11-15',
        `${inst.ec2Endpoint}/`,
      ]);
      expect(xml).toContain(NODE_A);
      expect(xml).toContain(NODE_B);
    }
  });

  it('lets the real AWS SDK inside an instance reach EC2 at the in-VPC endpoint', async () => {
    const inst = vpc.describe().instances[0]!;
    const script = [
      "import { DescribeNetworkInterfacesCommand, EC2Client } from '@aws-sdk/client-ec2';",
      `const c = new EC2Client({ endpoint: '${inst.ec2Endpoint}', region: 'us-west-2', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });`,
      `const r = await c.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'attachment.instance-id', Values: ['${inst.instanceId}'] }] }));`,
      'console.log(JSON.stringify(r.NetworkInterfaces.map((n) => n.MacAddress)));',
    ].join('\n');
    const out = await inNsAsync(inst.netnsPath, [
      'node',
      '--no-warnings',
      '--input-type=module',
      '-e',
      script,
    ]);
    expect(JSON.parse(out)).toContain(inst.enis[0]!.mac);
  });

  it('shows the router view over the admin endpoint', async () => {
    const d = vpc.describe();
    const res = await getJson(`${d.adminEndpoint}/vpc/router`);
    expect(res.status).toBe(200);
    const view = res.body as {
      addresses: Record<string, { instanceId: string }>;
      drops: Record<string, number>;
    };
    expect(view.addresses['10.0.0.10']?.instanceId).toBe(NODE_A);
    expect(Object.keys(view.drops).sort()).toEqual(
      [
        'egress-not-public',
        'ingress-not-public',
        'security-group',
        'source-dest-check',
        'unassigned-destination',
      ].sort(),
    );
    expect(vpc.errors).toEqual([]);
  });
});
