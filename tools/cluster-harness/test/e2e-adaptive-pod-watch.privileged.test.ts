/**
 * WARM_POOL_POLICY=adaptive with the pod watch, end to end on the virtual VPC: pods bound to the node in the
 * API server (no sandbox, no ADD yet) make the daemon grow its pool in EC2 before any of them asks; their ADDs
 * then all find a warm address on the first try, and their traffic flows.
 */
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import type { Cluster, ClusterPod } from '../src/cluster.js';
import { enis, eventually, startOneNode } from './support/scenario.js';

/** `/v1/warm-pool` as far as this test reads it. */
interface WarmPool {
  adaptive: {
    targets: { warm: number; aim: number };
    why: { code: string };
    bound: number;
    boundJobPods: number;
  } | null;
  boundPods?: { count: number; jobCount: number; pods: string[]; watch: { state: string; lists: number } };
}

/** A metric's value (0 when the daemon has not exported it). */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describePrivileged('adaptive warm pool with the pod watch', () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('grows the pool for pods bound to the node before their ADD; each ADD then finds a warm address', async () => {
    const c = (cluster = await startOneNode({ env: { WARM_POOL_POLICY: 'adaptive' } }));
    const warmPool = async () => (await c.introspect(0, '/v1/warm-pool')) as WarmPool;
    await eventually('the pod watch', async () => (await warmPool()).boundPods?.watch.state === 'watching');
    const instanceId = c.nodes[0]!.instance.instanceId;
    // Secondary addresses EC2 holds for the node: what the pool asked for, seen from EC2's side.
    const ec2Secondaries = () =>
      c.vpc.simulator.state
        .enis()
        .filter((e) => e.attachment?.instanceId === instanceId)
        .reduce((n, e) => n + e.privateIps.length - 1, 0);
    const start = await enis(c);
    expect(start.AssignedIPs).toBe(0);
    // More pods than the start-up pool holds: without the watch, most of them would find it empty.
    const n = start.TotalIPs + 5;

    const bound = [];
    for (let i = 0; i < n; i++) bound.push(await c.bindPod(0));
    await eventually(
      `the pool to cover the ${n} bound pods`,
      async () => (await enis(c)).TotalIPs >= n,
      30_000,
      200,
    );
    // Still no ADD: the growth came from the watch alone.
    const grown = await enis(c);
    expect(grown.AssignedIPs).toBe(0);
    expect(ec2Secondaries()).toBeGreaterThanOrEqual(n);
    const before = await c.metrics(0);
    expect(metric(before, 'awscni_add_ip_req_count')).toBe(0);
    expect(metric(before, 'awscni_warm_pool_adaptive_bound_pods')).toBe(n);
    expect(before).toMatch(/awscni_warm_pool_adaptive_reason_count\{reason="pods-bound"\} [1-9]/);
    const seen = await warmPool();
    expect(seen.boundPods).toMatchObject({ count: n, watch: { state: 'watching', lists: 1 } });
    expect(seen.boundPods!.pods).toHaveLength(n);
    expect(seen.adaptive!.bound).toBe(n);

    // Kubelet gets to them: every ADD on its first try (retryForMs 0: a code-11 "no address yet" would throw).
    const pods: ClusterPod[] = await Promise.all(
      bound.map((p) => c.addPod(0, { ...p, bound: true, retryForMs: 0 })),
    );
    expect(new Set(pods.map((p) => p.address)).size).toBe(n);
    const after = await c.metrics(0);
    expect(metric(after, 'awscni_add_ip_req_count')).toBe(n);
    expect(metric(after, 'awscni_no_available_ip_addresses')).toBe(0);
    // Running now: none of them is counted as bound any more.
    await eventually('the bound count to drop', async () => (await warmPool()).boundPods?.count === 0);

    // Traffic as the other end-to-end tests check it: pod to pod, pod to node.
    expect(await c.ping(pods[0]!.netnsPath, pods[n - 1]!.address)).toBe(true);
    expect(await c.ping(pods[n - 1]!.netnsPath, pods[0]!.address)).toBe(true);
    expect(await c.ping(pods[1]!.netnsPath, c.nodes[0]!.instance.privateIp)).toBe(true);
    for (const p of pods) await c.delPod(p);
  }, 180_000);

  it("a Job's bound pod is seen as a fan-out starting (/v1/warm-pool, its metric, the pool's aim); a ReplicaSet's is not", async () => {
    // Two nodes started together: the same start-up pool and the same age when their pod is bound.
    const c = (cluster = await startOneNode({ nodes: 2, env: { WARM_POOL_POLICY: 'adaptive' } }));
    const warmPool = async (i: number) => (await c.introspect(i, '/v1/warm-pool')) as WarmPool;
    for (const i of [0, 1])
      await eventually(
        `node ${i}'s pod watch`,
        async () => (await warmPool(i)).boundPods?.watch.state === 'watching',
      );
    const controlledBy = (apiVersion: string, kind: string) => [
      { apiVersion, kind, name: `${kind.toLowerCase()}-1`, uid: `uid-${kind}`, controller: true },
    ];
    const jobPod = await c.bindPod(0, { ownerReferences: controlledBy('batch/v1', 'Job') });
    await c.bindPod(1, { ownerReferences: controlledBy('apps/v1', 'ReplicaSet') });
    await eventually(
      'both pools to decide with their bound pod',
      async () => (await warmPool(0)).adaptive?.bound === 1 && (await warmPool(1)).adaptive?.bound === 1,
      30_000,
      100,
    );
    const [job, replicaSet] = [await warmPool(0), await warmPool(1)];
    expect(job.boundPods).toMatchObject({ count: 1, jobCount: 1 });
    expect(job.adaptive).toMatchObject({ bound: 1, boundJobPods: 1 });
    expect(replicaSet.boundPods).toMatchObject({ count: 1, jobCount: 0 });
    expect(replicaSet.adaptive).toMatchObject({ bound: 1, boundJobPods: 0 });
    // The Job's node aims for the rest of a fan-out; the ReplicaSet's lone pod takes a warm address. (Just after
    // start-up both pools already hold one ENI's worth, which is what a fan-out is guessed at before any burst:
    // the grow itself shows once that prior has decayed, tested on the pool loop with a clock in
    // examples/aws-node/test/warm-pool-policy.test.ts.)
    expect(job.adaptive!.targets.aim).toBeGreaterThan(replicaSet.adaptive!.targets.aim);
    expect((await enis(c)).TotalIPs).toBeGreaterThanOrEqual(job.adaptive!.targets.aim);
    const [jobMetrics, replicaSetMetrics] = [await c.metrics(0), await c.metrics(1)];
    expect(metric(jobMetrics, 'awscni_warm_pool_adaptive_bound_pods')).toBe(1);
    expect(metric(jobMetrics, 'awscni_warm_pool_adaptive_bound_job_pods')).toBe(1);
    expect(metric(replicaSetMetrics, 'awscni_warm_pool_adaptive_bound_pods')).toBe(1);
    expect(metric(replicaSetMetrics, 'awscni_warm_pool_adaptive_bound_job_pods')).toBe(0);
    expect(metric(jobMetrics, 'awscni_add_ip_req_count')).toBe(0);

    // Kubelet starts the Job's pod: its ADD finds a warm address at once, and it is no longer counted.
    const pod = await c.addPod(0, { ...jobPod, bound: true, retryForMs: 0 });
    await eventually(
      'the Job pod to leave the count',
      async () => (await warmPool(0)).boundPods?.jobCount === 0,
    );
    expect(metric(await c.metrics(0), 'awscni_warm_pool_adaptive_bound_job_pods')).toBe(0);
    await c.delPod(pod);
  }, 120_000);

  it('the API away: the count goes to 0 with one log line, pods are still served; back: counted again', async () => {
    const c = (cluster = await startOneNode({ env: { WARM_POOL_POLICY: 'adaptive' } }));
    const warmPool = async () => (await c.introspect(0, '/v1/warm-pool')) as WarmPool;
    await eventually('the pod watch', async () => (await warmPool()).boundPods?.watch.state === 'watching');
    for (let i = 0; i < 3; i++) await c.bindPod(0);
    await eventually('3 bound pods', async () => (await warmPool()).boundPods?.count === 3);
    await c.kube.sim.suspend();
    try {
      await eventually(
        'the watch to give up',
        async () => (await warmPool()).boundPods?.watch.state === 'unreachable',
      );
      expect((await warmPool()).boundPods!.count).toBe(0);
      // The pool works as without the watch: a pod starts while the API is away.
      const pod = await c.addPod(0, { retryForMs: 30_000 });
      expect(pod.address).toMatch(/^10\.0\./);
      // Several retries later (0.5 s → 5 s backoff), still one line.
      await new Promise((r) => setTimeout(r, 2000));
      const lines = c.logTail(0, 400).split('\n');
      expect(lines.filter((l) => l.includes('pods bound to this node are not counted'))).toHaveLength(1);
      await c.delPod(pod);
    } finally {
      await c.kube.sim.resume();
    }
    await eventually('counted again', async () => (await warmPool()).boundPods?.count === 3, 30_000);
    expect((await warmPool()).boundPods!.watch.lists).toBeGreaterThanOrEqual(2);
    expect(c.logTail(0, 400)).toContain('pods bound to this node watched again');
    expect(metric(await c.metrics(0), 'awscni_warm_pool_adaptive_bound_pods')).toBe(3);
  }, 120_000);
});
