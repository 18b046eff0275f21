/**
 * ENIs aws-node must leave alone (issue #20), on the virtual VPC: an ENI tagged
 * `node.k8s.amazonaws.com/no_manage=true`, an untagged one with `MANAGE_UNTAGGED_ENI=false` and one in a subnet
 * tagged `kubernetes.io/role/cni=0`, each attached once while the daemon is down (found at start) and once while
 * it runs (found by the reconcile). None is used for pods, changed in EC2 or routed on the node; all are
 * reported by introspection and metrics.
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster, ClusterPod } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { enis, eventually, startOneNode } from './support/scenario.js';

const EXCLUDED_SUBNET = 'subnet-0c0000000000000e0';
const NODE_SUBNET = 'subnet-0c000000000000001';

type Kind = 'no-manage-tag' | 'untagged' | 'excluded-subnet';

describePrivileged('aws-node leaves unmanaged ENIs alone', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('no_manage, untagged and excluded-subnet ENIs, attached before and after start, are never used, changed or routed', async () => {
    const c = await startOneNode({
      instanceType: 'm5.4xlarge',
      extraSubnets: [
        { id: EXCLUDED_SUBNET, cidrBlock: '10.0.224.0/20', tags: { 'kubernetes.io/role/cni': '0' } },
      ],
      env: {
        MANAGE_UNTAGGED_ENI: 'false',
        AWS_NODE_RECONCILE_INTERVAL_SECONDS: '1',
        WARM_ENI_TARGET: '0',
        WARM_IP_TARGET: '4',
      },
    });
    cluster = c;
    const state = c.vpc.simulator.state;
    const instanceId = c.nodes[0]!.instance.instanceId;
    const create = (kind: Kind) =>
      state.createNetworkInterface({
        subnetId: kind === 'excluded-subnet' ? EXCLUDED_SUBNET : NODE_SUBNET,
        secondaryCount: 2,
        tags:
          kind === 'no-manage-tag'
            ? [
                ['node.k8s.amazonaws.com/no_manage', 'true'],
                ['node.k8s.amazonaws.com/instance_id', instanceId],
              ]
            : kind === 'excluded-subnet'
              ? [['node.k8s.amazonaws.com/instance_id', instanceId]]
              : [],
      }).id;
    const attach = (id: string) => {
      const used = new Set(state.attachedEnis(instanceId).map((e) => e.attachment?.deviceIndex));
      let device = 1;
      while (used.has(device)) device++;
      state.attach(id, instanceId, device, undefined);
    };
    const kinds: Kind[] = ['no-manage-tag', 'untagged', 'excluded-subnet'];
    const snapshot = (id: string) =>
      JSON.stringify(state.eni(id), (_k, v: unknown) => (v instanceof Map ? [...v.entries()] : v));
    const addressesOf = (id: string) => state.eni(id)!.privateIps.map((p) => p.value);

    // Attached while the daemon is down: found at start.
    await c.stopDaemon(0);
    const before = kinds.map((kind) => ({ kind, id: create(kind) }));
    for (const e of before) attach(e.id);
    await c.startDaemon(0);
    const pods: ClusterPod[] = [];
    for (let i = 0; i < 3; i++) pods.push(await c.addPod(0, { retryForMs: 30_000 }));

    // Attached while it runs: found by the reconcile.
    const after = kinds.map((kind) => ({ kind, id: create(kind) }));
    for (const e of after) attach(e.id);
    const all = [...before, ...after];
    const snapshots = new Map(all.map((e) => [e.id, snapshot(e.id)]));
    await eventually('the reconcile to classify the ENIs attached after start', async () => {
      const listed = (await c.introspect(0, '/v1/unmanaged-enis')) as { eniId: string }[];
      return all.every((e) => listed.some((u) => u.eniId === e.id));
    });
    // More pods, so the pool grows (and would reach for any ENI it took as its own).
    for (let i = 0; i < 12; i++) pods.push(await c.addPod(0, { retryForMs: 30_000 }));
    await new Promise((r) => setTimeout(r, 3000)); // a few more reconciles and pool passes

    const listed = (await c.introspect(0, '/v1/unmanaged-enis')) as { eniId: string; reason: string }[];
    expect(listed.map((u) => [u.eniId, u.reason]).sort()).toEqual(all.map((e) => [e.id, e.kind]).sort());
    const managed = Object.keys((await enis(c)).ENIs);
    const rules = (await inNetns(c.nodes[0]!.instance.netnsPath, ['ip', 'rule', 'show'])).stdout;
    const addrs = (await inNetns(c.nodes[0]!.instance.netnsPath, ['ip', '-o', 'addr', 'show'])).stdout;
    const podAddresses = new Set(pods.map((p) => p.address));
    for (const e of all) {
      expect(managed, `${e.kind} ${e.id} in the datastore`).not.toContain(e.id);
      expect(snapshot(e.id), `${e.kind} ${e.id} changed in EC2`).toBe(snapshots.get(e.id));
      expect(state.eni(e.id)?.attachment?.instanceId).toBe(instanceId);
      for (const address of addressesOf(e.id)) {
        expect(podAddresses.has(address), `${address} of ${e.id} given to a pod`).toBe(false);
        expect(rules, `a rule for ${address} of ${e.id}`).not.toMatch(new RegExp(`from ${address}\\b`));
        expect(addrs, `${address} of ${e.id} configured on the node`).not.toContain(` ${address}/`);
      }
    }
    const metrics = await c.metrics(0);
    for (const kind of kinds)
      expect(metrics).toMatch(new RegExp(`awscni_eni_unmanaged\\{reason="${kind}"\\} 2`));
    // Unmanaged ENIs count against the instance's 8: the limit left for this node is 2.
    expect(metrics).toMatch(/awscni_eni_max 2\b/);
  }, 240_000);
});
