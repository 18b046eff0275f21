// Controller time from pod creation to the vpc.amazonaws.com/pod-eni annotation under a burst of 50 pods, for
// @vpc-cni-kit/vpc-resource-controller against ec2-simulator (real AWS SDK, throttling off) and kube-simulator
// (HTTPS, informers through @kubernetes/client-node): the program in its own process, the simulators in this one. Baseline in the same run: one plain
// annotation merge patch of a pod through the same client, i.e. the Kubernetes round trip every annotation costs.
//   npx turbo run build --filter=@vpc-cni-kit/vpc-resource-controller... --filter=@vpc-cni-kit/ec2-simulator... --filter=@vpc-cni-kit/kube-simulator...
//   node benchmarks/vpc-resource-controller/burst.mjs          # a first argument sets the rounds (default 3), a second the burst (50)

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import { startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { summarize } from '../lib/timing.mjs';
import { createControllerCrds } from './crds.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Controller time from pod creation to the pod-eni annotation under a burst of pods, for the\n' +
    'vpc-resource-controller program against ec2-simulator and kube-simulator, against one plain annotation\n' +
    'patch of a pod. Build @vpc-cni-kit/vpc-resource-controller, ec2-simulator and kube-simulator first.',
  positionals: [
    { name: 'rounds', type: 'count', default: 3, min: 1, description: 'bursts' },
    { name: 'burst', type: 'count', default: 50, min: 1, description: 'pods per burst' },
  ],
});
const ROUNDS = args.rounds;
const BURST = args.burst;
// @kubernetes/client-node takes a few hundred milliseconds to load: only once the command line is read.
const { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
const repo = new URL('../../', import.meta.url).pathname;
const NODES = [
  { name: 'node-1', id: 'i-0c000000000000001' },
  { name: 'node-2', id: 'i-0c000000000000002' },
];
const SG = 'sg-0c000000000000002';

const p99 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function round(concurrency, latencyMs) {
  const dir = mkdtempSync(join(tmpdir(), 'vpc-rc-bench-'));
  const ec2 = await startEc2Simulator({
    rateLimits: false,
    scenario: {
      vpcs: [{ id: 'vpc-0c000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
      subnets: [{ id: 'subnet-0c000000000000001', cidrBlock: '10.0.0.0/22', availabilityZone: 'us-west-2a' }],
      securityGroups: [{ id: SG, name: 'db-client', description: 'db clients' }],
      instances: NODES.map((n) => ({
        id: n.id,
        instanceType: 'm5.2xlarge',
        subnetId: 'subnet-0c000000000000001',
      })),
    },
  });
  const kube = await startKubeSimulator();
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig());
  createControllerCrds(kube);
  for (const n of NODES) {
    kube.objects.create('v1', 'nodes', {
      metadata: { name: n.name },
      spec: { providerID: `aws:///us-west-2a/${n.id}` },
    });
    kube.objects.create('vpcresources.k8s.aws/v1alpha1', 'cninodes', {
      metadata: { name: n.name },
      spec: { features: [{ name: 'SecurityGroupsForPods' }] },
    });
  }
  kube.objects.create('vpcresources.k8s.aws/v1beta1', 'securitygrouppolicies', {
    metadata: { name: 'db-client', namespace: 'default' },
    spec: { podSelector: { matchLabels: { app: 'db-client' } }, securityGroups: { groupIds: [SG] } },
  });

  // Baseline: a plain annotation merge patch of a pod, sequentially, through the same client.
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  kube.objects.create('v1', 'pods', {
    metadata: { name: 'baseline', namespace: 'default' },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  const baseline = [];
  for (let i = 0; i < BURST + 10; i++) {
    const t0 = performance.now();
    await core.patchNamespacedPod(
      { namespace: 'default', name: 'baseline', body: { metadata: { annotations: { n: String(i) } } } },
      mergePatch,
    );
    if (i >= 10) baseline.push(performance.now() - t0);
  }

  // The program, in its own process as in a cluster (the simulators share this one).
  const controller = spawn(
    process.execPath,
    [
      join(repo, 'examples/vpc-resource-controller/dist/bin/vpc-resource-controller.cjs'),
      ...['--cluster-name', 'bench', '--region', ec2.region, '--ec2-endpoint', ec2.endpoint],
      ...['--kubeconfig', kubeconfig, '--log-level', 'warn', '--branch-concurrency', String(concurrency)],
      '--metrics-bind-address=0',
    ],
    {
      env: {
        PATH: process.env.PATH,
        AWS_ACCESS_KEY_ID: 'AKID',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const cap = (n) => kube.objects.get('v1', 'nodes', n)?.status?.capacity?.['vpc.amazonaws.com/pod-eni'];
  while (!NODES.every((n) => cap(n.name) === '38')) await sleep(10);

  // EC2's own latency for the two calls per pod (0: the simulator's loopback answer, ~1 ms).
  for (const action of ['CreateNetworkInterface', 'AssociateTrunkInterface'])
    if (latencyMs > 0) ec2.faults.add({ kind: 'latency', ms: latencyMs, action });
  ec2.clearCalls();
  const created = new Map();
  const seen = new Map();
  const start = performance.now();
  for (let i = 0; i < BURST; i++) {
    const name = `client-${i}`;
    created.set(name, performance.now());
    kube.objects.create('v1', 'pods', {
      metadata: { name, namespace: 'default', labels: { app: 'db-client' } },
      spec: { nodeName: NODES[i % 2].name, containers: [{ name: 'c', image: 'busybox' }] },
    });
  }
  while (seen.size < BURST) {
    for (const [name] of created) {
      if (seen.has(name)) continue;
      if (
        kube.objects.get('v1', 'pods', name, 'default')?.metadata?.annotations?.['vpc.amazonaws.com/pod-eni']
      )
        seen.set(name, performance.now());
    }
    if (performance.now() - start > 120_000)
      throw new Error(`only ${seen.size} of ${BURST} annotated in 120 s`);
    await sleep(1);
  }
  const latencies = [...created].map(([n, t]) => seen.get(n) - t);
  const total = Math.max(...seen.values()) - start;
  const calls = ec2.calls.length;
  controller.kill('SIGTERM');
  await new Promise((r) => controller.once('exit', r));
  await kube.close();
  await ec2.close();
  rmSync(dir, { recursive: true, force: true });
  return { latencies, baseline, total, calls };
}

// Each round runs every variant (8 pods at once, the default, and one at a time; with the simulator's own answer
// time and with 100 ms added to CreateNetworkInterface and AssociateTrunkInterface, nearer to EC2's), in turn,
// each on fresh simulators.
const VARIANTS = [
  { c: 8, l: 0 },
  { c: 1, l: 0 },
  { c: 8, l: 100 },
  { c: 1, l: 100 },
];
const results = VARIANTS.map(() => ({ latencies: [], totals: [], calls: [] }));
const baseline = [];
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? [...VARIANTS.keys()].reverse() : [...VARIANTS.keys()];
  for (const i of order) {
    const x = await round(VARIANTS[i].c, VARIANTS[i].l);
    results[i].latencies.push(...x.latencies);
    results[i].totals.push(x.total);
    results[i].calls.push(x.calls);
    baseline.push(...x.baseline);
  }
}
const base = summarize(baseline);
const f = (x) => x.toFixed(1);
console.log(
  `${ROUNDS} rounds × a burst of ${BURST} pods (2 × m5.2xlarge, trunks ready), Node ${process.version}\n`,
);
console.log(
  '| variant | creation → annotation, median ms | p99 ms | whole burst ms (median) | per-pod median / baseline |',
);
console.log('| --- | --- | --- | --- | --- |');
console.log(
  `| baseline: one annotation merge patch (client-node → kube-simulator) | ${f(base.median)} | ${f(p99(baseline))} | — | 1.0× |`,
);
VARIANTS.forEach((v, i) => {
  const lat = summarize(results[i].latencies);
  const tot = summarize(results[i].totals);
  const label = `${v.c === 8 ? '8 pods at once (default)' : 'one pod at a time'}, EC2 ${v.l === 0 ? 'simulator' : `+${v.l} ms`}`;
  console.log(
    `| ${label} | ${f(lat.median)} | ${f(p99(results[i].latencies))} | ${f(tot.median)} | ${f(lat.median / base.median)}× |`,
  );
});
console.log(
  `\nEC2 calls per burst (median): ${summarize(results[0].calls).median} (${f(summarize(results[0].calls).median / BURST)} per pod)`,
);
