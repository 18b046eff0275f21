/**
 * Custom networking with prefix delegation: the /28 prefixes are delegated to ENIs in the ENIConfig's pod
 * subnet (one node, us-west-2a).
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Cluster } from '../src/cluster.js';
import {
  CN,
  customNetworkingEnv,
  customNetworkingLayout,
  eniConfigObject,
} from '../src/custom-networking.js';
import { startOneNode } from './support/scenario.js';

describePrivileged('custom networking with prefix delegation', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startOneNode({
      network: customNetworkingLayout,
      env: { ...customNetworkingEnv, ENABLE_PREFIX_DELEGATION: 'true', WARM_PREFIX_TARGET: '1' },
    });
    cluster.kube.sim.objects.create(
      'crd.k8s.amazonaws.com/v1alpha1',
      'eniconfigs',
      eniConfigObject('us-west-2a', CN.podSubnetA, [CN.podsGroup]),
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it('gives pods addresses from a /28 prefix on an ENI in the pod subnet with the ENIConfig groups', async () => {
    const pod = await cluster.addPod(0);
    expect(pod.address).toMatch(/^100\.64\./);
    const n = (a: string) => a.split('.').reduce((x, o) => x * 256 + Number(o), 0);
    const inPrefix = (prefix: string) =>
      n(pod.address) - n(prefix.split('/')[0]!) < 16 && n(pod.address) >= n(prefix.split('/')[0]!);
    const eni = cluster.vpc.simulator.state.enis().find((e) => e.ipv4Prefixes.some((p) => inPrefix(p.value)));
    expect(eni).toMatchObject({ subnetId: CN.podSubnetA, groups: [CN.podsGroup] });
    expect(eni!.attachment?.deviceIndex).not.toBe(0);
    await cluster.delPod(pod);
  });
});
