// Where pod plumbing runs (ADR 0002), root and Linux only. Two measurements in one run:
//  A. In-process, warm: routing-table's setupPodNetwork / teardownPodNetwork into fresh pod namespaces from a
//     scratch "host" namespace, over a sync netlink handle (what a plugin would use) and an async one (what the
//     daemon uses: every request on koffi's worker thread, so the event loop keeps serving).
//  B. Fresh processes on a virtual-VPC node (inside the instance namespace), the plugin run directly with the
//     CNI environment (no libcni): our aws-cni (one gRPC call; the warm daemon plumbs) against a reference-layout
//     plugin bundled here from the same sources (gRPC for the address, then koffi + netlink + routing-table
//     loaded and the plumbing done in the plugin process), with `node -e 0` and the bare module loads as floors.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/plumbing.mjs       # --runs N (default 30), --warmup N (default 3),
//     --host-pods N (A: pods already plumbed in the host first, default 0), --in-process-only (A alone)
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsAdd, netnsDel, open, openSync } from '@vpc-cni-kit/netlink';
import {
  netlinkPortFactory,
  netlinkRoutingPort,
  setupPodNetwork,
  teardownPodNetwork,
} from '@vpc-cni-kit/routing-table';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  binDir,
  buildLibcniRunner,
  bundleScratch,
  cleanEnv,
  leakedNetns,
  loadClusterHarness,
  now,
  ratioTable,
  stats,
  tag,
  timed,
} from './lib.mjs';

const { values: args } = commandLine(import.meta.url, {
  summary:
    'Where pod plumbing runs (ADR 0002; root, Linux): A. in-process setup/teardown of pod networks over a sync and\n' +
    'an async netlink handle; B. fresh plugin processes on a virtual-VPC node, our aws-cni against a reference-\n' +
    'layout plugin that plumbs the pod itself, with floors. Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 30, min: 1, description: 'timed pods per variant' },
    warmup: { type: 'count', default: 3, description: 'untimed pods per variant first' },
    'host-pods': { type: 'count', default: 0, description: 'A: pods already plumbed in the host first' },
    'in-process-only': { type: 'boolean', description: 'measure A alone' },
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;
const HOST_PODS = args['host-pods'];
const IN_PROCESS_ONLY = args['in-process-only'];
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const created = [];
let cluster;
let runId = '';
let bundleDir;
let seq = 0;
const { runner, scratch } = buildLibcniRunner();

const mkPodNs = (label) => {
  const name = `vckbench-${tag}-${label}`;
  const path = netnsAdd(name);
  created.push(name);
  return { name, path };
};
const dropNs = (name) => {
  netnsDel(name);
  created.splice(created.indexOf(name), 1);
};

try {
  // ---- A. in-process plumbing, warm ----
  const host = mkPodNs('host');
  const syncHandle = openSync({ netns: host.path });
  const asyncHandle = await open({ netns: host.path });
  const kinds = {
    'sync handle, uniqueMac: false (the daemon)': {
      host: netlinkRoutingPort(syncHandle),
      namespaces: netlinkPortFactory({ sync: true }),
      uniqueMac: false,
    },
    'sync handle (plugin-style)': {
      host: netlinkRoutingPort(syncHandle),
      namespaces: netlinkPortFactory({ sync: true }),
    },
    'async handle (daemon-style)': {
      host: netlinkRoutingPort(asyncHandle),
      namespaces: netlinkPortFactory(),
    },
  };
  const inSetup = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  const inTeardown = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  // A loaded node: its pods' veths, routes and rules are what the host's dumps (if any) must read.
  const hostPods = [];
  for (let i = 0; i < HOST_PODS; i++) {
    const pod = mkPodNs(`h${i}`);
    hostPods.push(pod.name);
    await setupPodNetwork(
      { ...kinds['sync handle (plugin-style)'], random: (n) => randomBytes(n) },
      {
        podIp: `10.97.${i >> 8}.${i & 255 || 1}`,
        hostVeth: `vh${tag}${String(i).padStart(4, '0')}`.slice(0, 15),
        containerIf: 'eth0',
        netnsPath: pod.path,
        mtu: 9001,
        eniTable: 2,
      },
    );
  }
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const [k, deps] of Object.entries(kinds)) {
      const pod = mkPodNs(`a${seq}`);
      const podIp = `10.98.${seq >> 8}.${seq & 255 || 1}`;
      const hostVeth = `vb${tag}${String(seq++).padStart(4, '0')}`.slice(0, 15);
      const t0 = now();
      await setupPodNetwork(
        { ...deps, random: (n) => randomBytes(n) },
        { podIp, hostVeth, containerIf: 'eth0', netnsPath: pod.path, mtu: 9001, eniTable: 254 },
      );
      const t1 = now();
      await teardownPodNetwork(deps.host, { podIp, hostVeth, eniTable: 254 });
      const t2 = now();
      dropNs(pod.name);
      if (i >= WARMUP) {
        inSetup[k].push(t1 - t0);
        inTeardown[k].push(t2 - t1);
      }
    }
  }
  syncHandle.close();
  asyncHandle.close();
  for (const name of hostPods) dropNs(name);
  dropNs(host.name);
  const fmt = (s) => `${s.median.toFixed(2)} (${s.p10.toFixed(2)}–${s.p90.toFixed(2)})`;
  console.log(
    `\n### A. In-process plumbing, warm, ${HOST_PODS} pods already on the host (${RUNS} runs, ${WARMUP} warm-up; ms, median (p10–p90))\n`,
  );
  console.log('| handle | setupPodNetwork | teardownPodNetwork |');
  console.log('| --- | --- | --- |');
  for (const k of Object.keys(kinds))
    console.log(`| ${k} | ${fmt(stats(inSetup[k]))} | ${fmt(stats(inTeardown[k]))} |`);

  // ---- B. fresh plugin processes on a virtual-VPC node ----
  if (!IN_PROCESS_ONLY) await plugins();
} finally {
  for (const ns of [...created]) {
    try {
      netnsDel(ns);
    } catch {
      // already gone
    }
  }
  await cluster?.close();
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
  const leaked = leakedNetns([tag, runId]);
  console.log(
    leaked.length === 0 ? '\nclean-up: no namespace left behind' : `\nLEAKED namespaces: ${leaked.join(' ')}`,
  );
}

async function plugins() {
  const esbuild = await import('esbuild');
  bundleDir = bundleScratch('plugin');
  const plumbsBundle = join(bundleDir, 'aws-cni-plumbs.cjs');
  await esbuild.build({
    entryPoints: [join(here, 'plugin-plumbs.entry.mjs')],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['koffi'],
    outfile: plumbsBundle,
    logLevel: 'error',
  });
  const ourPlugin = join(binDir, 'aws-cni.cjs');

  const t0 = now();
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
  console.error(`cluster up in ${(now() - t0).toFixed(0)} ms (run ${runId})`);
  const node = cluster.nodes[0];
  const inst = node.instance.netnsPath;
  const daemonConf = JSON.parse(readFileSync(join(node.confDir, '10-aws.conflist'), 'utf8'));
  const stdin = JSON.stringify({ cniVersion: '0.4.0', name: daemonConf.name, ...daemonConf.plugins[0] });
  const netlinkCjs = require.resolve('@vpc-cni-kit/netlink');

  const pluginVariants = [
    { name: 'aws-cni: gRPC call, the daemon plumbs (chosen)', file: ourPlugin },
    { name: 'reference layout: gRPC for the address, plumbing in the plugin', file: plumbsBundle },
  ];
  const loads = [
    { name: '`node -e 0` (floor)', argv: [process.execPath, '-e', '0'] },
    {
      name: 'aws-cni VERSION (load only)',
      argv: [process.execPath, ourPlugin],
      env: { CNI_COMMAND: 'VERSION' },
    },
    {
      name: 'reference layout VERSION (load only; koffi not yet loaded)',
      argv: [process.execPath, plumbsBundle],
      env: { CNI_COMMAND: 'VERSION' },
    },
    {
      name: 'require netlink + open a socket (koffi load)',
      argv: [process.execPath, '-e', `require(${JSON.stringify(netlinkCjs)}).openSync().close()`],
    },
  ];
  const addS = Object.fromEntries(pluginVariants.map((v) => [v.name, []]));
  const delS = Object.fromEntries(pluginVariants.map((v) => [v.name, []]));
  const loadS = Object.fromEntries(loads.map((v) => [v.name, []]));
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const order = i % 2 === 0 ? pluginVariants : [...pluginVariants].reverse();
    for (const v of order) {
      const pod = mkPodNs(`b${seq}`);
      const id = `plumb${tag}${String(seq).padStart(5, '0')}`;
      const env = {
        ...node.env,
        CNI_CONTAINERID: id,
        CNI_NETNS: pod.path,
        CNI_IFNAME: 'eth0',
        CNI_PATH: node.cniBinDir,
        CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=plumb-${seq++};K8S_POD_INFRA_CONTAINER_ID=${id}`,
      };
      const argv = ['nsenter', `--net=${inst}`, process.execPath, v.file];
      const a = await timed(argv, { env: { ...env, CNI_COMMAND: 'ADD' }, input: stdin });
      if (a.code !== 0) throw new Error(`${v.name} ADD failed: ${a.stdout} ${a.stderr}`);
      const d = await timed(argv, { env: { ...env, CNI_COMMAND: 'DEL' }, input: stdin });
      if (d.code !== 0) throw new Error(`${v.name} DEL failed: ${d.stdout} ${d.stderr}`);
      dropNs(pod.name);
      if (i >= WARMUP) {
        addS[v.name].push(a.ms);
        delS[v.name].push(d.ms);
      }
    }
    for (const l of loads) {
      const r = await timed(['nsenter', `--net=${inst}`, ...l.argv], {
        env: cleanEnv(l.env ?? {}),
        input: '{"cniVersion":"0.4.0"}',
      });
      if (r.code !== 0) throw new Error(`${l.name} failed: ${r.stderr}`);
      if (i >= WARMUP) loadS[l.name].push(r.ms);
    }
  }

  const floor = stats(loadS[loads[0].name]).median;
  console.log(`\n### B. Fresh plugin process, direct exec in the instance namespace (${RUNS} runs)\n`);
  console.log('ADD:\n');
  console.log(ratioTable([...pluginVariants.map((v) => [v.name, stats(addS[v.name])])], floor));
  console.log('\nDEL:\n');
  console.log(ratioTable([...pluginVariants.map((v) => [v.name, stats(delS[v.name])])], floor));
  console.log('\nLoad only:\n');
  console.log(
    ratioTable(
      loads.map((l) => [l.name, stats(loadS[l.name])]),
      floor,
    ),
  );
  const ours = stats(addS[pluginVariants[0].name]).median;
  const ref = stats(addS[pluginVariants[1].name]).median;
  console.log(
    `\nADD, plugin plumbs − daemon plumbs: ${(ref - ours).toFixed(1)} ms per pod (${(ref / ours).toFixed(2)}×)`,
  );
  console.log(
    `bundle sizes: aws-cni.cjs ${statSync(ourPlugin).size} B, reference-layout bundle ${statSync(plumbsBundle).size} B (+ koffi's native module)`,
  );
}
