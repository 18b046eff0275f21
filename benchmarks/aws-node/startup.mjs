// aws-node start to healthy (root, Linux): on a virtual-VPC m5.large node, the time from spawning the daemon
// (`nsenter --net=<instance> node aws-node.cjs`, as the cluster harness does) to its conflist appearing, which
// the daemon writes only once healthy; and the `startupMs` it logs (from the start of startDaemon(), after the
// bundle's top-level requires, to ready). The first boot is the harness's (fresh node: IMDS discovery, host set-up, warm ENI attached); the
// restarts reuse the checkpoint and the attached ENIs, as a DaemonSet pod restart does. Same-run baselines,
// interleaved with the restarts: `node -e 0` and loading @aws-sdk/client-ec2 alone.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/startup.mjs         # --restarts N (default 10)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine } from '../../scripts/lib/cli.mjs';
import {
  buildLibcniRunner,
  binDir as builtBinDir,
  cleanEnv,
  DAEMON_OPTIONS,
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
    "aws-node start to healthy (root, Linux): spawn to conflist written, and the daemon's own startupMs, over\n" +
    'restarts of one node, interleaved with `node -e 0` and loading @aws-sdk/client-ec2 alone.\n' +
    'Build @vpc-cni-kit/aws-node first.',
  options: {
    restarts: { type: 'count', default: 10, min: 1, description: 'timed daemon restarts' },
    'bin-dir': DAEMON_OPTIONS['bin-dir'],
  },
});
const RESTARTS = args.restarts;
const binDir = args['bin-dir'] ?? builtBinDir;
let cluster;
let runId = '';
const { runner, scratch } = buildLibcniRunner();

/** The `startupMs` of every `aws-node ready` line in a daemon log. */
const readyTimes = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"aws-node ready"'))
    .map((l) => JSON.parse(l).startupMs);

try {
  const { Cluster } = await loadClusterHarness();
  const t0 = now();
  cluster = await Cluster.start({ nodes: 1, instanceType: 'm5.large', binDir, libcniRunner: runner });
  const clusterMs = now() - t0;
  runId = cluster.vpc.runId;
  const node = cluster.nodes[0];
  const inst = node.instance.netnsPath;
  const conflist = join(node.confDir, '10-aws.conflist');
  const firstBoot = readyTimes(node.logFile)[0];

  const spawnToHealthy = [];
  const floor = [];
  const sdk = [];
  for (let i = 0; i < RESTARTS; i++) {
    await cluster.stopDaemon(0, 'SIGTERM');
    rmSync(conflist, { force: true });
    const s0 = now();
    const child = spawn('nsenter', [`--net=${inst}`, process.execPath, join(binDir, 'aws-node.cjs')], {
      env: node.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    node.daemon = child; // so the harness stops it on close
    while (!existsSync(conflist)) {
      if (child.exitCode !== null) throw new Error(`aws-node exited (${child.exitCode}): ${stderr}`);
      if (now() - s0 > 30_000) throw new Error('aws-node not healthy after 30 s');
      await new Promise((r) => setTimeout(r, 2));
    }
    spawnToHealthy.push(now() - s0);
    // Let it settle before the baselines, so they do not compete with its background work.
    await new Promise((r) => setTimeout(r, 300));
    floor.push((await timed(['nsenter', `--net=${inst}`, process.execPath, '-e', '0'])).ms);
    sdk.push(
      (
        await timed(['nsenter', `--net=${inst}`, process.execPath, '-e', "require('@aws-sdk/client-ec2')"], {
          env: cleanEnv(),
        })
      ).ms,
    );
  }
  const logged = readyTimes(node.logFile).slice(1);
  const f = stats(floor);
  console.log(`\n### aws-node start to healthy (m5.large, ${RESTARTS} restarts)\n`);
  console.log(
    ratioTable(
      [
        ['restart: spawn → conflist written', stats(spawnToHealthy)],
        ['restart: logged `startupMs` (startDaemon() → ready)', stats(logged)],
        ['`node -e 0` (floor)', f],
        ['`node -e "require(\'@aws-sdk/client-ec2\')"`', stats(sdk)],
      ],
      f.median,
    ),
  );
  console.log(
    `\nfirst boot on a fresh node: logged startupMs ${firstBoot} ms (the whole 1-node cluster came up in ${clusterMs.toFixed(0)} ms, VPC included)`,
  );
  const worst = Math.max(stats(spawnToHealthy).max, firstBoot);
  console.log(
    `\nTarget start to healthy ≤ 2 s: ${stats(spawnToHealthy).median <= 2000 && firstBoot <= 2000 ? 'met' : 'NOT met'} (worst seen ${worst.toFixed(0)} ms)`,
  );
} finally {
  await cluster?.close();
  rmSync(scratch, { recursive: true, force: true });
  const leaked = leakedNetns([tag, runId]);
  console.log(
    leaked.length === 0 ? '\nclean-up: no namespace left behind' : `\nLEAKED namespaces: ${leaked.join(' ')}`,
  );
}
