// Virtual VPC benchmark (root, Linux): bring-up and teardown of a 2-node and a 10-node VPC, attach-to-link-
// visible latency through the real @aws-sdk/client-ec2, and a 10 s iperf3 TCP stream between two instances
// through the router. Same-run baselines: the bare kernel floor (the same namespaces and veths, nothing else)
// for bring-up/teardown, one DescribeInstances round trip for attach, a direct veth between two namespaces
// for iperf3. Build first:
//   npx turbo run build --filter=@vpc-cni-kit/ec2-simulator && node benchmarks/virtual-vpc/bench.mjs
// `--rounds N` (default 5 for 2 nodes, 3 for 10 nodes), `--attaches N` (default 20), `--seconds N` (iperf3, 10).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startVirtualVpc } from '@vpc-cni-kit/ec2-simulator';
import { netnsAdd, netnsDel, netnsPath, openSync } from '@vpc-cni-kit/netlink';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Virtual VPC (root, Linux): bring-up and teardown of a 2-node and a 10-node VPC against the bare kernel floor,\n' +
    'attach-to-link-visible latency against a DescribeInstances round trip, and an iperf3 stream through the\n' +
    'router against a direct veth. Build @vpc-cni-kit/ec2-simulator first.',
  options: {
    rounds: {
      type: 'count',
      min: 1,
      description: 'bring-up/teardown rounds of each size (default 5 for 2 nodes, 3 for 10 nodes)',
    },
    attaches: { type: 'count', default: 20, min: 1, description: 'timed ENI attaches' },
    seconds: { type: 'count', default: 10, min: 1, description: 'length of each iperf3 stream' },
  },
});
const ROUNDS = args.rounds ?? 0;
const ATTACHES = args.attaches;
const SECONDS = args.seconds;
// The AWS SDK takes a few hundred milliseconds to load: only once the command line is read.
const {
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DescribeInstancesCommand,
  DetachNetworkInterfaceCommand,
  EC2Client,
} = await import('@aws-sdk/client-ec2');
const now = () => Number(process.hrtime.bigint()) / 1e6;

function scenario(nodes) {
  return {
    vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
    subnets: [{ id: 'subnet-0a000000000000001', cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' }],
    instances: Array.from({ length: nodes }, () => ({
      instanceType: 'm5.large',
      subnetId: 'subnet-0a000000000000001',
    })),
  };
}

/** The floor: nodes + 2 namespaces with lo up, one veth per node into the router namespace, then deleted. */
function floor(nodes) {
  const tag = randomBytes(3).toString('hex');
  const names = [
    `vckbench-${tag}-r`,
    `vckbench-${tag}-i`,
    ...Array.from({ length: nodes }, (_, i) => `vckbench-${tag}-${i}`),
  ];
  const t0 = now();
  for (const n of names) netnsAdd(n);
  const rtr = openSync({ netns: netnsPath(names[0]) });
  rtr.linkAdd({ kind: 'veth', name: 'inet0', up: true, peer: { name: 'eth0', netns: netnsPath(names[1]) } });
  for (let i = 0; i < nodes; i++) {
    rtr.linkAdd({
      kind: 'veth',
      name: `e${i}`,
      up: true,
      peer: { name: 'eth0', netns: netnsPath(names[i + 2]) },
    });
  }
  rtr.close();
  const up = now() - t0;
  const t1 = now();
  for (const n of names) netnsDel(n);
  return { up, down: now() - t1 };
}

async function upDown(nodes, rounds) {
  const s = { up: [], down: [], floorUp: [], floorDown: [] };
  for (let r = 0; r < rounds; r++) {
    const t0 = now();
    const vpc = await startVirtualVpc({ scenario: scenario(nodes), simulator: { rateLimits: false } });
    s.up.push(now() - t0);
    const t1 = now();
    await vpc.close();
    s.down.push(now() - t1);
    const f = floor(nodes);
    s.floorUp.push(f.up);
    s.floorDown.push(f.down);
  }
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, summarize(v)]));
}

async function attachLatency(n) {
  const vpc = await startVirtualVpc({ scenario: scenario(2), simulator: { rateLimits: false } });
  const ec2 = new EC2Client({
    endpoint: vpc.simulator.endpoint,
    region: vpc.simulator.region,
    credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' },
    maxAttempts: 1,
  });
  try {
    const inst = vpc.describe().instances[0];
    const h = openSync({ netns: inst.netnsPath });
    const s = { attach: [], detach: [], describe: [] };
    for (let i = 0; i < n; i++) {
      const eni = (
        await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: 'subnet-0a000000000000001' }))
      ).NetworkInterface;
      const seen = () => h.linkList().some((l) => l.address === eni.MacAddress);
      let t0 = now();
      const att = await ec2.send(
        new AttachNetworkInterfaceCommand({
          NetworkInterfaceId: eni.NetworkInterfaceId,
          InstanceId: inst.instanceId,
          DeviceIndex: 1,
        }),
      );
      while (!seen()) await new Promise((r) => setImmediate(r));
      s.attach.push(now() - t0);
      t0 = now();
      await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: att.AttachmentId }));
      while (seen()) await new Promise((r) => setImmediate(r));
      s.detach.push(now() - t0);
      t0 = now();
      await ec2.send(new DescribeInstancesCommand({ InstanceIds: [inst.instanceId] }));
      s.describe.push(now() - t0);
    }
    h.close();
    return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, summarize(v)]));
  } finally {
    ec2.destroy();
    await vpc.close();
  }
}

function iperf(serverNs, clientNs, address, seconds) {
  const server = spawn('nsenter', [`--net=${serverNs}`, 'iperf3', '-s', '-1', '-B', address], {
    stdio: 'ignore',
  });
  try {
    spawnSync('sleep', ['0.5']);
    const r = spawnSync(
      'nsenter',
      [`--net=${clientNs}`, 'iperf3', '-c', address, '-t', String(seconds), '-J'],
      {
        encoding: 'utf8',
        timeout: (seconds + 20) * 1000,
      },
    );
    if (r.status !== 0) throw new Error(`iperf3 failed: ${r.stderr || r.stdout}`);
    const j = JSON.parse(r.stdout);
    return {
      gbps: j.end.sum_received.bits_per_second / 1e9,
      retransmits: j.end.sum_sent.retransmits,
      sentBytes: j.end.sum_sent.bytes,
      receivedBytes: j.end.sum_received.bytes,
    };
  } finally {
    server.kill();
  }
}

function iperfDirect(seconds) {
  const tag = randomBytes(3).toString('hex');
  const [a, b] = [`vckbench-${tag}-a`, `vckbench-${tag}-b`];
  netnsAdd(a);
  netnsAdd(b);
  try {
    const ha = openSync({ netns: netnsPath(a) });
    const hb = openSync({ netns: netnsPath(b) });
    ha.linkAdd({
      kind: 'veth',
      name: 'eth0',
      mtu: 9001,
      up: true,
      peer: { name: 'eth0', mtu: 9001, netns: netnsPath(b) },
    });
    ha.addrAdd({ dev: 'eth0', address: '10.9.0.1/24' });
    hb.linkSet('eth0', { up: true });
    hb.addrAdd({ dev: 'eth0', address: '10.9.0.2/24' });
    ha.close();
    hb.close();
    return iperf(netnsPath(b), netnsPath(a), '10.9.0.2', seconds);
  } finally {
    netnsDel(a);
    netnsDel(b);
  }
}

async function iperfRouter(seconds) {
  const vpc = await startVirtualVpc({ scenario: scenario(2), simulator: { rateLimits: false } });
  try {
    const [a, b] = vpc.describe().instances;
    const r = iperf(b.netnsPath, a.netnsPath, b.privateIp, seconds);
    const links = JSON.parse(
      spawnSync('nsenter', [`--net=${vpc.describe().router.netnsPath}`, 'ip', '-s', '-j', 'link', 'show'], {
        encoding: 'utf8',
      }).stdout,
    );
    const linkDrops = links.reduce(
      (n, l) => n + (l.stats64?.rx?.dropped ?? 0) + (l.stats64?.tx?.dropped ?? 0),
      0,
    );
    return { ...r, drops: vpc.routerView().drops, linkDrops };
  } finally {
    await vpc.close();
  }
}

const fmt = (x) => x.toFixed(1);
const two = await upDown(2, ROUNDS || 5);
const ten = await upDown(10, ROUNDS || 3);
const att = await attachLatency(ATTACHES);
const viaRouter = await iperfRouter(SECONDS);
const direct = iperfDirect(SECONDS);

console.log('\n## Bring-up and teardown (ms, median; floor = same namespaces and veths, nothing else)\n');
console.log('| VPC | up | floor up | ratio | down | floor down | ratio | runs |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [name, r] of [
  ['2 nodes', two],
  ['10 nodes', ten],
]) {
  console.log(
    `| ${name} | ${fmt(r.up.median)} | ${fmt(r.floorUp.median)} | ${(r.up.median / r.floorUp.median).toFixed(1)}× | ${fmt(r.down.median)} | ${fmt(r.floorDown.median)} | ${(r.down.median / r.floorDown.median).toFixed(1)}× | ${r.up.n} |`,
  );
}
console.log(
  '\n## Attach / detach to link visible (ms, through the AWS SDK; baseline = one DescribeInstances)\n',
);
console.log('| step | median | p10–p90 | ratio to DescribeInstances |');
console.log('| --- | --- | --- | --- |');
for (const k of ['attach', 'detach', 'describe']) {
  const r = att[k];
  console.log(
    `| ${k} | ${fmt(r.median)} | ${fmt(r.p10)}–${fmt(r.p90)} | ${(r.median / att.describe.median).toFixed(2)}× |`,
  );
}
console.log(`\n## iperf3, ${SECONDS} s TCP stream (baseline = direct veth between two namespaces)\n`);
console.log('| path | Gbit/s | TCP retransmits | router nft drops (all reasons) | router link rx/tx drops |');
console.log('| --- | --- | --- | --- | --- |');
const nftDrops = Object.values(viaRouter.drops).reduce((a, b) => a + b, 0);
console.log(
  `| instance A → B via router | ${viaRouter.gbps.toFixed(2)} | ${viaRouter.retransmits} | ${nftDrops} | ${viaRouter.linkDrops} |`,
);
console.log(`| direct veth (baseline) | ${direct.gbps.toFixed(2)} | ${direct.retransmits} | – | – |`);
console.log(`\nrouter / direct throughput: ${(viaRouter.gbps / direct.gbps).toFixed(2)}×`);
