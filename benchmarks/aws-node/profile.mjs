// Where the daemon's AddNetwork time goes (root, Linux): on a virtual-VPC m5.large node, the daemon is
// restarted under `node --cpu-prof`, then N sequential pod ADD/DEL pairs go through libcni with the daemon's
// conflist; on SIGTERM the daemon writes its CPU profile, summarised here: the daemon histogram over the ADDs,
// the top self-time functions, the inclusive time of the calls on the AddNetwork/DelNetwork path (synchronous
// fsyncs and log appends, which should be absent; the event-loop part of the group-commit checkpoint write),
// and native calls (fs bindings and the like) by the script function that made them. Sampling profile of
// wall time on the main thread: times are approximate, include time the OS took the CPU away (on a loaded
// machine that inflates whatever frame was running), and the profiler itself slows the daemon a little.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/profile.mjs         # --pairs N (default 40), --keep FILE (copy the .cpuprofile there)
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { netnsAdd, netnsDel } from '@vpc-cni-kit/netlink';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  binDir,
  buildLibcniRunner,
  histogram,
  libcniArgv,
  loadClusterHarness,
  now,
  runnerOutcome,
  tag,
  tearDownRun,
  timed,
} from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    "Where the daemon's AddNetwork time goes (root, Linux): the daemon restarted under `node --cpu-prof`, pod\n" +
    'ADD/DEL pairs through libcni, then its CPU profile summarised. Build @vpc-cni-kit/aws-node first.',
  options: {
    pairs: { type: 'count', default: 40, min: 1, description: 'pod ADD/DEL pairs under the profiler' },
    keep: { type: 'string', value: 'FILE', description: 'copy the .cpuprofile there' },
  },
});
const PAIRS = args.pairs;
const KEEP = args.keep;
const created = [];
let cluster;
let runId = '';
const { runner, scratch } = buildLibcniRunner();
const profDir = join(scratch, 'prof');

/** Self and inclusive milliseconds per function (`name file:line`) of a .cpuprofile. */
function summarizeProfile(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n) =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').at(-1)}:${n.callFrame.lineNumber + 1}`;
  const self = new Map();
  const incl = new Map();
  // Native calls (no script URL: fs bindings, etc.) by their JS caller, to see which code blocks in them.
  const nativeByCaller = new Map();
  p.samples.forEach((id, i) => {
    const d = (p.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(id);
    self.set(key(leaf), (self.get(key(leaf)) ?? 0) + d);
    if (leaf.callFrame.url === '' && !leaf.callFrame.functionName.startsWith('(')) {
      let up = parent.get(id);
      while (up !== undefined && byId.get(up).callFrame.url.startsWith('node:')) up = parent.get(up);
      const k = `${key(leaf)} ← ${up === undefined ? '?' : key(byId.get(up))}`;
      nativeByCaller.set(k, (nativeByCaller.get(k) ?? 0) + d);
    }
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + d);
    }
  });
  return { self, incl, nativeByCaller, totalMs: (p.endTime - p.startTime) / 1000 };
}

try {
  const { Cluster } = await loadClusterHarness();
  cluster = await Cluster.start({
    nodes: 1,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    env: { IP_COOLDOWN_PERIOD: '0' },
  });
  runId = cluster.vpc.runId;
  const node = cluster.nodes[0];
  const inst = node.instance.netnsPath;
  const conflist = join(node.confDir, '10-aws.conflist');

  // Restart the daemon under the profiler (NODE_OPTIONS may not carry --cpu-prof).
  await cluster.stopDaemon(0, 'SIGTERM');
  rmSync(conflist, { force: true });
  mkdirSync(profDir, { recursive: true });
  const child = spawn(
    'nsenter',
    [
      `--net=${inst}`,
      process.execPath,
      '--cpu-prof',
      `--cpu-prof-dir=${profDir}`,
      join(binDir, 'aws-node.cjs'),
    ],
    { env: node.env, stdio: 'ignore' },
  );
  node.daemon = child;
  const s0 = now();
  while (!existsSync(conflist)) {
    if (child.exitCode !== null) throw new Error(`aws-node exited (${child.exitCode})`);
    if (now() - s0 > 30_000) throw new Error('aws-node not healthy after 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }

  mkdirSync(join(scratch, 'cache'), { recursive: true });
  for (let i = 0; i < PAIRS; i++) {
    const ns = `vckbench-${tag}-f${i}`;
    const path = netnsAdd(ns);
    created.push(ns);
    const id = `prof${tag}${String(i).padStart(5, '0')}`;
    const common = {
      conflist,
      binDirs: [node.cniBinDir, '/usr/lib/cni'],
      cacheDir: join(scratch, 'cache'),
      netns: path,
      id,
      args: `IgnoreUnknown=1;K8S_POD_NAMESPACE=prof;K8S_POD_NAME=pod-${i};K8S_POD_INFRA_CONTAINER_ID=${id}`,
    };
    const a = runnerOutcome(await timed(libcniArgv(runner, inst, 'add', common), { env: node.env }));
    if (!a.ok) throw new Error(`ADD failed: ${JSON.stringify(a.error)}`);
    const d = runnerOutcome(await timed(libcniArgv(runner, inst, 'del', common), { env: node.env }));
    if (!d.ok) throw new Error(`DEL failed: ${JSON.stringify(d.error)}`);
    netnsDel(ns);
    created.splice(created.indexOf(ns), 1);
  }
  const h = histogram(await cluster.metrics(0), 'awscni_add_network_duration_seconds', 'outcome="success"');
  await cluster.stopDaemon(0, 'SIGTERM');
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('the daemon wrote no CPU profile');
  const prof = summarizeProfile(join(profDir, file));
  if (KEEP !== undefined) copyFileSync(join(profDir, file), KEEP);

  console.log(
    `\n### Daemon CPU profile over ${PAIRS} ADD/DEL pairs (profile spans ${prof.totalMs.toFixed(0)} ms)\n`,
  );
  const dist = h.buckets.map((b) => `≤${Number.isFinite(b.le) ? b.le * 1000 : '∞'}: ${b.count}`).join(', ');
  console.log(
    `AddNetwork histogram: ${h.count} ADDs, p50 ${h.p50.toFixed(2)} ms (bucket ≤ ${h.p50Bucket}), p99 ${h.p99.toFixed(2)} ms (bucket ≤ ${h.p99Bucket}); ${dist}\n`,
  );
  const pick = (re) =>
    [...prof.incl.entries()].filter(([k]) => re.test(k)).sort((a, b) => b[1] - a[1])[0] ?? [
      '(not sampled)',
      0,
    ];
  console.log('| function (inclusive) | ms | per ADD, DEL or pair ms |');
  console.log('| --- | --- | --- |');
  for (const [label, re, ops] of [
    [
      'addNetwork (its own segments; plumbing resumed after an await is counted below)',
      /^addNetwork /,
      PAIRS,
    ],
    ['setupPodNetwork (pod plumbing, all segments)', /^setupPodNetwork /, PAIRS],
    ['teardownPodNetwork (DEL: host routes and rules)', /^teardownPodNetwork /, PAIRS],
    ['delNetwork', /^delNetwork /, PAIRS],
    ['fsyncSync (synchronous fsyncs, all callers)', /^fsyncSync /, 2 * PAIRS],
    ['writeDurably (checkpoint write, event-loop part)', /^writeDurably /, 2 * PAIRS],
    ['appendFileSync (log lines, all callers)', /^appendFileSync /, 2 * PAIRS],
    ['runOnce (pool-loop ticks, woken by ADDs and DELs)', /^runOnce aws-node/, PAIRS],
  ]) {
    const [, ms] = pick(re);
    console.log(`| ${label} | ${ms.toFixed(1)} | ${(ms / ops).toFixed(2)} |`);
  }
  console.log('\n| top self time | ms |');
  console.log('| --- | --- |');
  for (const [k, v] of [...prof.self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`| ${k.replace(/\|/g, '\\|')} | ${v.toFixed(1)} |`);
  console.log('\n| native call ← first caller outside node: internals | ms |');
  console.log('| --- | --- |');
  for (const [k, v] of [...prof.nativeByCaller.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`| ${k.replace(/\|/g, '\\|')} | ${v.toFixed(1)} |`);
} finally {
  await tearDownRun({ created, cluster, scratch, markers: [tag, runId] });
}
