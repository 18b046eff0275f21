// IPv6 mode against the IPv4 path, in one run (root, Linux): two one-node clusters on dual-stack virtual VPCs,
// one daemon in IPv6 mode (ENABLE_IPv6, prefix delegation; egress-cni chained and enabled for IPv4 egress), one in
// IPv4 mode (egress-cni chained but disabled, as the reference's default). ADD and DEL through libcni with each
// node's own conflist, and aws-cni alone on each, interleaved round-robin with the `node -e 0` floor; then each
// daemon's AddNetwork histogram over the same ADDs.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/ipv6.mjs          # --runs N (default 30), --warmup N (default 3)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  binDir,
  buildLibcniRunner,
  histogramDelta,
  loadClusterHarness,
  ratioTable,
  stats,
  tag,
  tearDownRun,
  timed,
  timePodAddDel,
} from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'IPv6 mode against the IPv4 path (root, Linux): ADD and DEL through libcni on a daemon in each mode, and\n' +
    "aws-cni alone on each, interleaved with the `node -e 0` floor; then each daemon's AddNetwork histogram.\n" +
    'Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 30, min: 1, description: 'timed ADD/DEL pairs per variant' },
    warmup: { type: 'count', default: 3, description: 'untimed pairs per variant first' },
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;

const { runner, scratch } = buildLibcniRunner();
const created = [];
const clusters = [];

try {
  const { Cluster, DUAL_STACK_NETWORK } = await loadClusterHarness();
  const common = {
    nodes: 1,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    network: DUAL_STACK_NETWORK,
  };
  const env = { IP_COOLDOWN_PERIOD: '0', AWS_VPC_K8S_CNI_LOGLEVEL: 'info' };
  const t0 = performance.now();
  // One at a time: two virtual VPCs starting together only make each other's start slower.
  const v6 = await Cluster.start({ ...common, ipv6: true, env });
  clusters.push(v6);
  const v4 = await Cluster.start({ ...common, env });
  clusters.push(v4);
  console.error(`clusters up in ${(performance.now() - t0).toFixed(0)} ms`);

  const variants = [];
  for (const [label, cluster] of [
    ['IPv6 mode', v6],
    ['IPv4 mode', v4],
  ]) {
    const node = cluster.nodes[0];
    const conflist = join(node.confDir, '10-aws.conflist');
    const conf = JSON.parse(readFileSync(conflist, 'utf8'));
    const alone = join(scratch, `${label.replace(' ', '-')}-aws-only.conflist`);
    writeFileSync(alone, JSON.stringify({ ...conf, plugins: [conf.plugins[0]] }));
    const egress = conf.plugins.find((p) => p.type === 'egress-cni');
    const chain = conf.plugins.map((p) => p.type).join(' + ');
    variants.push(
      {
        name: `${label}: daemon conflist (${chain}; egress ${egress?.enabled === 'true' ? 'on' : 'off'})`,
        cluster,
        conflist,
        binDirs: [node.cniBinDir, '/usr/lib/cni'],
      },
      { name: `${label}: aws-cni alone`, cluster, conflist: alone, binDirs: [node.cniBinDir] },
    );
  }

  const add = Object.fromEntries(variants.map((v) => [v.name, []]));
  const del = Object.fromEntries(variants.map((v) => [v.name, []]));
  const floor = [];
  const before = new Map();
  let seq = 0;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    if (i === WARMUP) for (const c of clusters) before.set(c, await c.metrics(0));
    const order = [...variants.slice(i % variants.length), ...variants.slice(0, i % variants.length)];
    for (const v of order) {
      const node = v.cluster.nodes[0];
      const t = await timePodAddDel(runner, node.instance.netnsPath, {
        label: v.name,
        conflist: v.conflist,
        binDirs: v.binDirs,
        cacheDir: join(scratch, 'cache'),
        env: node.env,
        seq: seq++,
        created,
      });
      if (i >= WARMUP) {
        add[v.name].push(t.add);
        del[v.name].push(t.del);
      }
    }
    const f = await timed([
      'nsenter',
      `--net=${v4.nodes[0].instance.netnsPath}`,
      process.execPath,
      '-e',
      '0',
    ]);
    if (f.code !== 0) throw new Error('floor command failed');
    if (i >= WARMUP) floor.push(f.ms);
  }

  const floorS = stats(floor);
  const rows = (m) => [...variants.map((v) => [v.name, stats(m[v.name])]), ['`node -e 0` (floor)', floorS]];
  console.log(`\n### ADD through libcni, IPv6 mode vs IPv4 (${RUNS} runs, ${WARMUP} warm-up, interleaved)\n`);
  console.log(ratioTable(rows(add), floorS.median));
  console.log('\n### DEL through libcni\n');
  console.log(ratioTable(rows(del), floorS.median));

  console.log('\n### Daemon-side AddNetwork (awscni_add_network_duration_seconds over the timed ADDs)\n');
  console.log('| daemon | ADDs | p50 ms (interpolated) | p99 ms (interpolated) |');
  console.log('| --- | --- | --- | --- |');
  for (const [label, c] of [
    ['IPv6 mode', v6],
    ['IPv4 mode', v4],
  ]) {
    const h = histogramDelta(
      before.get(c),
      await c.metrics(0),
      'awscni_add_network_duration_seconds',
      'outcome="success"',
    );
    console.log(`| ${label} | ${h.count} | ${h.p50.toFixed(2)} | ${h.p99.toFixed(2)} |`);
  }
  const m = (k) => stats(add[variants[k].name]).median;
  console.log(
    `\nIPv6 / IPv4, daemon conflist: ${(m(0) / m(2)).toFixed(2)}× (${m(0).toFixed(1)} vs ${m(2).toFixed(1)} ms); aws-cni alone: ${(m(1) / m(3)).toFixed(2)}× (${m(1).toFixed(1)} vs ${m(3).toFixed(1)} ms).`,
  );
} finally {
  // Both runs' namespaces count as leaks; the first cluster is closed here, the second by the shared clean-up.
  const markers = [tag, ...clusters.map((c) => c.vpc.runId)];
  const last = clusters.pop();
  for (const c of clusters) await c.close();
  await tearDownRun({ created, cluster: last, scratch, markers });
}
