// EC2 calls (and wall time) per top-up, per new ENI, per freed ENI and per leaked-ENI GC run, through
// @vpc-cni-kit/eni-manager against @vpc-cni-kit/ec2-simulator over loopback HTTP with the real AWS SDK.
// Baseline for the timings: one DescribeSubnets round trip, measured in the same run.
//   npx turbo run build --filter=@vpc-cni-kit/eni-manager --filter=@vpc-cni-kit/ec2-simulator
//   node benchmarks/eni-manager/calls.mjs          # a first argument sets the rounds (default 5)
import { startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import {
  createEc2Api,
  createEniManager,
  createImdsNodeMetadata,
  ImdsClient,
  mutatingActions,
} from '@vpc-cni-kit/eni-manager';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'EC2 calls and wall time per top-up, new ENI, freed ENI and leaked-ENI GC run, through @vpc-cni-kit/eni-manager\n' +
    'against ec2-simulator, against one DescribeSubnets round trip. Build eni-manager and ec2-simulator first.',
  positionals: [
    { name: 'rounds', type: 'count', default: 5, min: 1, description: 'rounds of every operation' },
  ],
});
const ROUNDS = args.rounds;
const INSTANCE = 'i-0b000000000000001';
const VPC = 'vpc-0b000000000000001';
const SUBNET = 'subnet-0b000000000000001';
const scenario = {
  vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16'] }],
  subnets: [
    { id: SUBNET, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' },
    {
      id: 'subnet-0b000000000000002',
      cidrBlock: '10.0.16.0/20',
      availabilityZone: 'us-west-2a',
      tags: { 'kubernetes.io/role/cni': '1' },
    },
  ],
  instances: [{ id: INSTANCE, instanceType: 'm5.4xlarge', subnetId: SUBNET }],
};

const sim = await startEc2Simulator({ scenario, rateLimits: false });
let events = [];
const hooks = { onCall: (e) => events.push(e) };
const generous = { capacity: 10_000, refillPerSecond: 10_000 };
const ec2 = createEc2Api({
  region: sim.region,
  endpoint: sim.endpoint,
  credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' },
  hooks,
  rateLimits: Object.fromEntries(
    ['describe', 'attachDetach', 'createDelete', 'assignUnassign', 'modify', 'tags'].map((f) => [
      f,
      generous,
    ]),
  ),
});
const metadata = createImdsNodeMetadata(new ImdsClient({ endpoint: sim.imdsEndpoint(INSTANCE), hooks }));
const node = await metadata.discoverNode();
const nodeFacts = {
  instanceId: node.instanceId,
  vpcId: node.primaryEni.vpcId,
  availabilityZone: node.availabilityZone,
  primarySubnetId: node.primaryEni.subnetId,
  securityGroupIds: node.primaryEni.securityGroupIds,
};
const fast = { baseMs: 2, maxMs: 50, factor: 2, jitter: 0.15 };
const timings = { imdsBackoff: fast, detachBackoff: fast };
const withDiscovery = createEniManager({ ec2, metadata, node: nodeFacts, clusterName: 'bench', timings });
const noDiscovery = createEniManager({ ec2, metadata, node: nodeFacts, subnetDiscovery: false, timings });

const rows = {};
function record(name, fn) {
  return async (...args) => {
    events = [];
    const t0 = process.hrtime.bigint();
    const result = await fn(...args);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const ec2Events = events.filter((e) => e.service === 'ec2');
    const row = (rows[name] ??= { ms: [], calls: [], mutating: [], imds: [] });
    row.ms.push(ms);
    row.calls.push(ec2Events.length);
    row.mutating.push(ec2Events.filter((e) => mutatingActions.has(e.action)).length);
    row.imds.push(events.filter((e) => e.service === 'imds').length);
    return result;
  };
}

const baseline = record('baseline: one DescribeSubnets', () =>
  ec2.call('DescribeSubnets', { SubnetIds: [SUBNET] }),
);
const topUp = record('top-up: assignIpv4 (5 addresses)', (id) =>
  withDiscovery.assignIpv4(id, { ipv4Count: 5 }),
);
const topUpPrefix = record('top-up: assignIpv4 (1 prefix)', (id) =>
  withDiscovery.assignIpv4(id, { prefixCount: 1 }),
);
const release = record('release: unassignIpv4', (id, req) => withDiscovery.unassignIpv4(id, req));
const allocD = record('new ENI (subnet discovery on)', () => withDiscovery.allocateEni({ ipv4Count: 9 }));
const allocN = record('new ENI (subnet discovery off)', () => noDiscovery.allocateEni({ ipv4Count: 9 }));
const free = record('free ENI', (id) => withDiscovery.freeEni(id));
const gc = record('leaked-ENI GC (10 leaked)', () => withDiscovery.collectLeakedEnis());

for (let i = 0; i < 20; i++) await baseline(); // warm the SDK and connections
delete rows['baseline: one DescribeSubnets'];
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < 10; i++) await baseline();
  const enis = [];
  for (let i = 0; i < 3; i++) enis.push(await allocD());
  for (let i = 0; i < 3; i++) enis.push(await allocN());
  for (const eni of enis) {
    const got = await topUp(eni.eniId);
    await release(eni.eniId, { ipv4Addresses: got.ipv4Addresses });
    const p = await topUpPrefix(eni.eniId);
    await release(eni.eniId, { ipv4Prefixes: p.ipv4Prefixes });
  }
  for (const eni of enis) await free(eni.eniId);
  // Ten leaked ENIs, as a crashed node would leave them (created 10 minutes ago).
  const createdAt = `${new Date(Date.now() - 600_000).toISOString().slice(0, 19)}Z`;
  for (let i = 0; i < 10; i++) {
    await ec2.call('CreateNetworkInterface', {
      SubnetId: SUBNET,
      Description: 'aws-K8S-i-0b0000000000000ff',
      TagSpecifications: [
        {
          ResourceType: 'network-interface',
          Tags: [
            { Key: 'node.k8s.amazonaws.com/instance_id', Value: 'i-0b0000000000000ff' },
            { Key: 'cluster.k8s.amazonaws.com/name', Value: 'bench' },
            { Key: 'node.k8s.amazonaws.com/createdAt', Value: createdAt },
          ],
        },
      ],
    });
  }
  await gc();
}
ec2.destroy();
await sim.close();

const base = summarize(rows['baseline: one DescribeSubnets'].ms).median;
const lines = [
  '| operation | EC2 calls (median) | mutating EC2 calls (median, max) | IMDS calls (median) | median ms | ratio to one DescribeSubnets |',
  '| --- | --- | --- | --- | --- | --- |',
];
for (const [name, r] of Object.entries(rows)) {
  const m = summarize(r.mutating);
  lines.push(
    `| ${name} | ${summarize(r.calls).median} | ${m.median}, ${m.max} | ${summarize(r.imds).median} | ${summarize(r.ms).median.toFixed(2)} | ${(summarize(r.ms).median / base).toFixed(1)}× |`,
  );
}
console.log(
  `eni-manager EC2 calls, ${ROUNDS} rounds, node ${process.version}, m5.4xlarge in ec2-simulator\n`,
);
console.log(lines.join('\n'));
