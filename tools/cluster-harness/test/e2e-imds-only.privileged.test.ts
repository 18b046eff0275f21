/**
 * `ENABLE_IMDS_ONLY_MODE=true` on the virtual VPC (issue #20): with EC2 refusing every call, a restarted daemon
 * takes its limits from the shipped table and its addresses from IMDS, makes no EC2 call at all, and still
 * serves pods from the addresses already on its ENIs.
 */
import { readFileSync } from 'node:fs';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster, ClusterPod } from '../src/cluster.js';
import { enis, eventually, startOneNode } from './support/scenario.js';

/** Every EC2 action aws-node could call. */
const EC2_ACTIONS = [
  'AssignPrivateIpAddresses',
  'AttachNetworkInterface',
  'CreateNetworkInterface',
  'CreateTags',
  'DeleteNetworkInterface',
  'DescribeInstances',
  'DescribeInstanceTypes',
  'DescribeNetworkInterfaces',
  'DescribeSubnets',
  'DetachNetworkInterface',
  'ModifyNetworkInterfaceAttribute',
  'UnassignPrivateIpAddresses',
];

/** The `startupMs` of every "aws-node ready" line in the node's log, oldest first. */
const startups = (c: Cluster) =>
  readFileSync(c.nodes[0]!.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('aws-node ready'))
    .map((l) => (JSON.parse(l) as { startupMs: number }).startupMs);

describePrivileged('aws-node in IMDS-only mode', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('with EC2 refusing every call, a restarted node serves pods from its attached addresses and calls EC2 never', async () => {
    const c = await startOneNode({ env: { WARM_ENI_TARGET: '0', WARM_IP_TARGET: '5' } });
    cluster = c;
    await eventually('the pool to fill', async () => (await enis(c)).TotalIPs >= 5);
    const before = await c.addPod(0);
    const node = c.nodes[0]!;
    // A restart as usual (EC2 read at start), to compare start-up times with.
    await c.stopDaemon(0);
    await c.startDaemon(0);
    await c.stopDaemon(0);

    c.vpc.simulator.faults.add({ kind: 'iam-deny', actions: EC2_ACTIONS });
    c.vpc.simulator.clearCalls();
    node.env = { ...node.env, ENABLE_IMDS_ONLY_MODE: 'true' };
    await c.startDaemon(0);
    const pods: ClusterPod[] = [];
    for (let i = 0; i < 3; i++) pods.push(await c.addPod(0, { retryForMs: 10_000 }));
    const addresses = [before, ...pods].map((p) => p.address);
    expect(new Set(addresses).size).toBe(4);
    const card = await enis(c);
    expect(card.AssignedIPs).toBe(4);
    expect(await c.ping(pods[0]!.netnsPath, before.address)).toBe(true);
    expect(c.vpc.simulator.calls).toEqual([]);

    // Start-up times of the two restarts (reported, not asserted): with EC2, and IMDS-only.
    const [, withEc2, imdsOnly] = startups(c);
    console.log(`aws-node restart: ${withEc2} ms reading EC2, ${imdsOnly} ms IMDS-only`);
  }, 180_000);

  it('prefix delegation on a Xen instance type is refused at start with one line', async () => {
    const failed = await startOneNode({
      instanceType: 'm4.large',
      env: { ENABLE_PREFIX_DELEGATION: 'true', WARM_PREFIX_TARGET: '1' },
    }).catch((e: unknown) => e);
    expect(String(failed)).toMatch(/exited \(1\)/);
    expect(String(failed)).toContain(
      'aws-node: failed to start: ENABLE_PREFIX_DELEGATION=true, but m4.large (hypervisor xen) is neither Nitro nor bare metal',
    );
  }, 120_000);
});
