// aws-node under load (root, Linux): one m5.4xlarge node (8 ENIs × 30 IPv4, 234 pods) with the pool
// pre-filled (MINIMUM_IP_TARGET), then
//  1. 50 concurrent pod ADDs through libcni with the daemon's conflist (no retries: every one must succeed the
//     first time, each with its own address), with the daemon's AddNetwork histogram over the burst;
//  2. more pods up to 110, then the daemon's resident memory (VmRSS of the node process the harness started
//     under nsenter), against an idle daemon (same process, before any pod) and an idle `node` process.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/scale.mjs          # --concurrent N (default 50), --pods N (default 110)
// `--daemon-node-options='<flags>'` (with '=': the flags start with a dash) starts the daemon with NODE_OPTIONS (e.g. --max-semi-space-size=1).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { netnsAdd } from '@vpc-cni-kit/netlink';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  buildLibcniRunner,
  binDir as builtBinDir,
  DAEMON_OPTIONS,
  daemonPid,
  histogramDelta,
  libcniArgv,
  loadClusterHarness,
  now,
  rssMiB,
  runnerOutcome,
  stats,
  tag,
  tearDownRun,
  timed,
} from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'aws-node under load (root, Linux): concurrent pod ADDs through libcni on one m5.4xlarge node with the\n' +
    "daemon's AddNetwork histogram over the burst, then more pods and the daemon's resident memory against an\n" +
    'idle daemon and an idle `node`. Build @vpc-cni-kit/aws-node first.',
  options: {
    concurrent: { type: 'count', default: 50, min: 1, description: 'pod ADDs at once' },
    pods: { type: 'count', default: 110, min: 1, description: 'pods on the node for the memory reading' },
    ...DAEMON_OPTIONS,
  },
});
const CONCURRENT = args.concurrent;
const binDir = args['bin-dir'] ?? builtBinDir;
const PODS = args.pods;
const DAEMON_NODE_OPTIONS = args['daemon-node-options'] ?? '';
const created = [];
let cluster;
let runId = '';
const { runner, scratch } = buildLibcniRunner();

const metric = (text, name) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
};

try {
  const { Cluster } = await loadClusterHarness();
  const t0 = now();
  cluster = await Cluster.start({
    nodes: 1,
    instanceType: 'm5.4xlarge',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    env: {
      MINIMUM_IP_TARGET: String(PODS + 10),
      WARM_IP_TARGET: '10',
      ...(DAEMON_NODE_OPTIONS ? { NODE_OPTIONS: DAEMON_NODE_OPTIONS } : {}),
    },
  });
  runId = cluster.vpc.runId;
  const node = cluster.nodes[0];
  const inst = node.instance.netnsPath;
  const pid = daemonPid(node.daemon.pid);
  // Wait until the pool holds enough addresses for every pod (the daemon grows it in the background).
  let total = 0;
  const deadline = now() + 120_000;
  for (;;) {
    total = metric(await cluster.metrics(0), 'awscni_total_ip_addresses');
    if (total >= PODS || now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.error(`cluster up, pool ${total} addresses after ${(now() - t0).toFixed(0)} ms (run ${runId})`);
  if (total < PODS) throw new Error(`pool reached only ${total} addresses`);
  const idle = await rssMiB(pid);
  if (idle.name !== 'node') throw new Error(`pid ${pid} is ${idle.name}, not the daemon's node process`);

  mkdirSync(join(scratch, 'cache'), { recursive: true });
  // The daemon's NODE_OPTIONS (if any) are not the plugin's.
  const pluginEnv = { ...node.env };
  delete pluginEnv.NODE_OPTIONS;
  let seq = 0;
  const addOne = async () => {
    const n = seq++;
    const ns = `vckbench-${tag}-s${n}`;
    const path = netnsAdd(ns);
    created.push(ns);
    const id = `scale${tag}${String(n).padStart(5, '0')}`;
    const r = await timed(
      libcniArgv(runner, inst, 'add', {
        conflist: join(node.confDir, '10-aws.conflist'),
        binDirs: [node.cniBinDir, '/usr/lib/cni'],
        cacheDir: join(scratch, 'cache'),
        netns: path,
        id,
        args: `IgnoreUnknown=1;K8S_POD_NAMESPACE=scale;K8S_POD_NAME=pod-${n};K8S_POD_INFRA_CONTAINER_ID=${id}`,
      }),
      { env: pluginEnv },
    );
    const out = runnerOutcome(r);
    return {
      ms: r.ms,
      ok: out.ok,
      error: out.error,
      address: out.ok ? out.result.ips?.[0]?.address : undefined,
    };
  };

  // 1. The burst.
  const before = await cluster.metrics(0);
  const b0 = now();
  const burst = await Promise.all(Array.from({ length: CONCURRENT }, addOne));
  const burstMs = now() - b0;
  const after = await cluster.metrics(0);
  const ok = burst.filter((b) => b.ok);
  const distinct = new Set(ok.map((b) => b.address));
  const failures = burst.filter((b) => !b.ok).map((b) => `${b.error?.code}: ${b.error?.msg}`);
  const perAdd = stats(burst.map((b) => b.ms));
  const h = histogramDelta(before, after, 'awscni_add_network_duration_seconds', 'outcome="success"');

  // Same-run floor for the burst: as many `node -e 0` processes at once, in the instance namespace.
  const f0 = now();
  const floorBurst = await Promise.all(
    Array.from({ length: CONCURRENT }, () =>
      timed(['nsenter', `--net=${inst}`, process.execPath, '-e', '0']),
    ),
  );
  const floorBurstMs = now() - f0;
  const floorPer = stats(floorBurst.map((b) => b.ms));

  // 2. Fill to PODS, ten at a time.
  while (seq < PODS) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, PODS - seq) }, addOne));
    const bad = batch.filter((b) => !b.ok);
    if (bad.length > 0) throw new Error(`ADD failed while filling: ${JSON.stringify(bad[0].error)}`);
    for (const b of batch) distinct.add(b.address);
  }
  const assigned = metric(await cluster.metrics(0), 'awscni_assigned_ip_addresses');
  await new Promise((r) => setTimeout(r, 2000));
  const full = await rssMiB(pid);
  const floorChild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1000));
  const floor = await rssMiB(floorChild.pid);
  floorChild.kill();

  console.log(
    `\n### ${CONCURRENT} concurrent ADDs on one m5.4xlarge (daemon conflist, through libcni, no retries)\n`,
  );
  console.log(
    '| ADDs | succeeded | distinct addresses | burst wall ms | per-ADD median ms | p90 ms | max ms |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  console.log(
    `| ${CONCURRENT} | ${ok.length} | ${new Set(ok.map((b) => b.address)).size} | ${burstMs.toFixed(0)} | ${perAdd.median.toFixed(0)} | ${perAdd.p90.toFixed(0)} | ${perAdd.max.toFixed(0)} |`,
  );
  console.log(
    `| floor: ${CONCURRENT} × \`node -e 0\` at once | – | – | ${floorBurstMs.toFixed(0)} | ${floorPer.median.toFixed(0)} | ${floorPer.p90.toFixed(0)} | ${floorPer.max.toFixed(0)} |`,
  );
  console.log(`\nburst wall / floor burst wall: ${(burstMs / floorBurstMs).toFixed(2)}×`);
  if (failures.length > 0) console.log(`\nfailures: ${failures.join('; ')}`);
  console.log(
    `\ndaemon-side AddNetwork over the burst: ${h.count} ADDs, p50 ${h.p50.toFixed(2)} ms (bucket ≤ ${h.p50Bucket}), p99 ${Number.isFinite(h.p99Bucket) ? `${h.p99.toFixed(2)} ms (bucket ≤ ${h.p99Bucket})` : `> ${h.p99.toFixed(0)} ms (beyond the last finite bucket)`}`,
  );
  console.log(
    `\n### Daemon memory at ${PODS} pods${DAEMON_NODE_OPTIONS ? ` (daemon NODE_OPTIONS=${DAEMON_NODE_OPTIONS})` : ''} (assigned addresses: ${assigned}, distinct pod addresses: ${distinct.size})\n`,
  );
  console.log('| process | VmRSS MiB | VmHWM MiB | ratio to idle node |');
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| aws-node, ${PODS} pods | ${full.rss.toFixed(1)} | ${full.hwm.toFixed(1)} | ${(full.rss / floor.rss).toFixed(2)}× |`,
  );
  console.log(
    `| aws-node, idle (pool filled, 0 pods) | ${idle.rss.toFixed(1)} | ${idle.hwm.toFixed(1)} | ${(idle.rss / floor.rss).toFixed(2)}× |`,
  );
  console.log(
    `| \`node -e 'setInterval(…)'\` (floor) | ${floor.rss.toFixed(1)} | ${floor.hwm.toFixed(1)} | 1.00× |`,
  );
  console.log(
    `\nTargets: ${CONCURRENT} concurrent ADDs all succeed with distinct addresses: ${ok.length === CONCURRENT && new Set(ok.map((b) => b.address)).size === CONCURRENT ? 'met' : 'NOT met'}; RSS ≤ 100 MiB at ${PODS} pods: ${full.rss <= 100 ? 'met' : 'NOT met'}.`,
  );
} finally {
  await tearDownRun({ created, cluster, scratch, markers: [tag, runId] });
}
