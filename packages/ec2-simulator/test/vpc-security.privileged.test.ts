import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  AssociateTrunkInterfaceCommand,
  AttachNetworkInterfaceCommand,
  AuthorizeSecurityGroupEgressCommand,
  AuthorizeSecurityGroupIngressCommand,
  CreateNetworkInterfaceCommand,
  DisassociateTrunkInterfaceCommand,
  type EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  RevokeSecurityGroupEgressCommand,
  RevokeSecurityGroupIngressCommand,
} from '@aws-sdk/client-ec2';
import { netnsAdd, netnsDel } from '@vpc-cni-kit/netlink';
import { describePrivileged, uniqueName } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startVirtualVpc, type VirtualVpc } from '../src/vpc/index.js';
import { inNs, pings, sdk } from './vpc-support.js';

const VPC = 'vpc-0a000000000000001';
const SUBNET = 'subnet-0a000000000000001';
const SG_DB = 'sg-0d000000000000001';
const SG_X = 'sg-0e000000000000002';
const SG_OTHER = 'sg-0f000000000000003';
const DB = 'i-0d000000000000001';
const IN_X = 'i-0e000000000000002';
const NOT_X = 'i-0f000000000000003';

/** A database instance, a client in group X, a client outside it (which also carries a trunk). */
const scenario = {
  region: 'us-west-2',
  vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16'] }],
  subnets: [{ id: SUBNET, cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' }],
  securityGroups: [
    {
      id: SG_DB,
      name: 'db',
      ingress: [{ ipProtocol: 'tcp', fromPort: 5432, toPort: 5432, referencedGroupId: SG_X }],
    },
    { id: SG_X, name: 'clients' },
    { id: SG_OTHER, name: 'others' },
  ],
  instances: [
    {
      id: DB,
      instanceType: 'm5.large',
      subnetId: SUBNET,
      securityGroupIds: [SG_DB],
      privateIpAddress: '10.0.0.10',
    },
    {
      id: IN_X,
      instanceType: 'm5.large',
      subnetId: SUBNET,
      securityGroupIds: [SG_X],
      privateIpAddress: '10.0.0.20',
    },
    {
      id: NOT_X,
      instanceType: 'm5.large',
      subnetId: SUBNET,
      securityGroupIds: [SG_OTHER],
      privateIpAddress: '10.0.0.30',
    },
  ],
};

/** Opens a TCP connection to 10.0.0.10:5432 from a namespace; the server's greeting proves the reply passed. */
function connects(netnsPath: string): boolean {
  const r = spawnSync(
    'nsenter',
    [`--net=${netnsPath}`, 'timeout', '1', 'bash', '-c', 'exec 3<>/dev/tcp/10.0.0.10/5432 && head -c 5 <&3'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  return r.status === 0 && r.stdout === 'hello';
}

describePrivileged('virtual VPC: security groups and branch ENIs on packets', () => {
  let vpc: VirtualVpc;
  let ec2: EC2Client;
  let ns: Record<string, string>;
  let server: ChildProcess | undefined;
  const pod = uniqueName('vck-sgpod-');
  let podPath = '';

  beforeAll(async () => {
    vpc = await startVirtualVpc({ scenario, simulator: { rateLimits: false }, pollMs: 100 });
    ec2 = sdk(vpc);
    ns = Object.fromEntries(vpc.describe().instances.map((i) => [i.instanceId, i.netnsPath]));
    server = spawn(
      'nsenter',
      [
        `--net=${ns[DB]}`,
        process.execPath,
        '-e',
        "require('net').createServer((s) => s.end('hello')).listen(5432, '10.0.0.10', () => console.log('up'))",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.once('data', () => resolve());
      server!.once('exit', (c) => reject(new Error(`server exited ${c}`)));
    });
    podPath = netnsAdd(pod);
  });

  afterAll(async () => {
    if (server?.pid !== undefined) server.kill('SIGTERM');
    if (podPath) netnsDel(pod);
    ec2?.destroy();
    await vpc?.close();
  });

  const eniOf = (instanceId: string) => vpc.simulator.state.instance(instanceId)!.primaryEniId;
  const sgDrops = () => vpc.routerView().drops['security-group'];

  it('accepts TCP 5432 from an ENI in group X, and its reply passes', () => {
    const before = sgDrops();
    expect(connects(ns[IN_X]!)).toBe(true);
    expect(sgDrops()).toBe(before);
  });

  it('refuses TCP 5432 from an ENI not in X, and counts it against the database ENI (ingress)', () => {
    const before = sgDrops();
    expect(connects(ns[NOT_X]!)).toBe(false);
    const view = vpc.routerView();
    expect(view.drops['security-group']).toBeGreaterThan(before);
    expect(view.securityGroupDropsByEni[eniOf(DB)]!.ingress).toBeGreaterThan(0);
    expect(view.drops['source-dest-check']).toBe(0);
  });

  it('applies a group change to new flows at once (ENI groups and rules)', async () => {
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: eniOf(NOT_X),
        Groups: [SG_OTHER, SG_X],
      }),
    );
    expect(connects(ns[NOT_X]!)).toBe(true);
    await ec2.send(
      new RevokeSecurityGroupIngressCommand({
        GroupId: SG_DB,
        IpPermissions: [
          { IpProtocol: 'tcp', FromPort: 5432, ToPort: 5432, UserIdGroupPairs: [{ GroupId: SG_X }] },
        ],
      }),
    );
    expect(connects(ns[IN_X]!)).toBe(false);
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: SG_DB,
        IpPermissions: [
          { IpProtocol: 'tcp', FromPort: 5432, ToPort: 5432, UserIdGroupPairs: [{ GroupId: SG_X }] },
        ],
      }),
    );
    expect(connects(ns[IN_X]!)).toBe(true);
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eniOf(NOT_X), Groups: [SG_OTHER] }),
    );
    expect(connects(ns[NOT_X]!)).toBe(false);
  });

  it('enforces egress rules of the sending ENI (towards the internet too) and counts them as egress', async () => {
    const internet = vpc.describe().internet.host;
    expect(pings(ns[NOT_X]!, internet)).toBe(true);
    const all = [{ IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] }];
    await ec2.send(new RevokeSecurityGroupEgressCommand({ GroupId: SG_OTHER, IpPermissions: all }));
    expect(pings(ns[NOT_X]!, internet)).toBe(false);
    expect(vpc.routerView().securityGroupDropsByEni[eniOf(NOT_X)]!.egress).toBeGreaterThan(0);
    await ec2.send(new AuthorizeSecurityGroupEgressCommand({ GroupId: SG_OTHER, IpPermissions: all }));
    expect(pings(ns[NOT_X]!, internet)).toBe(true);
  });

  it('filters a branch ENI by its own groups, not its trunk’s; disassociating makes it unreachable at once', async () => {
    // A trunk in group X on the instance outside X; a branch in "others" (not X).
    const trunk = (
      await ec2.send(
        new CreateNetworkInterfaceCommand({ SubnetId: SUBNET, InterfaceType: 'trunk', Groups: [SG_X] }),
      )
    ).NetworkInterface!;
    await ec2.send(
      new AttachNetworkInterfaceCommand({
        NetworkInterfaceId: trunk.NetworkInterfaceId!,
        InstanceId: NOT_X,
        DeviceIndex: 1,
      }),
    );
    const branch = (
      await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET, Groups: [SG_OTHER] }))
    ).NetworkInterface!;
    const assoc = await ec2.send(
      new AssociateTrunkInterfaceCommand({
        BranchInterfaceId: branch.NetworkInterfaceId!,
        TrunkInterfaceId: trunk.NetworkInterfaceId!,
        VlanId: 5,
      }),
    );
    // The node's side, as a CNI would build it here: a link stacked on the trunk with the branch's MAC,
    // moved into the pod's namespace.
    const host = ns[NOT_X]!;
    const trunkIf = JSON.parse(inNs(host, ['ip', '-j', 'link', 'show'])).find(
      (l: { address: string }) => l.address === trunk.MacAddress,
    ).ifname as string;
    inNs(host, ['ip', 'link', 'set', trunkIf, 'up']);
    inNs(host, [
      'ip',
      'link',
      'add',
      'link',
      trunkIf,
      'name',
      'vlan.eth.5',
      'address',
      branch.MacAddress!,
      'type',
      'macvlan',
      'mode',
      'bridge',
    ]);
    inNs(host, ['ip', 'link', 'set', 'vlan.eth.5', 'netns', pod]);
    inNs(podPath, ['ip', 'link', 'set', 'lo', 'up']);
    inNs(podPath, ['ip', 'link', 'set', 'vlan.eth.5', 'up']);
    inNs(podPath, ['ip', 'addr', 'add', `${branch.PrivateIpAddress}/24`, 'dev', 'vlan.eth.5']);
    inNs(podPath, ['ip', 'route', 'add', 'default', 'via', '10.0.0.1']);

    const before = vpc.routerView().securityGroupDropsByEni[eniOf(DB)]?.ingress ?? 0;
    expect(connects(podPath)).toBe(false);
    expect(vpc.routerView().securityGroupDropsByEni[eniOf(DB)]!.ingress).toBeGreaterThan(before);
    expect(vpc.routerView().addresses[branch.PrivateIpAddress!]?.eniId).toBe(branch.NetworkInterfaceId);

    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: branch.NetworkInterfaceId!,
        Groups: [SG_X],
      }),
    );
    expect(connects(podPath)).toBe(true);
    // The trunk's own groups leave the branch alone: take X away from the trunk, the branch still connects.
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: trunk.NetworkInterfaceId!,
        Groups: [SG_OTHER],
      }),
    );
    expect(connects(podPath)).toBe(true);

    await ec2.send(
      new DisassociateTrunkInterfaceCommand({ AssociationId: assoc.InterfaceAssociation!.AssociationId! }),
    );
    expect(vpc.routerView().addresses[branch.PrivateIpAddress!]).toBeUndefined();
    expect(connects(podPath)).toBe(false);
    expect(vpc.errors).toEqual([]);
  });

  it('a slow association makes the branch reachable only when the delay has passed', async () => {
    const trunkId = vpc.simulator.state.enis().find((e) => e.interfaceType === 'trunk')!.id;
    const branch = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET, Groups: [SG_X] })))
      .NetworkInterface!;
    vpc.simulator.faults.add({ kind: 'slow-associate', ms: 300 });
    try {
      await ec2.send(
        new AssociateTrunkInterfaceCommand({
          BranchInterfaceId: branch.NetworkInterfaceId!,
          TrunkInterfaceId: trunkId,
          VlanId: 6,
        }),
      );
      expect(vpc.routerView().addresses[branch.PrivateIpAddress!]).toBeUndefined();
      const deadline = Date.now() + 3000;
      while (!vpc.routerView().addresses[branch.PrivateIpAddress!] && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(vpc.routerView().addresses[branch.PrivateIpAddress!]?.eniId).toBe(branch.NetworkInterfaceId);
    } finally {
      vpc.simulator.faults.clear();
    }
  });
});
