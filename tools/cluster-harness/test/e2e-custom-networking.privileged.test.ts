/**
 * Custom networking on the virtual VPC (the scenario): VPC 10.20.0.0/16 + 100.64.0.0/16, nodes in
 * 10.20.x of two zones, one ENIConfig per zone (named after it, chosen by ENI_CONFIG_LABEL_DEF =
 * topology.kubernetes.io/zone) giving a pod subnet in 100.64.0.0/16 and its own security group.
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cluster, type ClusterPod, PodError } from '../src/cluster.js';
import {
  CN,
  customNetworkingEnv,
  customNetworkingLayout,
  eniConfigObject,
} from '../src/custom-networking.js';
import { tcpConnect, tcpPeerProbe } from './peer-probe.js';
import { eventually, startOneNode } from './support/scenario.js';

const VPC = 'vpc-0c000000000000001';
const {
  podSubnetA: PODS_A,
  podSubnetB: PODS_B,
  podSubnetA2: PODS_A2,
  podsGroup: SG_PODS,
  altGroup: SG_ALT,
} = CN;

describePrivileged('custom networking (ENIConfig) on the virtual VPC', () => {
  let cluster: Cluster;
  const pods: ClusterPod[] = [];

  /** Node `i`'s ENIs other than the primary, from EC2. */
  const podEnis = (i: number) => {
    const id = cluster.nodes[i]!.instance.instanceId;
    return cluster.vpc.simulator.state
      .enis()
      .filter((e) => e.attachment?.instanceId === id && e.attachment.deviceIndex !== 0);
  };
  const eniOf = (address: string) =>
    cluster.vpc.simulator.state.enis().find((e) => e.privateIps.some((p) => p.value === address));

  beforeAll(async () => {
    cluster = await startOneNode({
      nodes: 2,
      network: customNetworkingLayout,
      env: customNetworkingEnv,
    });
    // us-west-2b's ENIConfig is created later (the missing-ENIConfig test).
    const objects = cluster.kube.sim.objects;
    objects.create(
      'crd.k8s.amazonaws.com/v1alpha1',
      'eniconfigs',
      eniConfigObject('us-west-2a', PODS_A, [SG_PODS]),
    );
    objects.create(
      'crd.k8s.amazonaws.com/v1alpha1',
      'eniconfigs',
      eniConfigObject('alt-2a', PODS_A2, [SG_ALT]),
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it("creates node 0's first ENI in its zone's pod subnet with the ENIConfig's groups; the primary ENI holds no pod address", async () => {
    await eventually('an ENI on node 0', async () => podEnis(0).length > 0, 30_000);
    const [eni] = podEnis(0);
    expect(eni!.subnetId).toBe(PODS_A);
    expect(eni!.groups).toEqual([SG_PODS]);
    expect(eni!.privateIps.map((p) => p.value).every((a) => a.startsWith('100.64.'))).toBe(true);
    const primary = cluster.vpc.simulator.state.eni(
      cluster.vpc.simulator.state.instance(cluster.nodes[0]!.instance.instanceId)!.primaryEniId,
    )!;
    expect(primary.privateIps).toHaveLength(1);
    expect(await cluster.introspect(0, '/v1/eni-configs')).toMatchObject({
      choice: { name: 'us-west-2a', source: 'label' },
      spec: { subnet: PODS_A, securityGroups: [SG_PODS] },
    });
    await eventually('the CustomNetworking feature', async () => {
      const cniNode = cluster.kube.sim.objects.get(
        'vpcresources.k8s.aws/v1alpha1',
        'cninodes',
        cluster.nodes[0]!.nodeName,
      );
      const features = (cniNode?.spec as { features?: unknown[] } | undefined)?.features ?? [];
      return features.some((f) => JSON.stringify(f) === '{"name":"CustomNetworking","value":"us-west-2a"}');
    });
  });

  it('a missing ENIConfig: no ENI, a Warning Event, a distinct pod error; creating it heals the node', async () => {
    expect(podEnis(1)).toEqual([]);
    const err = await cluster.addPod(1, { retryForMs: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodError);
    expect((err as PodError).message).toContain("node's ENIConfig is not available");
    expect(String((err as PodError).details)).toContain('ENIConfig "us-west-2b"');
    await eventually('the EniConfigNotFound Event', async () =>
      cluster.kube.sim.objects
        .list('events.k8s.io/v1', 'events', 'kube-system')
        .some((e) => e.reason === 'EniConfigNotFound' && String(e.note).includes('us-west-2b')),
    );
    expect(await cluster.introspect(1, '/v1/eni-configs')).toMatchObject({
      choice: { name: 'us-west-2b', source: 'label' },
      problem: { code: 'EniConfigNotFound' },
    });
    cluster.kube.sim.objects.create(
      'crd.k8s.amazonaws.com/v1alpha1',
      'eniconfigs',
      eniConfigObject('us-west-2b', PODS_B, [SG_PODS]),
    );
    await eventually('an ENI on node 1', async () => podEnis(1).length > 0, 30_000);
    expect(podEnis(1)[0]).toMatchObject({ subnetId: PODS_B, groups: [SG_PODS] });
  });

  it("a relabelled node puts new ENIs in the new ENIConfig's subnet; existing ENIs keep their addresses", async () => {
    const before = podEnis(0).map((e) => e.id);
    cluster.kube.sim.objects.patch('v1', 'nodes', cluster.nodes[0]!.nodeName, {
      metadata: { labels: { 'vpc.amazonaws.com/externalEniConfig': 'alt-2a' } },
    });
    // The pod takes an address of the existing ENI; the pool then wants another ENI (WARM_ENI_TARGET=1).
    pods.push(await cluster.addPod(0));
    expect(pods[0]!.address).toMatch(/^100\.64\.([0-9]|[12][0-9]|3[01])\./);
    expect(before).toContain(eniOf(pods[0]!.address)!.id);
    await eventually('a second ENI on node 0', async () => podEnis(0).length > before.length, 30_000);
    const added = podEnis(0).find((e) => !before.includes(e.id))!;
    expect(added.subnetId).toBe(PODS_A2);
    expect(added.groups).toEqual([SG_ALT]);
    expect(eniOf(pods[0]!.address)!.id).toBe(before[0]);
    expect(await cluster.introspect(0, '/v1/eni-configs')).toMatchObject({
      choice: { name: 'alt-2a', source: 'external-label' },
    });
  });

  it('pods keep their 100.64 address to pods and instances in the VPC, and leave SNATed to the node address', async () => {
    pods.push(await cluster.addPod(1));
    const [a, b] = pods as [ClusterPod, ClusterPod];
    expect(b.address).toMatch(/^100\.64\.(3[2-9]|[4-5][0-9]|6[0-3])\./);
    expect(eniOf(b.address)).toMatchObject({ subnetId: PODS_B, groups: [SG_PODS] });

    const toPod = tcpPeerProbe(b.netnsPath, b.address, 18101);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, b.address, 18101)).toBe(true);
    expect(await toPod.peer).toBe(a.address);

    const node1 = cluster.nodes[1]!.instance;
    expect(node1.privateIp).toMatch(/^10\.20\./);
    const toInstance = tcpPeerProbe(node1.netnsPath, node1.privateIp, 18102);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, node1.privateIp, 18102)).toBe(true);
    expect(await toInstance.peer).toBe(a.address);

    const { internet } = cluster.vpc.describe();
    const out = tcpPeerProbe(internet.netnsPath, internet.host, 18103);
    await new Promise((r) => setTimeout(r, 300));
    expect(await tcpConnect(a.netnsPath, internet.host, 18103)).toBe(true);
    expect(await out.peer).toBe(cluster.nodes[0]!.instance.privateIp);
    expect(VPC).toBe(cluster.vpc.describe().vpcs[0]!.vpcId);
  });
});
