// Security groups for pods (root, Linux): ADD latency of a branch-ENI pod against an ordinary pod on the same
// node, in one run, interleaved. One m5.large node on the virtual VPC runs aws-node with ENABLE_POD_ENI=true
// (strict mode, macvlan branch links); the benchmark plays the VPC resource controller: before each branch pod
// it creates a branch ENI with the AWS SDK, associates it with the trunk and writes the pod's annotation (not
// timed). Each pod goes through libcni (the harness's addPod/delPod: Pod object, ADD, DEL twice, namespace).
// Reports the libcni ADD wall time and, from the daemon's log, its AddNetwork time and the part spent reading
// the pod from the Kubernetes API and finding the trunk (`resolveMs`, ADR 0016), both kinds of pod paying it.
// Build first:
//   TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@vpc-cni-kit/aws-node
//   node benchmarks/aws-node/branch.mjs            # --runs N (default 30), --warmup N (default 3)
import { readFileSync } from 'node:fs';
import { formatPodEniAnnotation, POD_ENI_ANNOTATION, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
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
    "Security groups for pods (root, Linux): a branch-ENI pod's ADD latency against an ordinary pod's on the same\n" +
    'kind of node, interleaved, through libcni. Build @vpc-cni-kit/aws-node first.',
  options: {
    runs: { type: 'count', default: 30, min: 1, description: 'timed pods of each kind' },
    warmup: { type: 'count', default: 3, description: 'untimed pods of each kind first' },
  },
});
const RUNS = args.runs;
const WARMUP = args.warmup;
// The AWS SDK takes a few hundred milliseconds to load: only once the command line is read.
const {
  AssociateTrunkInterfaceCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DeleteNetworkInterfaceCommand,
  DisassociateTrunkInterfaceCommand,
  EC2Client,
} = await import('@aws-sdk/client-ec2');
const SUBNET = 'subnet-0c000000000000001';

const { runner } = buildLibcniRunner();
let cluster;
let ec2;
let runId = '';
try {
  const { Cluster } = await loadClusterHarness();
  cluster = await Cluster.start({
    nodes: 2,
    instanceType: 'm5.large',
    binDir,
    libcniRunner: runner,
    simulator: { rateLimits: false },
    env: {
      ENABLE_POD_ENI: 'true',
      AWS_NODE_BRANCH_LINK_KIND: 'macvlan',
      AWS_NODE_RECONCILE_INTERVAL_SECONDS: '1',
      IP_COOLDOWN_PERIOD: '0',
      AWS_VPC_K8S_CNI_LOGLEVEL: 'info',
    },
  });
  runId = cluster.vpc.runId;
  const node = cluster.nodes[0];
  // The same-run baseline: node 1 without security groups for pods (no pod read on ADD).
  await cluster.stopDaemon(1);
  cluster.nodes[1].env = { ...cluster.nodes[1].env, ENABLE_POD_ENI: 'false' };
  await cluster.startDaemon(1);
  ec2 = new EC2Client({
    endpoint: cluster.vpc.simulator.endpoint,
    region: cluster.vpc.simulator.region,
    credentials: { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator-secret' },
    maxAttempts: 1,
  });
  const trunk = (
    await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET, InterfaceType: 'trunk' }))
  ).NetworkInterface;
  const used = new Set(
    cluster.vpc.simulator.state.attachedEnis(node.instance.instanceId).map((e) => e.attachment?.deviceIndex),
  );
  let device = 1;
  while (used.has(device)) device++;
  await ec2.send(
    new AttachNetworkInterfaceCommand({
      NetworkInterfaceId: trunk.NetworkInterfaceId,
      InstanceId: node.instance.instanceId,
      DeviceIndex: device,
    }),
  );

  const wall = { plain: [], ordinary: [], branch: [] };
  const kinds = ['plain', 'ordinary', 'branch'];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const kind of [...kinds.slice(i % 3), ...kinds.slice(0, i % 3)]) {
      let made;
      let extra = {};
      if (kind === 'branch') {
        const eni = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: SUBNET })))
          .NetworkInterface;
        const assoc = await ec2.send(
          new AssociateTrunkInterfaceCommand({
            BranchInterfaceId: eni.NetworkInterfaceId,
            TrunkInterfaceId: trunk.NetworkInterfaceId,
            VlanId: 1 + (i % 50),
          }),
        );
        made = { eni, assoc };
        extra = {
          annotations: {
            [POD_ENI_ANNOTATION]: formatPodEniAnnotation({
              eniId: eni.NetworkInterfaceId,
              mac: eni.MacAddress,
              ipv4: eni.PrivateIpAddress,
              subnetCidr: '10.0.0.0/20',
              vlanId: 1 + (i % 50),
            }),
          },
          limits: { [POD_ENI_RESOURCE]: '1' },
        };
      }
      const t0 = now();
      const pod = await cluster.addPod(kind === 'plain' ? 1 : 0, {
        name: `${kind}-${i}`,
        ...extra,
        retryForMs: 30_000,
      });
      const ms = now() - t0;
      if (i >= WARMUP) wall[kind].push(ms);
      await cluster.delPod(pod);
      if (made) {
        await ec2.send(
          new DisassociateTrunkInterfaceCommand({
            AssociationId: made.assoc.InterfaceAssociation.AssociationId,
          }),
        );
        await ec2.send(
          new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: made.eni.NetworkInterfaceId }),
        );
      }
    }
  }

  // The daemon's own view: AddNetwork durations and the pod read, per kind, after the warm-up.
  const lines = readFileSync(node.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const daemon = { ordinary: [], branch: [], resolveOrdinary: [], resolveBranch: [] };
  for (const l of lines) {
    const pod = String(l.pod ?? '');
    const index = Number(pod.split('-').pop());
    if (!(index >= WARMUP)) continue;
    if (l.msg === 'AddNetwork') {
      daemon.ordinary.push(l.durationMs);
      if (typeof l.resolveMs === 'number') daemon.resolveOrdinary.push(l.resolveMs);
    } else if (l.msg === 'AddNetwork (branch ENI)') {
      daemon.branch.push(l.durationMs);
      if (typeof l.resolveMs === 'number') daemon.resolveBranch.push(l.resolveMs);
    }
  }
  const plainDaemon = readFileSync(cluster.nodes[1].logFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'AddNetwork' && Number(String(l.pod).split('-').pop()) >= WARMUP)
    .map((l) => l.durationMs);
  const base = stats(wall.plain).median;
  console.log(`\n### libcni ADD (aws-cni + portmap), ${RUNS} of each, interleaved\n`);
  console.log(
    ratioTable(
      [
        ['ordinary pod, node without ENABLE_POD_ENI (baseline)', stats(wall.plain)],
        ['ordinary pod, node with ENABLE_POD_ENI (reads the pod)', stats(wall.ordinary)],
        ['branch-ENI pod (strict, macvlan branch link)', stats(wall.branch)],
      ],
      base,
      'ms',
      'baseline',
    ),
  );
  if (daemon.ordinary.length > 0 && daemon.branch.length > 0 && plainDaemon.length > 0) {
    const dbase = stats(plainDaemon).median;
    console.log('\n### daemon-side AddNetwork (its log)\n');
    console.log(
      ratioTable(
        [
          ['ordinary pod, without ENABLE_POD_ENI (baseline)', stats(plainDaemon)],
          ['ordinary pod, with ENABLE_POD_ENI', stats(daemon.ordinary)],
          ['branch-ENI pod', stats(daemon.branch)],
          ['  of which reading the pod (ordinary)', stats(daemon.resolveOrdinary)],
          ['  of which reading the pod + trunk link (branch)', stats(daemon.resolveBranch)],
        ],
        dbase,
        'ms',
        'baseline',
      ),
    );
  }
} finally {
  ec2?.destroy();
  await cluster?.close();
  const leaked = leakedNetns(runId ? [runId] : []);
  console.error(leaked.length === 0 ? 'cleaned up: no namespace left' : `LEFT BEHIND: ${leaked.join(' ')}`);
}
