// Simulator throughput through the real @aws-sdk/client-ec2: DescribeNetworkInterfaces (filtered by instance, as
// ipamd calls it) and AssignPrivateIpAddresses, sequential and with 8 requests in flight. Baseline, same run: a
// bare node:http server replaying the simulator's own recorded answer through the same SDK client, so the ratio
// shows what the simulator's work (parse, validate, state, render) costs on top of SDK + HTTP. Build first:
//   npx turbo run build --filter=@vpc-cni-kit/ec2-simulator && node benchmarks/ec2-simulator/throughput.mjs
// `--rounds N` (default 5) and `--requests N` (default 300 per variant and round).
import { createServer } from 'node:http';
import { startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'ec2-simulator throughput through the real @aws-sdk/client-ec2 (DescribeNetworkInterfaces, AssignPrivate-\n' +
    "IpAddresses; sequential and 8 in flight) against a bare node:http server replaying the simulator's answer.\n" +
    'Build @vpc-cni-kit/ec2-simulator first.',
  options: {
    rounds: { type: 'count', default: 5, min: 1, description: 'rounds of every variant' },
    requests: { type: 'count', default: 300, min: 1, description: 'requests per variant and round' },
  },
});
const ROUNDS = args.rounds;
const REQUESTS = args.requests;
// The AWS SDK takes a few hundred milliseconds to load: only once the command line is read.
const { AssignPrivateIpAddressesCommand, DescribeNetworkInterfacesCommand, EC2Client } = await import(
  '@aws-sdk/client-ec2'
);
const CONCURRENCY = 8;

const NODE = 'i-0a000000000000001';
const SUBNET = 'subnet-0a000000000000001';
const sim = await startEc2Simulator({
  rateLimits: false,
  scenario: {
    vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
    subnets: [{ id: SUBNET, cidrBlock: '10.0.0.0/16' }],
    instances: [{ id: NODE, instanceType: 'c5.18xlarge', subnetId: SUBNET }],
  },
});
// A busy node: 14 more ENIs attached with 20 addresses each (15 × 21 addresses in the filtered answer).
for (let d = 1; d <= 14; d++) {
  const eni = sim.state.createNetworkInterface({ subnetId: SUBNET, secondaryCount: 20 });
  sim.state.attach(eni.id, NODE, d, 0);
}
// Spare unattached ENIs to assign into (49 free slots each).
const needed = Math.ceil((ROUNDS * REQUESTS * 4 + 4 * REQUESTS) / 49) + 1;
const spare = Array.from({ length: needed }, () => sim.state.createNetworkInterface({ subnetId: SUBNET }).id);
let cursor = 0;
let used = 0;
const nextEni = () => {
  if (used === 49) {
    cursor++;
    used = 0;
  }
  used++;
  return spare[cursor];
};

const enisInAccount = sim.state.enis().length;

// The baseline server replays the exact bytes the simulator answers (captured once), per action.
const post = async (body) => (await fetch(sim.endpoint, { method: 'POST', body })).text();
const describeBody = `Action=DescribeNetworkInterfaces&Version=2016-11-15&Filter.1.Name=attachment.instance-id&Filter.1.Value.1=${NODE}`;
const assignBody = (eni) =>
  `Action=AssignPrivateIpAddresses&Version=2016-11-15&NetworkInterfaceId=${eni}&SecondaryPrivateIpAddressCount=1`;
const recorded = {
  DescribeNetworkInterfaces: await post(describeBody),
  AssignPrivateIpAddresses: await post(assignBody(nextEni())),
};
const bare = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => {
    body += c;
  });
  req.on('end', () => {
    const action = /Action=(\w+)/.exec(body)?.[1];
    res.writeHead(200, {
      'content-type': 'text/xml',
      'x-amzn-requestid': '00000000-0000-4000-a000-000000000000',
    });
    res.end(recorded[action]);
  });
});
await new Promise((r) => bare.listen(0, '127.0.0.1', r));

const bareEndpoint = `http://127.0.0.1:${bare.address().port}`;
const credentials = { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' };
const simClient = new EC2Client({ endpoint: sim.endpoint, region: sim.region, credentials, maxAttempts: 1 });
const bareClient = new EC2Client({
  endpoint: `http://127.0.0.1:${bare.address().port}`,
  region: 'us-west-2',
  credentials,
  maxAttempts: 1,
});

const describe = new DescribeNetworkInterfacesCommand({
  Filters: [{ Name: 'attachment.instance-id', Values: [NODE] }],
});
const assign = () =>
  new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: nextEni(), SecondaryPrivateIpAddressCount: 1 });
const checked = (n) => (r) => {
  if (r.NetworkInterfaces.length !== n) throw new Error('unexpected answer');
};
// Pairs: [baseline replaying the recorded answer, simulator].
const variants = {
  'DescribeNetworkInterfaces (filter attachment.instance-id; 15 ENIs × 21 addresses)': [
    () => bareClient.send(describe).then(checked(15)),
    () => simClient.send(describe).then(checked(15)),
  ],
  'AssignPrivateIpAddresses (SecondaryPrivateIpAddressCount=1)': [
    () =>
      bareClient.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: 'eni-0000000000000000a',
          SecondaryPrivateIpAddressCount: 1,
        }),
      ),
    () => simClient.send(assign()),
  ],
  // Without the SDK (no signing, no XML parsing): the simulator's own capacity, for cluster-scale budgets.
  'DescribeNetworkInterfaces, raw HTTP POST (no SDK)': [
    () => fetch(bareEndpoint, { method: 'POST', body: describeBody }).then((r) => r.text()),
    () => fetch(sim.endpoint, { method: 'POST', body: describeBody }).then((r) => r.text()),
  ],
  'AssignPrivateIpAddresses, raw HTTP POST (no SDK)': [
    () =>
      fetch(bareEndpoint, { method: 'POST', body: assignBody('eni-0000000000000000a') }).then((r) =>
        r.text(),
      ),
    () => fetch(sim.endpoint, { method: 'POST', body: assignBody(nextEni()) }).then((r) => r.text()),
  ],
};

async function run(fn, n, concurrency) {
  const t0 = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await fn();
      }
    }),
  );
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

// Warm up every path (JIT, sockets, SDK middleware).
for (const pair of Object.values(variants)) for (const fn of pair) await run(fn, 50, 1);

// Interleaved: each round runs baseline and simulator back to back, so machine noise hits both alike.
const samples = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, [baseline, simulated]] of Object.entries(variants)) {
    for (const c of [1, CONCURRENCY]) {
      const key = `${name}|${c}`;
      samples[key] ??= { baseline: [], simulator: [] };
      samples[key].baseline.push(await run(baseline, REQUESTS, c));
      samples[key].simulator.push(await run(simulated, REQUESTS, c));
    }
  }
}

console.log(
  `node ${process.version}, ${ROUNDS} rounds × ${REQUESTS} requests per variant, ${enisInAccount} ENIs in the account`,
);
console.log(
  '| action | in flight | simulator median req/s (p10–p90) | replay baseline median req/s | simulator / baseline |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const [key, s] of Object.entries(samples)) {
  const [name, c] = key.split('|');
  const a = summarize(s.simulator);
  const b = summarize(s.baseline);
  console.log(
    `| ${name} | ${c} | ${a.median.toFixed(0)} (${a.p10.toFixed(0)}–${a.p90.toFixed(0)}) | ${b.median.toFixed(0)} | ${(a.median / b.median).toFixed(2)}× |`,
  );
}

simClient.destroy();
bareClient.destroy();
bare.close();
await sim.close();
