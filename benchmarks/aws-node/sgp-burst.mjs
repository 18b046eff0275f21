// Security groups for pods end to end under a burst (root, Linux): 50 Pod objects created at once on a virtual
// VPC with two m5.2xlarge nodes, aws-node with ENABLE_POD_ENI (strict, macvlan branch links) on both and the real
// vpc-resource-controller program (control plane: outside the nodes, its own ServiceAccount, EC2 on loopback).
// Each pod goes through the harness as through a kubelet: object created through the API server (the controller's
// real webhook adds the pod-eni limit to those a SecurityGroupPolicy selects), ADD through libcni once the controller annotated it, Running.
//
// Per round, two bursts of the same size, alternating which goes first: 50 branch pods (app=db-client) and 50
// ordinary pods (the same-run baseline: no controller on their path, addresses from the warm pool). Reports
// creation → annotation (the controller: watch, CreateNetworkInterface, AssociateTrunkInterface, patch),
// annotation → Running (the node's ADD under the burst), and creation → Running for both kinds.
// Complements benchmarks/vpc-resource-controller/burst.mjs (the controller alone, in process) and
// benchmarks/aws-node/branch.mjs (one pod at a time, the test playing the controller).
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build
//   node benchmarks/aws-node/sgp-burst.mjs           # --rounds N (default 3), --burst N (default 50)
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  binDir,
  buildLibcniRunner,
  leakedNetns,
  loadClusterHarness,
  now,
  ratioTable,
  stats,
} from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Security groups for pods end to end under a burst (root, Linux): Pod objects created at once on two nodes\n' +
    'with aws-node and the real vpc-resource-controller; branch pods against ordinary pods (the baseline), in\n' +
    'alternating order. Build everything first (npx turbo run build).',
  options: {
    rounds: { type: 'count', default: 3, min: 1, description: 'rounds of one burst of each kind' },
    burst: { type: 'count', default: 50, min: 1, description: 'pods per burst' },
  },
});
const ROUNDS = args.rounds;
const BURST = args.burst;

const { runner } = buildLibcniRunner();
const { Cluster } = await loadClusterHarness();
// One subnet and the pods' group (ids as in the harness's security-groups layout).
const SUBNET = 'subnet-0c000000000000001';
const PODS_GROUP = 'sg-0c0000000000000a1';

let cluster;
let runId = '';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function burst(kind, round) {
  const t0 = now();
  const labels = kind === 'branch' ? { app: 'db-client' } : { app: 'web' };
  const annotated = new Map();
  const running = new Map();
  const names = Array.from({ length: BURST }, (_, i) => `${kind}-${round}-${i}`);
  // addPod creates the Pod objects at once, through the API server while the controller serves its webhook (each
  // create then includes the webhook's call, a few milliseconds): the 50 objects exist within tens of ms.
  const adds = names.map((name, i) =>
    cluster.addPod(i % cluster.nodes.length, { name, labels, retryForMs: 120_000 }).then((pod) => {
      running.set(name, now());
      return pod;
    }),
  );
  const created = now();
  let watching = kind === 'branch';
  const watcher = (async () => {
    while (watching) {
      for (const n of names)
        if (!annotated.has(n) && cluster.podEniAnnotation('default', n) !== undefined)
          annotated.set(n, now());
      await sleep(5);
    }
  })();
  const pods = await Promise.all(adds);
  watching = false;
  await watcher;
  const toAnnotation = [...annotated.values()].map((t) => t - created);
  const toRunning = names.map((n) => running.get(n) - created);
  const annotationToRunning = names
    .filter((n) => annotated.has(n))
    .map((n) => running.get(n) - annotated.get(n));
  const wall = now() - t0;
  for (const p of pods) await cluster.delPod(p);
  if (kind === 'branch') {
    // Every branch cooled down and deleted before the next burst (the trunks' limits are 38 each).
    const deadline = Date.now() + 60_000;
    while (cluster.branchEnis().length > 0 && Date.now() < deadline) await sleep(100);
    if (cluster.branchEnis().length > 0) throw new Error('branch ENIs left after the cooldown');
  }
  return { toAnnotation, toRunning, annotationToRunning, wall };
}

try {
  cluster = await Cluster.start({
    nodes: 2,
    instanceType: 'm5.2xlarge',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    network: {
      vpcCidrs: ['10.0.0.0/16'],
      subnets: [{ id: SUBNET, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' }],
      nodeSubnets: [SUBNET],
      securityGroups: [{ id: PODS_GROUP, name: 'db-client' }],
    },
    podEni: { mode: 'strict' },
    // Addresses for the ordinary burst are warm (25 pods per node) and reusable at once between rounds, as the
    // branch ones need no pool.
    env: { WARM_IP_TARGET: '30', IP_COOLDOWN_PERIOD: '0', AWS_VPC_K8S_CNI_LOGLEVEL: 'warn' },
  });
  runId = cluster.vpc.runId;
  cluster.kube.createSecurityGroupPolicy({
    name: 'db-client',
    podLabels: { app: 'db-client' },
    groupIds: [PODS_GROUP],
  });
  await cluster.startController({ cooldownMs: 1000 });
  await cluster.waitForTrunks();
  // Warm-up: one of each.
  for (const kind of ['branch', 'ordinary']) {
    const p = await cluster.addPod(0, {
      name: `warm-${kind}`,
      labels: { app: kind === 'branch' ? 'db-client' : 'web' },
    });
    await cluster.delPod(p);
  }
  const all = { branch: [], ordinary: [] };
  for (let r = 0; r < ROUNDS; r++)
    for (const kind of r % 2 === 0 ? ['branch', 'ordinary'] : ['ordinary', 'branch'])
      all[kind].push(await burst(kind, r));

  const flat = (kind, key) => all[kind].flatMap((x) => x[key]);
  const base = stats(flat('ordinary', 'toRunning')).median;
  console.log(`\n### ${ROUNDS} rounds, bursts of ${BURST} pods on 2 nodes (creation → …, per pod)\n`);
  console.log(
    ratioTable(
      [
        ['ordinary pod: creation → Running (baseline)', stats(flat('ordinary', 'toRunning'))],
        ['branch pod: creation → annotation (controller)', stats(flat('branch', 'toAnnotation'))],
        ['branch pod: annotation → Running (node ADD)', stats(flat('branch', 'annotationToRunning'))],
        ['branch pod: creation → Running', stats(flat('branch', 'toRunning'))],
      ],
      base,
      'ms',
      'baseline',
    ),
  );
  const walls = (kind) => all[kind].map((x) => x.wall);
  console.log(
    `\nwhole burst (first object → last Running), median of ${ROUNDS}: ordinary ${stats(walls('ordinary')).median.toFixed(0)} ms, branch ${stats(walls('branch')).median.toFixed(0)} ms`,
  );
  console.log(
    `controller, last of ${BURST} annotated: ${stats(all.branch.map((x) => Math.max(...x.toAnnotation))).median.toFixed(0)} ms after the burst (median of ${ROUNDS})`,
  );
} finally {
  await cluster?.close();
  const leaked = leakedNetns(runId ? [runId] : []);
  console.error(leaked.length === 0 ? 'cleaned up: no namespace left' : `LEFT BEHIND: ${leaked.join(' ')}`);
}
