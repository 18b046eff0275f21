/**
 * Custom networking for trunks and branches, as the reference controller does it: the ENIConfig named by the node
 * label `vpc.amazonaws.com/eniConfig`, else by the CNINode's `CustomNetworking` feature (aws-node writes it),
 * gives the trunk its subnet and groups and the branches their subnet. A controller in this process against
 * ec2-simulator and kube-simulator.
 */
import { parsePodEniAnnotation } from '@vpc-cni-kit/sgp-branch';
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { ControllerMetrics, jsonLogger } from '../src/index.js';
import { DB_CLIENT_SG, NODE_SG, POD_NET_SG, POD_SUBNET, startWorld, type World } from './support/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function eniConfig(w: World, name: string, spec: Record<string, unknown>): void {
  w.kube.objects.create('crd.k8s.amazonaws.com/v1alpha1', 'eniconfigs', {
    metadata: { name },
    spec,
  } as never);
}

/**
 * Two ENIConfigs in the pod subnet, `us-west-2a-pods` with its own group and `subnet-only` without, the first
 * chosen for node-1 by the reference's node label.
 */
function podsEniConfigOnNode1(w: World): void {
  eniConfig(w, 'us-west-2a-pods', { subnet: POD_SUBNET, securityGroups: [POD_NET_SG] });
  eniConfig(w, 'subnet-only', { subnet: POD_SUBNET });
  w.kube.objects.patch('v1', 'nodes', 'node-1', {
    metadata: { labels: { 'vpc.amazonaws.com/eniConfig': 'us-west-2a-pods' } },
  });
}

const trunkOf = (w: World, instanceId: string) =>
  w.ec2.state.enis().find((e) => e.interfaceType === 'trunk' && e.attachment?.instanceId === instanceId);

describe('custom networking for trunks (ENIConfig)', () => {
  it('puts the trunk in the ENIConfig subnet with its groups (label, or CNINode feature), and the branches in that subnet', async () => {
    world = await startWorld();
    const w = world;
    // node-1 by the reference's node label; node-2 by the feature aws-node writes on its CNINode.
    podsEniConfigOnNode1(w);
    w.kube.objects.patch('vpcresources.k8s.aws/v1alpha1', 'cninodes', 'node-2', {
      spec: {
        features: [{ name: 'SecurityGroupsForPods' }, { name: 'CustomNetworking', value: 'subnet-only' }],
      },
    });
    w.policy();
    await w.controller();

    const t1 = await eventually('node-1 trunk', () => trunkOf(w, 'i-0a000000000000001'));
    expect(t1.subnetId).toBe(POD_SUBNET);
    expect(t1.groups).toEqual([POD_NET_SG]);
    // An ENIConfig without groups: the primary ENI's, as the reference.
    const t2 = await eventually('node-2 trunk', () => trunkOf(w, 'i-0a000000000000002'));
    expect(t2.subnetId).toBe(POD_SUBNET);
    expect(t2.groups).toEqual([NODE_SG]);

    w.pod('client-1', 'node-1', { app: 'db-client' });
    w.pod('client-2', 'node-2', { app: 'db-client' });
    for (const [pod, trunk] of [
      ['client-1', t1],
      ['client-2', t2],
    ] as const) {
      const branch = parsePodEniAnnotation(await eventually(pod, () => w.annotation(pod)), { family: 4 });
      expect(branch.subnetCidr).toBe('10.0.64.0/20');
      const eni = w.ec2.state.eni(branch.eniId)!;
      expect(eni.subnetId).toBe(POD_SUBNET);
      expect(eni.groups).toEqual([DB_CLIENT_SG]);
      expect(
        w.ec2.state.trunkAssociations().some((a) => a.branchEniId === eni.id && a.trunkEniId === trunk.id),
      ).toBe(true);
    }
  });

  it("gives a pod that no policy selects a branch with the instance groups as the reference has them: the ENIConfig's, else the primary ENI's", async () => {
    world = await startWorld();
    const w = world;
    podsEniConfigOnNode1(w);
    w.kube.objects.patch('v1', 'nodes', 'node-2', {
      metadata: { labels: { 'vpc.amazonaws.com/eniConfig': 'subnet-only' } },
    });
    await w.controller();
    // Requesting the resource, selected by no policy (none exists).
    w.pod('orphan-1', 'node-1', { app: 'web' });
    w.pod('orphan-2', 'node-2', { app: 'web' });
    for (const [pod, groups] of [
      ['orphan-1', [POD_NET_SG]],
      ['orphan-2', [NODE_SG]],
    ] as const) {
      const branch = parsePodEniAnnotation(await eventually(pod, () => w.annotation(pod)), { family: 4 });
      const eni = w.ec2.state.eni(branch.eniId)!;
      expect(eni.subnetId).toBe(POD_SUBNET);
      expect(eni.groups).toEqual(groups);
    }
  });

  it('waits for a missing ENIConfig with a warning, then builds the trunk in its subnet; an existing trunk elsewhere is reported, not replaced', async () => {
    world = await startWorld();
    const w = world;
    w.kube.objects.patch('v1', 'nodes', 'node-1', {
      metadata: { labels: { 'vpc.amazonaws.com/eniConfig': 'late' } },
    });
    const lines: Record<string, unknown>[] = [];
    const metrics = new ControllerMetrics();
    const first = await w.controller({
      metrics,
      log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    const waiting = await eventually('a warning', () =>
      lines.find((l) => l['msg'] === 'node not ready for branches; retrying' && l['node'] === 'node-1'),
    );
    expect(waiting['problem']).toBe('ENIConfig late not found');
    expect(trunkOf(w, 'i-0a000000000000001')).toBeUndefined();
    // node-2 (no custom networking) is not held up by it.
    expect((await eventually('node-2 trunk', () => trunkOf(w, 'i-0a000000000000002'))).subnetId).not.toBe(
      POD_SUBNET,
    );

    eniConfig(w, 'late', { subnet: POD_SUBNET, securityGroups: [POD_NET_SG] });
    const trunk = await eventually('node-1 trunk after the ENIConfig exists', () =>
      trunkOf(w, 'i-0a000000000000001'),
    );
    expect([trunk.subnetId, trunk.groups]).toEqual([POD_SUBNET, [POD_NET_SG]]);
    await first.stop();

    // node-2's trunk is in the instance subnet; asking it for the ENIConfig now: reported (log line, the
    // reference's unreconciled_trunk_network_interfaces), the trunk left as it is, new branches in the new subnet.
    w.kube.objects.patch('v1', 'nodes', 'node-2', {
      metadata: { labels: { 'vpc.amazonaws.com/eniConfig': 'late' } },
    });
    const oldTrunk = trunkOf(w, 'i-0a000000000000002')!;
    lines.length = 0;
    const second = await w.controller({
      metrics,
      log: jsonLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
    });
    const reported = await eventually('the mismatch', () =>
      lines.find((l) => l['msg'] === 'the trunk ENI differs from the node ENIConfig; left as it is'),
    );
    expect(reported).toMatchObject({
      node: 'node-2',
      trunkEniId: oldTrunk.id,
      differs: ['subnet', 'security_groups'],
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain('unreconciled_trunk_network_interfaces{attribute="subnet"} 1');
    expect(text).toContain('unreconciled_trunk_network_interfaces{attribute="security_groups"} 1');
    w.policy();
    w.pod('client-3', 'node-2', { app: 'db-client' });
    const branch = parsePodEniAnnotation(await eventually('client-3', () => w.annotation('client-3')), {
      family: 4,
    });
    expect(w.ec2.state.eni(branch.eniId)?.subnetId).toBe(POD_SUBNET);
    expect(trunkOf(w, 'i-0a000000000000002')?.id).toBe(oldTrunk.id);
    await second.stop();
  });
});
