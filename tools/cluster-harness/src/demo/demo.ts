/**
 * `npm run demo`: a virtual VPC with two nodes, aws-node on each, pods created through a real CNI runtime
 * (Debian's libcni) — then a pod table, a connectivity matrix and the warm-pool state, and teardown.
 *
 *   --keep           leave everything running (a detached holder process keeps the VPC and daemons alive)
 *   --json           end with one JSON line describing the setup (and, with --keep, the `down` command)
 *   --nodes N        nodes (default 2)     --pods N   pods per node (default 3)
 *   --custom-networking  VPC 10.20.0.0/16 + 100.64.0.0/16, nodes in 10.20.x of two zones, an ENIConfig per zone:
 *                    pods get 100.64.x addresses from ENIs in the zone's pod subnet, with the pods' group
 *   --ipv6           an IPv6 cluster: dual-stack VPC, aws-node in IPv6 mode (pods get /128s from each node's /80),
 *                    egress-cni for IPv4 destinations; the matrix pings the IPv6 and the IPv4-only internet hosts
 *   --sgp            security groups for pods: the VPC resource controller and aws-node with ENABLE_POD_ENI
 *                    (node 0 strict, node 1 standard), SecurityGroupPolicies for app=db-client and app=isolated,
 *                    a database that admits TCP 5432 from db-client only; per node a db-client, an isolated and
 *                    a web pod; trunks, branch ENIs and VLANs, and the connectivity matrix with the database
 *   --down RUN_ID    tear down a kept setup
 *   --image          run aws-vpc-cni-init and aws-node as containers of the aws-node image (built by
 *                    deploy/image/build.mjs) under containerd, started for the demo and stopped after it
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { downRun } from '@vpc-cni-kit/ec2-simulator';
import { awsNodeBinDir, awsNodeVersion } from '../bin-dir.js';
import { Cluster } from '../cluster.js';
import { type Containerd, containerdLauncher, startContainerd } from '../containerd.js';
import { CN, customNetworkingEnv, customNetworkingLayout, eniConfigObject } from '../custom-networking.js';
import { buildImage } from '../image.js';
import { SGP, sgpLayout } from '../sgp-layout.js';
import { connectivityMatrix, kubernetesView, podTable, poolState } from './report.js';
import { branchesAfterTeardown, demoMode, sgpMatrix, sgpPodTable, sgpWorkload, trunkTable } from './sgp.js';

const STATE_DIR = '/run/vck-demo';

interface Args {
  keep: boolean;
  json: boolean;
  nodes: number;
  pods: number;
  down: string | undefined;
  hold: string | undefined;
  image: boolean;
  customNetworking: boolean;
  ipv6: boolean;
  sgp: boolean;
}

const USAGE = [
  'usage: npm run demo -- [--keep] [--json] [--image] [--nodes N (1-10, default 2)] [--pods N (1-20, default 3)]',
  '                        [--custom-networking | --ipv6 | --sgp]',
  '       npm run demo -- --down RUN_ID',
  '       npm run demo -- --help | --version',
].join('\n');

/** A command-line mistake: the usage is printed and the demo exits 2. */
class UsageError extends Error {
  readonly code = 'DEMO_USAGE';
}

const DEMO_OPTIONS = {
  keep: { type: 'boolean' },
  json: { type: 'boolean' },
  nodes: { type: 'string' },
  pods: { type: 'string' },
  down: { type: 'string' },
  hold: { type: 'string' },
  image: { type: 'boolean' },
  'custom-networking': { type: 'boolean' },
  ipv6: { type: 'boolean' },
  sgp: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

function strictParse(argv: string[]) {
  try {
    return parseArgs({ args: argv, strict: true, options: DEMO_OPTIONS });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
      throw new UsageError((e as Error).message);
    throw e;
  }
}

function parseDemoArgs(argv: string[]): Args | 'help' | 'version' {
  const { values } = strictParse(argv);
  if (values.help) return 'help';
  if (values.version) return 'version';
  const a: Args = {
    keep: values.keep === true,
    json: values.json === true,
    nodes: Number(values.nodes ?? 2),
    pods: Number(values.pods ?? 3),
    down: values.down,
    hold: values.hold,
    image: values.image === true,
    customNetworking: values['custom-networking'] === true,
    ipv6: values.ipv6 === true,
    sgp: values.sgp === true,
  };
  if (a.ipv6 && a.customNetworking)
    throw new UsageError(
      '--ipv6 and --custom-networking do not go together (no custom networking in IPv6 mode)',
    );
  if (a.sgp && a.ipv6)
    throw new UsageError(
      '--sgp and --ipv6 do not go together (aws-node refuses ENABLE_POD_ENI in IPv6 mode)',
    );
  if (a.sgp && (a.customNetworking || a.image || values.pods !== undefined))
    throw new UsageError(
      '--sgp has its own layout and pods: not with --custom-networking, --image or --pods',
    );
  if (!Number.isInteger(a.nodes) || a.nodes < 1 || a.nodes > 10) throw new UsageError('--nodes must be 1–10');
  if (!Number.isInteger(a.pods) || a.pods < 1 || a.pods > 20) throw new UsageError('--pods must be 1–20');
  return a;
}

function selfCommand(): string {
  return `${process.execPath} ${__filename}`;
}

/** Brings the setup up, prints the report; returns the cluster and the JSON description. */
async function bringUp(
  args: Args,
  print: (s: string) => void,
): Promise<{ cluster: Cluster; description: Record<string, unknown>; ok: boolean }> {
  const binDir = awsNodeBinDir();
  const runner = process.env['VCK_LIBCNI_RUNNER'] ?? join(__dirname, '../../libcni-runner/bin/libcni-runner');
  if (!existsSync(runner)) throw new Error(`libcni runner not found at ${runner} (set VCK_LIBCNI_RUNNER)`);
  let containerd: Containerd | undefined;
  let launcher: ReturnType<typeof containerdLauncher> | undefined;
  if (args.image) {
    print('building the aws-node image (deploy/image/build.mjs; the first build downloads Debian packages)…');
    const report = buildImage('aws-node');
    print(`image ${report.image}: ${JSON.stringify(report.sizes)}; starting containerd and importing it…`);
    containerd = await startContainerd(join('/tmp', `vck-demo-containerd-${process.pid}`));
    await containerd.importImage(report.dockerArchive);
    launcher = containerdLauncher(containerd, report.image);
  }
  print(
    `bringing up a virtual VPC with ${args.nodes} m5.large nodes${args.customNetworking ? ' (custom networking: nodes in 10.20.0.0/16, pods in 100.64.0.0/16)' : ''}${args.ipv6 ? ' (IPv6: a dual-stack VPC, aws-node in IPv6 mode, /128 pods from a /80 per node)' : ''}${args.sgp ? ` and a database instance (security groups for pods: ${Array.from({ length: args.nodes }, (_, i) => `node${i} ${demoMode(i)}`).join(', ')})` : ''}…`,
  );
  const cluster = await Cluster.start({
    nodes: args.nodes,
    binDir,
    libcniRunner: runner,
    bandwidth: true,
    env: { ANNOTATE_POD_IP: 'true', ...(args.customNetworking ? customNetworkingEnv : {}) },
    ...(args.customNetworking ? { network: customNetworkingLayout } : {}),
    ...(args.ipv6 ? { ipv6: true } : {}),
    ...(args.sgp
      ? {
          network: sgpLayout,
          podEni: { mode: 'strict' as const },
          perNode: Array.from({ length: args.nodes }, (_, i) => ({
            env: { POD_SECURITY_GROUP_ENFORCING_MODE: demoMode(i) },
          })),
          database: { securityGroupId: SGP.databaseGroup, port: SGP.databasePort },
        }
      : {}),
    ...(launcher ? { launcher } : {}),
  }).catch(async (e: unknown) => {
    await stopContainerd(containerd);
    throw e;
  });
  if (containerd) containerds.set(cluster, containerd);
  if (args.customNetworking) {
    // One ENIConfig per zone, named after it (ENI_CONFIG_LABEL_DEF=topology.kubernetes.io/zone).
    for (const [zone, subnet] of [
      ['us-west-2a', CN.podSubnetA],
      ['us-west-2b', CN.podSubnetB],
    ] as const) {
      cluster.kube.sim.objects.create(
        'crd.k8s.amazonaws.com/v1alpha1',
        'eniconfigs',
        eniConfigObject(zone, subnet, [CN.podsGroup]),
      );
    }
    print('ENIConfigs us-west-2a and us-west-2b created; aws-node puts new ENIs in their pod subnets');
  }
  let matrix: { text: string; ok: boolean };
  if (args.sgp) {
    print(`aws-node is healthy on ${args.nodes} nodes (ENABLE_POD_ENI=true)`);
    await sgpWorkload(cluster, print).catch(async (e: unknown) => {
      await cluster.close();
      throw e;
    });
    print(`created per node a db-client, an isolated and a web pod through libcni\n`);
    print(`Trunks (EC2, and the Node capacity the controller set)\n${trunkTable(cluster)}\n`);
    print(`Pods\n${await sgpPodTable(cluster)}\n`);
    matrix = await sgpMatrix(cluster);
    print(
      `Connectivity (ping; TCP to the database; ! = not what the groups and modes say)\n${matrix.text}\n` +
        '  strict (node0): every packet of a branch pod crosses the VPC and its groups, node-local too;\n' +
        '  standard (node1): node-local traffic stays on the node; the database admits TCP 5432 from db-client only.\n',
    );
  } else {
    print(
      `aws-node is healthy on ${args.nodes} nodes; creating ${args.pods} pods per node through libcni (aws-cni → egress-cni → portmap → bandwidth)…\n`,
    );
    for (let p = 0; p < args.pods; p++) {
      for (const n of cluster.nodes) await cluster.addPod(n.index, { name: `web-${n.index}-${p}` });
    }
    print(`Pods\n${await podTable(cluster)}\n`);
    matrix = await connectivityMatrix(cluster);
    print(`Connectivity (ping)\n${matrix.text}\n`);
  }
  print(`Warm pool\n${await poolState(cluster)}\n`);
  print(
    `Kubernetes (the cluster's API: Nodes, CNINodes and pods as aws-node and the kubelet left them)\n${kubernetesView(cluster)}\n`,
  );
  const described = cluster.vpc.describe();
  const description = {
    runId: cluster.vpc.runId,
    region: described.region,
    nodes: cluster.nodes.map((n) => ({
      netns: n.instance.netns,
      netnsPath: n.instance.netnsPath,
      instanceId: n.instance.instanceId,
      privateIp: n.instance.privateIp,
      grpcSocket: n.socket,
      conflistDir: n.confDir,
      pluginBinDir: n.cniBinDir,
      checkpointPath: n.checkpoint,
      introspection: { netns: n.instance.netns, address: '127.0.0.1:61679' },
      metrics: { netns: n.instance.netns, address: '127.0.0.1:61678' },
      log: n.logFile,
      daemonPid: n.daemon?.pid,
    })),
    pods: cluster.pods.map((p) => ({
      name: p.name,
      namespace: p.namespace,
      netns: p.netns,
      netnsPath: p.netnsPath,
      node: p.node,
      address: p.address,
    })),
    internetHost: described.internet.host,
    ...(described.internet.hostIpv6 ? { internetHostIpv6: described.internet.hostIpv6 } : {}),
    ...(cluster.database
      ? {
          database: {
            netns: cluster.database.instance.netns,
            address: cluster.database.address,
            port: cluster.database.port,
          },
          controllerPid: cluster.controller?.pid,
        }
      : {}),
    kubernetes: { server: `https://${cluster.kube.address}:443`, kubeconfigFromHost: cluster.kube.sim.url },
    connectivityOk: matrix.ok,
    down: `${selfCommand()} --down ${cluster.vpc.runId}`,
  };
  return { cluster, description, ok: matrix.ok };
}

/** The containerd each image-mode cluster runs on. */
const containerds = new Map<Cluster, Containerd>();

async function stopContainerd(containerd: Containerd | undefined): Promise<void> {
  if (containerd === undefined) return;
  await containerd.stop();
  rmSync(join(containerd.socket, '..'), { recursive: true, force: true });
}

async function tearDown(cluster: Cluster, print: (s: string) => void): Promise<void> {
  print('tearing down…');
  for (const pod of [...cluster.pods]) await cluster.delPod(pod).catch(() => undefined);
  if (cluster.controller?.running) {
    const left = await branchesAfterTeardown(cluster);
    print(`branch ENIs left in EC2 once the pods went and the cooldown passed: ${left}`);
  }
  await cluster.close();
  await stopContainerd(containerds.get(cluster));
  print('done: no namespace, daemon or file of this run is left.');
}

async function hold(args: Args, readyFile: string): Promise<void> {
  const lines: string[] = [];
  const { cluster, description, ok } = await bringUp(args, (s) => lines.push(s));
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(
    join(STATE_DIR, `${cluster.vpc.runId}.json`),
    JSON.stringify({ pid: process.pid, description }),
  );
  writeFileSync(readyFile, JSON.stringify({ output: lines.join('\n'), description, ok }));
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await tearDown(cluster, () => {});
  rmSync(join(STATE_DIR, `${cluster.vpc.runId}.json`), { force: true });
}

/** Whether process `pid` runs `program` (its command line names it), so a recycled pid is never signalled. */
function runs(pid: number, program: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(program);
  } catch {
    return false;
  }
}

async function down(runId: string): Promise<number> {
  if (!/^[0-9a-f]{8}$/.test(runId)) throw new UsageError(`not a run id: ${runId}`);
  const file = join(STATE_DIR, `${runId}.json`);
  if (existsSync(file)) {
    const { pid, description } = JSON.parse(readFileSync(file, 'utf8')) as {
      pid: number;
      description?: { controllerPid?: number; nodes?: { daemonPid?: number }[] };
    };
    try {
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } catch {
      // the holder is gone already; clean up below
    }
    // A holder that crashed left its daemons and VPC resource controller (--sgp) running: stop each pid that
    // still runs that program.
    const left = [
      ...(description?.nodes ?? []).map((n) => [n.daemonPid, 'aws-node.cjs'] as const),
      [description?.controllerPid, 'vpc-resource-controller'] as const,
    ];
    for (const [pid, program] of left) {
      if (pid === undefined || !runs(pid, program)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(file, { force: true });
  }
  // Whatever a crashed holder left: the run's namespaces (pods included, by name prefix) and records.
  await downRun(runId).catch(() => {
    // Nothing recorded for the run: the holder already removed it.
  });
  const { netnsList, netnsDel } = await import('@vpc-cni-kit/netlink');
  for (const ns of netnsList()) if (ns.startsWith(`vckpod-${runId}-`)) netnsDel(ns);
  rmSync(join('/tmp', `vck-cluster-${runId}`), { recursive: true, force: true });
  process.stdout.write(`run ${runId} is down\n`);
  return 0;
}

async function main(): Promise<number> {
  const args = parseDemoArgs(process.argv.slice(2));
  if (args === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args === 'version') {
    process.stdout.write(`aws-node ${awsNodeVersion()}\n`);
    return 0;
  }
  if (args.down !== undefined) return down(args.down);
  if (args.hold !== undefined) {
    await hold(args, args.hold);
    return 0;
  }
  const print = (s: string) => process.stdout.write(`${s}\n`);
  if (!args.keep) {
    const { cluster, description, ok } = await bringUp(args, print);
    await tearDown(cluster, print);
    if (args.json) print(JSON.stringify({ ...description, down: null, running: false }));
    return ok ? 0 : 1;
  }
  // --keep: a detached holder owns the VPC (its simulator serves EC2 and IMDS) and the daemons.
  mkdirSync(STATE_DIR, { recursive: true });
  const readyFile = join(STATE_DIR, `ready-${process.pid}.json`);
  const holder = spawn(
    process.execPath,
    [
      __filename,
      '--hold',
      readyFile,
      '--nodes',
      String(args.nodes),
      ...(args.sgp ? [] : ['--pods', String(args.pods)]),
      ...(args.image ? ['--image'] : []),
      ...(args.customNetworking ? ['--custom-networking'] : []),
      ...(args.ipv6 ? ['--ipv6'] : []),
      ...(args.sgp ? ['--sgp'] : []),
    ],
    {
      detached: true,
      stdio: 'ignore',
      env: process.env,
    },
  );
  holder.unref();
  const deadline = Date.now() + 300_000;
  while (!existsSync(readyFile)) {
    if (holder.exitCode !== null || Date.now() > deadline) throw new Error('the demo holder did not come up');
    await new Promise((r) => setTimeout(r, 250));
  }
  const { output, description, ok } = JSON.parse(readFileSync(readyFile, 'utf8')) as {
    output: string;
    description: { down: string };
    ok: boolean;
  };
  rmSync(readyFile, { force: true });
  print(output);
  print(`left running; tear it down with: ${description.down}`);
  if (args.json) print(JSON.stringify({ ...description, running: true }));
  return ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`demo: ${e instanceof Error ? e.message : String(e)}\n`);
    if (e instanceof UsageError) process.stderr.write(`${USAGE}\n`);
    process.exitCode = e instanceof UsageError ? 2 : 1;
  },
);
