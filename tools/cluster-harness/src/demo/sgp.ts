/**
 * `npm run demo -- --sgp`: security groups for pods. The VPC resource controller (its program) and aws-node with
 * `ENABLE_POD_ENI` on every node (node 0 in strict mode, node 1 in standard mode), the layout of
 * `sgp-layout.ts` (pods' groups `db-client` and `isolated`, a database that admits TCP 5432 from `db-client`
 * only); per node a `db-client` pod, an `isolated` pod and an ordinary `web` pod. Reports the trunks, the pods with
 * their branch ENIs and VLANs, and the connectivity matrix — each cell checked against what the groups and the
 * node's enforcing mode say it must be.
 */
import { formatTable } from '@vpc-cni-kit/aws-node';
import type { Cluster, ClusterPod } from '../cluster.js';
import { databaseHello } from '../database.js';
import { SGP, sgpPolicies } from '../sgp-layout.js';

/** The enforcing mode of node `i` in the demo: node 1 standard, the others strict. */
export function demoMode(i: number): 'strict' | 'standard' {
  return i === 1 ? 'standard' : 'strict';
}

/** The demo's pods on each node: name and `app` label (`web` is selected by no policy). */
const APPS = ['db-client', 'isolated', 'web'] as const;

/** Creates the policies, starts the controller, waits for the trunks and creates the pods. */
export async function sgpWorkload(cluster: Cluster, print: (s: string) => void): Promise<void> {
  for (const p of sgpPolicies) cluster.kube.createSecurityGroupPolicy(p);
  print(
    `SecurityGroupPolicies: ${sgpPolicies.map((p) => `${p.name} (app=${p.podLabels?.['app']} → ${p.groupIds.join(',')})`).join('; ')}`,
  );
  const controller = await cluster.startController({ cooldownMs: 2000 });
  print(`vpc-resource-controller is acting (pid ${controller.pid}); waiting for every node's trunk ENI…`);
  await cluster.waitForTrunks();
  for (const n of cluster.nodes)
    for (const app of APPS) await cluster.addPod(n.index, { name: `${app}-${n.index}`, labels: { app } });
}

/** Each node's trunk: its ENI, the branches on it, and the `vpc.amazonaws.com/pod-eni` capacity the controller set. */
export function trunkTable(cluster: Cluster): string {
  const rows = [['NODE', 'MODE', 'INSTANCE TYPE', 'TRUNK ENI', 'BRANCHES', 'POD-ENI CAPACITY']];
  for (const n of cluster.nodes) {
    const trunk = cluster.trunkOf(n.index);
    const node = cluster.kube.sim.objects.get('v1', 'nodes', n.nodeName) as
      | { status?: { capacity?: Record<string, string> } }
      | undefined;
    rows.push([
      `node${n.index}`,
      demoMode(n.index),
      n.instance.instanceType,
      trunk?.eniId ?? '(none)',
      trunk ? String(cluster.vpc.simulator.state.trunkAssociations(trunk.eniId).length) : '0',
      node?.status?.capacity?.['vpc.amazonaws.com/pod-eni'] ?? '(not set)',
    ]);
  }
  return formatTable(rows);
}

/** Pod → node → its ENI (the branch's, with VLAN and groups, or the node ENI's pool address) → address. */
export async function sgpPodTable(cluster: Cluster): Promise<string> {
  const plumbed = new Map<string, { hostVeth: string; trunkInterface: string }>();
  for (const n of cluster.nodes) {
    const list = (await cluster.introspect(n.index, '/v1/branch-pods')) as {
      namespace: string;
      name: string;
      hostVeth: string;
      trunkInterface: string;
    }[];
    for (const p of list) plumbed.set(`${p.namespace}/${p.name}`, p);
  }
  const branches = new Map(cluster.branchEnis().map((b) => [b.eniId, b]));
  const rows = [['POD', 'NODE', 'ENI', 'VLAN', 'LINK', 'GROUPS', 'ADDRESS']];
  for (const pod of cluster.pods) {
    const key = `${pod.namespace}/${pod.name}`;
    const b = pod.branch;
    const p = plumbed.get(key);
    rows.push([
      key,
      `node${pod.node}`,
      b ? `${b.eniId} (branch)` : 'node ENI (pool)',
      b ? String(b.vlanId) : '-',
      b && p ? `vlan.eth.${b.vlanId} on ${p.trunkInterface}, host ${p.hostVeth}` : '-',
      b ? (branches.get(b.eniId)?.groups.join(',') ?? '?') : SGP.nodesGroup,
      pod.address,
    ]);
  }
  return formatTable(rows);
}

/** A pod's security group in the layout (branch pods: the policy's; others: the nodes'). */
function groupOf(pod: ClusterPod, cluster: Cluster): string {
  if (pod.branch === undefined) return SGP.nodesGroup;
  return cluster.branchEnis().find((b) => b.eniId === pod.branch?.eniId)?.groups[0] ?? '?';
}

/** Whether the layout's group `to` admits a new flow (`proto`, port) from a member of group `from`. */
function admits(to: string, from: string, proto: 'icmp' | 'tcp', port?: number): boolean {
  switch (to) {
    case SGP.nodesGroup:
      return from === SGP.nodesGroup;
    case SGP.dbClientGroup:
      return from === SGP.dbClientGroup || from === SGP.nodesGroup;
    case SGP.databaseGroup:
      return from === SGP.dbClientGroup && proto === 'tcp' && port === SGP.databasePort;
    default:
      return false;
  }
}

/**
 * What a ping from `from` to `to` must do: node-local traffic stays on the node (no group applies) unless a
 * branch pod of a strict-mode node is involved, whose every packet crosses the VPC; in the VPC the receiver's
 * group decides (the senders' groups allow all egress).
 */
function expectPing(cluster: Cluster, from: ClusterPod, to: ClusterPod): boolean {
  const sameNode = from.node === to.node;
  const branchInvolved = from.branch !== undefined || to.branch !== undefined;
  if (sameNode && (!branchInvolved || demoMode(from.node) === 'standard')) return true;
  return admits(groupOf(to, cluster), groupOf(from, cluster), 'icmp');
}

/**
 * Every pod pings every other pod and connects to the database (TCP 5432); the database pings every pod (its
 * row). ✓ / ✗ as observed; a cell that differs from what the groups and modes say is marked `!` and fails the demo.
 */
export async function sgpMatrix(cluster: Cluster): Promise<{ text: string; ok: boolean }> {
  const db = cluster.database;
  if (db === undefined) throw new Error('the security-groups demo needs its database instance');
  const pods = [...cluster.pods];
  const header = ['FROM \\ TO', ...pods.map((p) => p.name), `database:${db.port}`];
  const rows = [header];
  let ok = true;
  const cell = (got: boolean, want: boolean) => {
    if (got !== want) ok = false;
    return `${got ? '✓' : '✗'}${got === want ? '' : '!'}`;
  };
  for (const from of pods) {
    const results = await Promise.all([
      ...pods.map(async (to) =>
        to === from
          ? '-'
          : cell(await cluster.ping(from.netnsPath, to.address), expectPing(cluster, from, to)),
      ),
      (async () =>
        cell(
          await databaseHello(from.netnsPath, db.address, db.port),
          admits(SGP.databaseGroup, groupOf(from, cluster), 'tcp', db.port),
        ))(),
    ]);
    rows.push([from.name, ...results]);
  }
  const dbRow = await Promise.all(
    pods.map(async (to) =>
      cell(
        await cluster.ping(db.instance.netnsPath, to.address),
        admits(groupOf(to, cluster), SGP.databaseGroup, 'icmp'),
      ),
    ),
  );
  rows.push(['database', ...dbRow, '-']);
  return { text: formatTable(rows), ok };
}

/** After the pods went: waits for the controller to delete every branch ENI (the cooldown) and says so. */
export async function branchesAfterTeardown(cluster: Cluster, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (cluster.branchEnis().length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 200));
  return cluster.branchEnis().length;
}
