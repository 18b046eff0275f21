// aws-cni through libcni (root, Linux): ADD and DEL of our plugin on a virtual-VPC node (inside the instance
// namespace, the conflist the daemon wrote: aws-cni + egress-cni (off by default) + portmap; and aws-cni alone) against Debian's ptp +
// host-local (a conflist written here, in a scratch namespace; alone and with portmap) and the process floor
// `node -e 0`, all interleaved round-robin and all started through `nsenter --net=…` alike. Then the
// daemon-side AddNetwork latency from the daemon's Prometheus histogram over the same ADDs.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/cni.mjs            # --runs N (default 40), --warmup N (default 3)
//   --baseline-plugin <file>: also time another build of the aws-cni executable (e.g. one built from an older
//   commit) against the same daemon, alone, in the same interleaved run.
//   --checkpoint-dir <dir>: where the daemon keeps its checkpoint (AWS_VPC_K8S_CNI_BACKING_STORE=<dir>/…/ipam.json).
//   Default /dev/shm: a tmpfs, as the reference's default /var/run/aws-node is on the EKS AMIs (/var/run is /run,
//   a tmpfs), so the durable write is what it costs on a node. --checkpoint-on-disk keeps it in the cluster's
//   scratch directory on this machine's disk instead, whose flush latency then adds to AddNetwork.
//   --daemon-log <file>: copy the daemon's JSON log there before tearing down (each AddNetwork line carries its
//   durationMs, to see what the slow ones coincide with).
//   --gap-ms <n>: pause n ms after each pod's DEL and namespace deletion (the kernel tears a network namespace
//   down in the background, holding RTNL, which every netlink request of the next pod's plumbing waits for);
//   with a gap, the daemon-side latency is the daemon's alone.
//   --daemon-node-options='<flags>': start the daemon with NODE_OPTIONS (the plugins run without them).
//   --bin-dir <dir>: run the daemon, init and plugin of another build's dist/bin (an A/B across runs).
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { netnsAdd } from '@vpc-cni-kit/netlink';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  buildLibcniRunner,
  binDir as builtBinDir,
  cleanEnv,
  DAEMON_OPTIONS,
  histogramDelta,
  loadClusterHarness,
  ratioTable,
  stats,
  tag,
  tearDownRun,
  timed,
  timePodAddDel,
} from './lib.mjs';

const { values: args, refuse } = commandLine(import.meta.url, {
  summary:
    "aws-cni through libcni (root, Linux): ADD and DEL of our plugin on a virtual-VPC node against Debian's ptp +\n" +
    "host-local and the `node -e 0` floor, interleaved; then the daemon's AddNetwork latency over the same ADDs.\n" +
    'Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 40, min: 1, description: 'timed ADD/DEL pairs per variant' },
    warmup: { type: 'count', default: 3, description: 'untimed pairs per variant first' },
    'baseline-plugin': {
      type: 'string',
      value: 'FILE',
      description: 'also time another build of the aws-cni executable, alone, against the same daemon',
    },
    plugin: {
      type: 'string',
      multiple: true,
      value: 'NAME=FILE',
      description: 'also time this aws-cni executable alone, under NAME (repeatable)',
    },
    'checkpoint-dir': {
      type: 'string',
      value: 'DIR',
      default: '/dev/shm',
      description: "where the daemon keeps its checkpoint (a tmpfs, as a node's /var/run/aws-node)",
    },
    'checkpoint-on-disk': {
      type: 'boolean',
      description: "keep the checkpoint in the cluster's scratch directory on this machine's disk instead",
    },
    'daemon-log': {
      type: 'string',
      value: 'FILE',
      description: "copy the daemon's JSON log there at the end",
    },
    'gap-ms': {
      type: 'count',
      default: 0,
      description: "pause after each pod's DEL (the kernel's namespace teardown holds RTNL meanwhile)",
    },
    ...DAEMON_OPTIONS,
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;
// Other aws-cni executables to time alone against the same daemon: `--baseline-plugin <file>` and any number
// of `--plugin <name>=<file>` (e.g. the launcher against the single executable application).
const EXTRA_PLUGINS = [
  ...(args['baseline-plugin'] === undefined
    ? []
    : [{ name: 'baseline build', file: args['baseline-plugin'] }]),
  ...args.plugin.map((spec) => {
    const eq = spec.indexOf('=');
    if (eq < 1 || eq === spec.length - 1) refuse(`--plugin takes NAME=FILE, not ${JSON.stringify(spec)}`);
    return { name: spec.slice(0, eq), file: spec.slice(eq + 1) };
  }),
];
const CHECKPOINT_DIR = args['checkpoint-on-disk']
  ? undefined
  : join(args['checkpoint-dir'], `vckbench-${tag}-checkpoint`);

const binDir = args['bin-dir'] ?? builtBinDir;
const GAP_MS = args['gap-ms'];
const DAEMON_NODE_OPTIONS = args['daemon-node-options'] ?? '';
const DAEMON_LOG = args['daemon-log'];

const { runner, scratch } = buildLibcniRunner();
const created = [];
let cluster;
let runId = '';
const scratchHost = `vckbench-${tag}-host`;

try {
  if (CHECKPOINT_DIR) mkdirSync(CHECKPOINT_DIR, { recursive: true });
  const { Cluster } = await loadClusterHarness();
  const t0 = performance.now();
  cluster = await Cluster.start({
    nodes: 1,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    // Each timed ADD is followed by its DEL: without a cooldown the pool never runs dry mid-measurement.
    env: {
      IP_COOLDOWN_PERIOD: '0',
      AWS_VPC_K8S_CNI_LOGLEVEL: 'info',
      ...(CHECKPOINT_DIR ? { AWS_VPC_K8S_CNI_BACKING_STORE: join(CHECKPOINT_DIR, 'ipam.json') } : {}),
      ...(DAEMON_NODE_OPTIONS ? { NODE_OPTIONS: DAEMON_NODE_OPTIONS } : {}),
    },
  });
  runId = cluster.vpc.runId;
  console.error(`cluster up in ${(performance.now() - t0).toFixed(0)} ms (run ${runId})`);
  const node = cluster.nodes[0];
  const instanceNs = node.instance.netnsPath;
  // The daemon's NODE_OPTIONS (if any) are not the plugin's.
  const pluginEnv = { ...node.env };
  delete pluginEnv.NODE_OPTIONS;

  // Conflists: the daemon's (aws-cni + egress-cni, off by default + portmap), aws-cni alone, ptp + host-local alone and with portmap.
  const daemonConflist = join(node.confDir, '10-aws.conflist');
  const daemonConf = JSON.parse(readFileSync(daemonConflist, 'utf8'));
  const awsOnly = join(scratch, 'aws-only.conflist');
  writeFileSync(awsOnly, JSON.stringify({ ...daemonConf, plugins: [daemonConf.plugins[0]] }));
  const ptpPlugin = {
    type: 'ptp',
    ipMasq: false,
    mtu: 9001,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: '10.99.0.0/16' }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: join(scratch, 'host-local'),
    },
  };
  const ptpOnly = join(scratch, 'ptp.conflist');
  writeFileSync(ptpOnly, JSON.stringify({ cniVersion: '0.4.0', name: 'vckbench-ptp', plugins: [ptpPlugin] }));
  const ptpPortmap = join(scratch, 'ptp-portmap.conflist');
  writeFileSync(
    ptpPortmap,
    JSON.stringify({
      cniVersion: '0.4.0',
      name: 'vckbench-ptpp',
      plugins: [ptpPlugin, { type: 'portmap', capabilities: { portMappings: true }, snat: true }],
    }),
  );
  // The Node floor through libcni: a plugin that starts Node, reads stdin and prints an empty result. What
  // our plugin costs beyond it is what being a Node plugin does not explain.
  const noopBin = join(scratch, 'noop-bin');
  mkdirSync(noopBin, { recursive: true });
  writeFileSync(
    join(noopBin, 'noop-node'),
    [
      '#!/usr/bin/env node',
      "const fs = require('fs');",
      `if (process.env.CNI_COMMAND === 'ADD') { fs.readFileSync(0); fs.writeSync(1, '{"cniVersion":"0.4.0","ips":[]}'); }`,
      '',
    ].join('\n'),
  );
  chmodSync(join(noopBin, 'noop-node'), 0o755);
  const noopOnly = join(scratch, 'noop.conflist');
  writeFileSync(
    noopOnly,
    JSON.stringify({ cniVersion: '0.4.0', name: 'vckbench-noop', plugins: [{ type: 'noop-node' }] }),
  );
  const extraBins = EXTRA_PLUGINS.map((p, k) => {
    const dir = join(scratch, `plugin-bin-${k}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(p.file, join(dir, 'aws-cni'));
    chmodSync(join(dir, 'aws-cni'), 0o755);
    return { ...p, dir };
  });
  const scratchPath = netnsAdd(scratchHost);
  created.push(scratchHost);
  mkdirSync(join(scratch, 'cache'), { recursive: true });

  const variants = [
    {
      name: 'aws-cni + egress-cni (off) + portmap (daemon conflist)',
      conflist: daemonConflist,
      host: instanceNs,
      binDirs: [node.cniBinDir, '/usr/lib/cni'],
      env: pluginEnv,
    },
    { name: 'aws-cni alone', conflist: awsOnly, host: instanceNs, binDirs: [node.cniBinDir], env: pluginEnv },
    {
      name: 'no-op Node plugin (Node floor through libcni)',
      conflist: noopOnly,
      host: instanceNs,
      binDirs: [noopBin],
      env: cleanEnv(),
    },
    {
      name: 'ptp + host-local',
      conflist: ptpOnly,
      host: scratchPath,
      binDirs: ['/usr/lib/cni'],
      env: cleanEnv(),
    },
    {
      name: 'ptp + host-local + portmap',
      conflist: ptpPortmap,
      host: scratchPath,
      binDirs: ['/usr/lib/cni'],
      env: cleanEnv(),
    },
  ];
  for (const p of extraBins) {
    variants.push({
      name: `aws-cni alone, ${p.name} (${p.file})`,
      conflist: awsOnly,
      host: instanceNs,
      binDirs: [p.dir],
      env: pluginEnv,
    });
  }
  const add = Object.fromEntries(variants.map((v) => [v.name, []]));
  const del = Object.fromEntries(variants.map((v) => [v.name, []]));
  const floor = [];
  const nsenterOnly = [];
  let seq = 0;
  let metricsBefore = '';

  for (let i = 0; i < WARMUP + RUNS; i++) {
    if (i === WARMUP) metricsBefore = await cluster.metrics(0);
    const order = [...variants.slice(i % variants.length), ...variants.slice(0, i % variants.length)];
    for (const v of order) {
      const t = await timePodAddDel(runner, v.host, {
        label: v.name,
        conflist: v.conflist,
        binDirs: v.binDirs,
        cacheDir: join(scratch, 'cache'),
        env: v.env,
        seq: seq++,
        created,
      });
      if (GAP_MS > 0) await new Promise((r) => setTimeout(r, GAP_MS));
      if (i >= WARMUP) {
        add[v.name].push(t.add);
        del[v.name].push(t.del);
      }
    }
    const f = await timed(['nsenter', `--net=${instanceNs}`, process.execPath, '-e', '0']);
    const n = await timed(['nsenter', `--net=${instanceNs}`, 'true']);
    if (f.code !== 0 || n.code !== 0) throw new Error('floor command failed');
    if (i >= WARMUP) {
      floor.push(f.ms);
      nsenterOnly.push(n.ms);
    }
  }
  const metricsAfter = await cluster.metrics(0);
  if (DAEMON_LOG) copyFileSync(node.logFile, DAEMON_LOG);

  const floorS = stats(floor);
  const rows = (m) => [
    ...variants.map((v) => [v.name, stats(m[v.name])]),
    ['`node -e 0` (floor)', floorS],
    ['`nsenter true`', stats(nsenterOnly)],
  ];
  console.log(`\n### ADD through libcni (${RUNS} runs, ${WARMUP} warm-up, interleaved)\n`);
  console.log(ratioTable(rows(add), floorS.median));
  console.log(`\n### DEL through libcni\n`);
  console.log(ratioTable(rows(del), floorS.median));

  // Daemon side: the AddNetwork histogram over the timed ADDs only (after minus before the timed runs).
  const h = histogramDelta(
    metricsBefore,
    metricsAfter,
    'awscni_add_network_duration_seconds',
    'outcome="success"',
  );
  const dist = h.buckets
    .map((b) => `≤${Number.isFinite(b.le) ? b.le * 1000 : '∞'} ms: ${b.count}`)
    .join(', ');
  console.log(
    `\n### Daemon-side AddNetwork (awscni_add_network_duration_seconds, outcome=success; checkpoint in ${CHECKPOINT_DIR ?? 'the cluster scratch directory, on disk'})\n`,
  );
  console.log(
    '| ADDs | p50 ms (interpolated) | p50 bucket ≤ ms | p99 ms (interpolated) | p99 bucket ≤ ms | target p99 ≤ 5 ms |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  console.log(
    `| ${h.count} | ${h.p50.toFixed(2)} | ${h.p50Bucket} | ${h.p99.toFixed(2)} | ${h.p99Bucket} | ${h.p99Bucket <= 5 ? 'met' : 'not met'} |`,
  );
  console.log(`\ncumulative buckets: ${dist}`);

  const ours = stats(add[variants[0].name]).median;
  const alone = stats(add[variants[1].name]).median;
  const noop = stats(add[variants[2].name]).median;
  console.log(
    `\nTarget ADD p50 ≤ 1.3× the node floor: daemon conflist ${(ours / floorS.median).toFixed(2)}× (${ours > 1.3 * floorS.median ? 'NOT met' : 'met'}); aws-cni alone ${(alone / floorS.median).toFixed(2)}×.`,
  );
  console.log(
    `Against the Node floor through libcni (no-op Node plugin, ${noop.toFixed(1)} ms): aws-cni alone ${(alone / noop).toFixed(2)}× (${alone > 1.3 * noop ? 'NOT met' : 'met'}), +${(alone - noop).toFixed(1)} ms; daemon conflist ${(ours / noop).toFixed(2)}×.`,
  );
} finally {
  if (CHECKPOINT_DIR) rmSync(CHECKPOINT_DIR, { recursive: true, force: true });
  await tearDownRun({ created, cluster, scratch, markers: [tag, runId] });
}
