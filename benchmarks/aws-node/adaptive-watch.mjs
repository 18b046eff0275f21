// The adaptive warm pool's pod watch (ADR 0027) and ADD latency (root, Linux). Two m5.large nodes on one virtual
// VPC, both WARM_POOL_POLICY=adaptive; node 0 watches the pods bound to it (the default), node 1 has
// AWS_NODE_ADAPTIVE_POD_WATCH=false (the same-run baseline). Pods alternate between the nodes, order swapped
// every round; each goes through the harness's addPod/delPod (Pod object created, then the libcni ADD at once,
// so the watch event, the bound-count change and the pool wake it causes race the ADD on node 0 — the worst
// case for the watch), then DEL twice and the object deleted. Reports the libcni ADD wall time and the daemons'
// AddNetwork durations from their logs, medians and ratios to the baseline.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/adaptive-watch.mjs      # --runs N (default 40), --warmup N (default 3)
import { readFileSync } from 'node:fs';
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
    "The adaptive warm pool's pod watch and ADD latency (root, Linux): libcni ADD on a node that watches its pods\n" +
    'against one that does not (AWS_NODE_ADAPTIVE_POD_WATCH=false), interleaved. Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 40, min: 1, description: 'timed pods per node' },
    warmup: { type: 'count', default: 3, description: 'untimed pods per node first' },
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;

const { runner } = buildLibcniRunner();
let cluster;
let runId = '';
try {
  const { Cluster } = await loadClusterHarness();
  cluster = await Cluster.start({
    nodes: 2,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    env: { WARM_POOL_POLICY: 'adaptive', IP_COOLDOWN_PERIOD: '0', AWS_VPC_K8S_CNI_LOGLEVEL: 'info' },
  });
  runId = cluster.vpc.runId;
  await cluster.stopDaemon(1);
  cluster.nodes[1].env = { ...cluster.nodes[1].env, AWS_NODE_ADAPTIVE_POD_WATCH: 'false' };
  await cluster.startDaemon(1);
  const watching = async () =>
    (await cluster.introspect(0, '/v1/warm-pool')).boundPods?.watch?.state === 'watching';
  for (let i = 0; i < 100 && !(await watching()); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await watching())) throw new Error('node 0 never started watching its pods');
  if ((await cluster.introspect(1, '/v1/warm-pool')).boundPods !== undefined)
    throw new Error('node 1 watches its pods although AWS_NODE_ADAPTIVE_POD_WATCH=false');

  const wall = { watch: [], baseline: [] };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const order = i % 2 === 0 ? ['watch', 'baseline'] : ['baseline', 'watch'];
    for (const kind of order) {
      const t0 = now();
      const pod = await cluster.addPod(kind === 'watch' ? 0 : 1, {
        name: `${kind}-${i}`,
        retryForMs: 30_000,
      });
      const ms = now() - t0;
      if (i >= WARMUP) wall[kind].push(ms);
      await cluster.delPod(pod);
    }
  }

  const daemonAdds = (node) =>
    readFileSync(cluster.nodes[node].logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'AddNetwork' && Number(String(l.pod).split('-').pop()) >= WARMUP)
      .map((l) => l.durationMs);
  const warmPool = await cluster.introspect(0, '/v1/warm-pool');
  const base = stats(wall.baseline).median;
  console.log(
    `\n### libcni ADD (aws-cni + portmap), WARM_POOL_POLICY=adaptive, ${RUNS} of each, interleaved\n`,
  );
  console.log(
    ratioTable(
      [
        ['without the pod watch (AWS_NODE_ADAPTIVE_POD_WATCH=false, baseline)', stats(wall.baseline)],
        ['with the pod watch (default)', stats(wall.watch)],
      ],
      base,
      'ms',
      'baseline',
    ),
  );
  const d = { watch: daemonAdds(0), baseline: daemonAdds(1) };
  if (d.watch.length > 0 && d.baseline.length > 0) {
    console.log('\n### daemon-side AddNetwork (its log)\n');
    console.log(
      ratioTable(
        [
          ['without the pod watch (baseline)', stats(d.baseline)],
          ['with the pod watch', stats(d.watch)],
        ],
        stats(d.baseline).median,
        'ms',
        'baseline',
      ),
    );
  }
  console.log(
    `\nnode 0's watch: ${warmPool.boundPods.watch.lists} LIST(s), ${warmPool.boundPods.watch.watches} WATCH stream(s), ` +
      `${warmPool.boundPods.watch.malformed} malformed line(s)`,
  );
} finally {
  await cluster?.close();
  const leaked = leakedNetns(runId ? [runId] : []);
  console.error(leaked.length === 0 ? 'cleaned up: no namespace left' : `LEFT BEHIND: ${leaked.join(' ')}`);
}
