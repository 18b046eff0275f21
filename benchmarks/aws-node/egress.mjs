// egress-cni (root, Linux), in one run: (1) start-up alone (CNI_COMMAND=VERSION) of the egress-cni and aws-cni
// single executables and the egress-cni launcher, against `node -e 0`; (2) the processes an enabled ADD runs
// besides its own (iptables-save, iptables-restore, host-local) and koffi's load; (3) ADD and DEL through libcni on a
// virtual-VPC node (inside the instance namespace, plugins as aws-vpc-cni-init installed them), chained after
// aws-cni as the daemon's conflist chains it: aws-cni alone; + egress-cni disabled (the daemon's IPv4-cluster
// default); + egress-cni with IPv4 egress (what an IPv6 cluster runs; here the pod's eth0 is IPv4, which does
// not change egress-cni's work); + egress-cni with IPv6 egress (an IPv4 cluster with ENABLE_V6_EGRESS; the
// node is given an IPv6 address on its primary interface for it); + a no-op chained Node plugin that prints
// its prevResult (the floor of any chained Node plugin). All interleaved round-robin, all through `nsenter`.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/egress.mjs          # --runs N (default 30), --warmup N (default 3), --starts N (60)
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import { table, timeProcesses, cleanEnv as timingEnv } from '../lib/timing.mjs';
import {
  binDir,
  buildLibcniRunner,
  cleanEnv,
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
    'egress-cni (root, Linux), in one run: its start-up alone against `node -e 0`, the processes an enabled ADD\n' +
    'runs besides its own, and ADD/DEL through libcni chained after aws-cni (disabled, IPv4 egress, IPv6 egress)\n' +
    'against aws-cni alone, interleaved. Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 30, min: 1, description: 'timed ADD/DEL pairs per variant' },
    warmup: { type: 'count', default: 3, description: 'untimed pairs per variant first' },
    starts: {
      type: 'count',
      default: 60,
      min: 1,
      description: 'timed starts (CNI_COMMAND=VERSION) per executable',
    },
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;
const STARTS = args.starts;
const NODE_IPV6 = '2001:db8:ec::10';

const { runner, scratch } = buildLibcniRunner();
const created = [];
let cluster;
let runId = '';

try {
  // 1. Start-up alone, each executable copied alone into a scratch directory, as on /opt/cni/bin.
  const startDir = join(scratch, 'start');
  mkdirSync(startDir, { recursive: true });
  for (const f of ['egress-cni', 'aws-cni', 'egress-cni.cjs'])
    copyFileSync(join(binDir, f), join(startDir, f));
  const versionEnv = timingEnv({ CNI_COMMAND: 'VERSION' });
  const starts = timeProcesses(
    [
      { name: 'node -e 0 (floor)', cmd: process.execPath, args: ['-e', '0'], env: versionEnv },
      { name: 'egress-cni single executable', cmd: join(startDir, 'egress-cni'), env: versionEnv },
      { name: 'aws-cni single executable', cmd: join(startDir, 'aws-cni'), env: versionEnv },
      {
        name: 'egress-cni launcher (#!/usr/bin/env node)',
        cmd: join(startDir, 'egress-cni.cjs'),
        env: versionEnv,
      },
    ],
    { runs: STARTS, warmup: 3 },
  );
  console.log(`### VERSION, one process each (${STARTS} runs, interleaved, ${process.version})\n`);
  console.log(table(starts, 'node -e 0 (floor)'));

  // 2. What an enabled ADD runs besides Node, each piece a process of its own in a scratch namespace.
  const { netnsAdd } = await import('@vpc-cni-kit/netlink');
  const piecesNs = `vckbench-${tag}-pieces`;
  const piecesPath = netnsAdd(piecesNs);
  created.push(piecesNs);
  const koffi = createRequire(import.meta.url).resolve('koffi');
  const inNs = (cmd, ...args) => ({ cmd: 'nsenter', args: [`--net=${piecesPath}`, '--', cmd, ...args] });
  const pieces = timeProcesses(
    [
      { name: '`nsenter true` (baseline)', ...inNs('true') },
      { name: '`iptables-save -t nat`', ...inNs('iptables-save', '-t', 'nat') },
      {
        name: '`iptables-restore -w 5 --noflush` (an empty nat)',
        ...inNs('iptables-restore', '-w', '5', '--noflush'),
        input: '*nat\nCOMMIT\n',
      },
      { name: '`host-local` (VERSION: the exec alone)', ...inNs('/usr/lib/cni/host-local'), env: versionEnv },
      { name: '`node -e 0`', ...inNs(process.execPath, '-e', '0') },
      {
        name: '`node -e "require(\'koffi\')"`',
        ...inNs(process.execPath, '-e', `require(${JSON.stringify(koffi)})`),
      },
    ],
    { runs: STARTS, warmup: 3 },
  );
  console.log(`\n### The pieces of an enabled ADD, one process each (${STARTS} runs, interleaved)\n`);
  console.log(table(pieces, '`nsenter true` (baseline)'));

  // 3. ADD and DEL through libcni on a virtual-VPC node.
  const { Cluster } = await loadClusterHarness();
  cluster = await Cluster.start({
    nodes: 1,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    env: { IP_COOLDOWN_PERIOD: '0', AWS_VPC_K8S_CNI_LOGLEVEL: 'info', ENABLE_V6_EGRESS: 'false' },
  });
  runId = cluster.vpc.runId;
  const node = cluster.nodes[0];
  const instanceNs = node.instance.netnsPath;
  const pluginEnv = { ...node.env };
  const daemonConf = JSON.parse(readFileSync(join(node.confDir, '10-aws.conflist'), 'utf8'));
  const [awsCni, egressDefault] = daemonConf.plugins;
  if (egressDefault?.type !== 'egress-cni') throw new Error('the daemon conflist has no egress-cni entry');
  const nodeIpv4 = node.instance.privateIp;
  // The node's IPv6 egress address, and IPv6 forwarding, as an IPv4 node with ENABLE_V6_EGRESS has them.
  const { execFileSync } = await import('node:child_process');
  const inNode = (...a) => execFileSync('nsenter', [`--net=${instanceNs}`, ...a], { encoding: 'utf8' });
  const primaryIf = inNode('ip', '-o', '-4', 'route', 'show', 'default').split(/\s+/)[4];
  inNode('ip', '-6', 'addr', 'add', `${NODE_IPV6}/64`, 'dev', primaryIf, 'nodad');
  inNode('sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1');

  const egress = (family) => ({
    ...egressDefault,
    enabled: 'true',
    nodeIP: family === 4 ? nodeIpv4 : NODE_IPV6,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: family === 4 ? '169.254.172.0/22' : 'fd00::ac:00/118' }]],
      // These pods are IPv4 pods (aws-cni's): their default IPv4 route is eth0's, so IPv4 egress routes a
      // documentation prefix instead of 0.0.0.0/0 here (the same one route's work as in an IPv6 cluster).
      routes: [{ dst: family === 4 ? '192.0.2.0/24' : '::/0' }],
      dataDir: join(scratch, `egress-v${family}-ipam`),
    },
    pluginLogFile: join(scratch, `egress-v${family}.log`),
  });
  const noopBin = join(scratch, 'noop-bin');
  mkdirSync(noopBin, { recursive: true });
  writeFileSync(
    join(noopBin, 'noop-chained'),
    [
      '#!/usr/bin/env node',
      "const fs = require('fs');",
      "if (process.env.CNI_COMMAND === 'ADD') { const c = JSON.parse(fs.readFileSync(0, 'utf8'));",
      '  fs.writeSync(1, JSON.stringify(c.prevResult)); }',
      '',
    ].join('\n'),
  );
  chmodSync(join(noopBin, 'noop-chained'), 0o755);
  const list = (name, plugins) => {
    const file = join(scratch, `${name}.conflist`);
    writeFileSync(file, JSON.stringify({ ...daemonConf, name: 'aws-cni', plugins }));
    return file;
  };
  const bins = [node.cniBinDir];
  const variants = [
    { name: 'aws-cni alone', conflist: list('alone', [awsCni]), binDirs: bins },
    {
      name: '+ egress-cni disabled (IPv4 cluster default)',
      conflist: list('off', [awsCni, egressDefault]),
      binDirs: bins,
    },
    { name: '+ egress-cni, IPv4 egress', conflist: list('v4', [awsCni, egress(4)]), binDirs: bins },
    { name: '+ egress-cni, IPv6 egress', conflist: list('v6', [awsCni, egress(6)]), binDirs: bins },
    {
      name: '+ no-op chained Node plugin (floor)',
      conflist: list('noop', [awsCni, { type: 'noop-chained' }]),
      binDirs: [...bins, noopBin],
    },
  ];
  const add = Object.fromEntries(variants.map((v) => [v.name, []]));
  const del = Object.fromEntries(variants.map((v) => [v.name, []]));
  const floor = [];
  let seq = 0;
  mkdirSync(join(scratch, 'cache'), { recursive: true });
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const order = [...variants.slice(i % variants.length), ...variants.slice(0, i % variants.length)];
    for (const v of order) {
      const t = await timePodAddDel(runner, instanceNs, {
        label: v.name,
        conflist: v.conflist,
        binDirs: v.binDirs,
        cacheDir: join(scratch, 'cache'),
        env: pluginEnv,
        seq: seq++,
        created,
      });
      if (i >= WARMUP) {
        add[v.name].push(t.add);
        del[v.name].push(t.del);
      }
    }
    const f = await timed(['nsenter', `--net=${instanceNs}`, process.execPath, '-e', '0'], {
      env: cleanEnv(),
    });
    if (i >= WARMUP) floor.push(f.ms);
  }
  const base = stats(add[variants[0].name]).median;
  const rows = (m) => [...variants.map((v) => [v.name, stats(m[v.name])]), ['`node -e 0`', stats(floor)]];
  console.log(
    `\n### ADD through libcni (${RUNS} runs, ${WARMUP} warm-up, interleaved; ratio to aws-cni alone)\n`,
  );
  console.log(ratioTable(rows(add), base));
  console.log(`\n### DEL through libcni (ratio to aws-cni alone)\n`);
  console.log(ratioTable(rows(del), stats(del[variants[0].name]).median));
  const med = (n) => stats(add[n]).median;
  const noop = med(variants[4].name);
  console.log(
    `\negress-cni's own share of an ADD (chain minus aws-cni alone): IPv4 egress +${(med(variants[2].name) - base).toFixed(1)} ms, ` +
      `IPv6 egress +${(med(variants[3].name) - base).toFixed(1)} ms, disabled +${(med(variants[1].name) - base).toFixed(1)} ms; ` +
      `a no-op chained Node plugin +${(noop - base).toFixed(1)} ms.`,
  );
} finally {
  await tearDownRun({ created, cluster, scratch, markers: [tag, runId] });
}
