/**
 * Failure and scale scenarios of aws-node on the virtual VPC, each on its own one-node cluster.
 */
import { readFileSync } from 'node:fs';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { afterEach, expect, it } from 'vitest';
import { type Cluster, type ClusterOptions, type ClusterPod, PodError } from '../src/cluster.js';
import { inNetns } from '../src/exec.js';
import { enis, eventually, startOneNode } from './support/scenario.js';

describePrivileged('aws-node scenarios', () => {
  let cluster: Cluster | undefined;
  const start = async (options: Partial<ClusterOptions> = {}) => {
    cluster = await startOneNode(options);
    return cluster;
  };

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  }, 120_000);

  it('fills an m5.large to its limit: ENIs grow to 3, the next pod gets a clear code-11 error', async () => {
    const c = await start();
    const pods: ClusterPod[] = [];
    // m5.large: 3 ENIs × (10 − 1) = 27 pod addresses (max pods 29 counts 2 host-network pods).
    for (let i = 0; i < 27; i++) pods.push(await c.addPod(0, { retryForMs: 60_000 }));
    expect(new Set(pods.map((p) => p.address)).size).toBe(27);
    expect(Object.keys((await enis(c)).ENIs)).toHaveLength(3);
    const err = await c.addPod(0, { retryForMs: 10_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodError);
    expect((err as PodError).cniCode).toBe(11);
    expect((err as PodError).message).toMatch(/no room for another ENI/);
  }, 240_000);

  // On disk the checkpoint is written on the thread pool; on tmpfs (where /var/run is on a node) in the call.
  it.each([
    ['disk', {}],
    ['tmpfs', { runDir: '/dev/shm' }],
  ] as const)(
    'loses no allocation and never hands out an address twice across a SIGKILL mid-churn (checkpoint on %s)',
    async (where, placement) => {
      const c = await start({ env: { WARM_IP_TARGET: '3' }, ...placement });
      const pods: ClusterPod[] = [];
      for (let i = 0; i < 4; i++) pods.push(await c.addPod(0));
      // A burst of ADDs, and the daemon killed while they run; the runtime (harness) retries code 11.
      const burst = Array.from({ length: 6 }, () => c.addPod(0, { retryForMs: 60_000 }));
      const settled = Promise.allSettled(burst);
      await new Promise((r) => setTimeout(r, 150));
      await c.stopDaemon(0, 'SIGKILL');
      await c.startDaemon(0).catch(async (e: unknown) => {
        await settled;
        throw e;
      });
      const outcomes = await settled;
      for (const o of outcomes) {
        if (o.status === 'rejected') throw o.reason;
        pods.push(o.value);
      }
      const addresses = pods.map((p) => p.address);
      expect(new Set(addresses).size).toBe(pods.length);
      const doc = await enis(c);
      expect(doc.AssignedIPs).toBe(pods.length);
      const checkpoint = JSON.parse(readFileSync(c.nodes[0]!.checkpoint, 'utf8')) as {
        version: string;
        allocations: { ipv4: string }[];
      };
      expect(checkpoint.version).toBe('vpc-cni-ipam/1');
      expect(checkpoint.allocations.map((a) => a.ipv4).sort()).toEqual([...addresses].sort());
      if (where === 'tmpfs') {
        const log = readFileSync(c.nodes[0]!.logFile, 'utf8');
        expect(log).toContain('"writes":"inline (memory-backed file system)"');
      }
    },
    180_000,
  );

  it('shrinks the pool back to WARM_IP_TARGET when pods go', async () => {
    const c = await start({ env: { WARM_IP_TARGET: '2', IP_COOLDOWN_PERIOD: '0' } });
    const pods: ClusterPod[] = [];
    for (let i = 0; i < 6; i++) pods.push(await c.addPod(0));
    // The last ADD used a warm address; the pass it wakes tops the pool up after the reply, not before.
    await eventually('the pool to grow to 6 pods + 2 warm', async () => (await enis(c)).TotalIPs >= 8);
    for (const p of pods) await c.delPod(p);
    // Shrinks happen at most every 30 s (the reference's rule), so this can take two rounds.
    await eventually('the pool to shrink to 2', async () => (await enis(c)).TotalIPs === 2, 90_000);
  }, 180_000);

  it('a throttling storm delays pod creation but does not break it', async () => {
    const c = await start({ env: { WARM_IP_TARGET: '1' } });
    // Four throttled answers in a row, within one call's retries (10 attempts, 200 ms doubling with jitter,
    // about 1.4–2.1 s here). A storm that outlasts them fails the pool action, which the next pass redoes:
    // pool-loop.test.ts; eni-manager's own tests cover its retry budget with a test clock, since ten
    // throttles cost 65–98 s of real backoff.
    c.vpc.simulator.faults.throttleNext(4);
    const pods: ClusterPod[] = [];
    for (let i = 0; i < 5; i++) pods.push(await c.addPod(0, { retryForMs: 60_000 }));
    expect(new Set(pods.map((p) => p.address)).size).toBe(5);
    const calls = c.vpc.simulator.calls;
    const throttled = calls.filter((call) => call.errorCode === 'RequestLimitExceeded');
    expect(throttled).toHaveLength(4);
    // Each throttled call was retried by the same action, which then went through.
    const last = calls.lastIndexOf(throttled.at(-1)!);
    expect(
      calls.slice(last + 1).some((call) => call.action === throttled.at(-1)!.action && !call.errorCode),
    ).toBe(true);
  }, 120_000);

  it('DEL with the daemon down succeeds and removes the host rules from prevResult', async () => {
    const c = await start();
    const pod = await c.addPod(0);
    await c.stopDaemon(0, 'SIGTERM');
    await c.delPod(pod);
    const rules = (await inNetns(c.nodes[0]!.instance.netnsPath, ['ip', 'rule', 'show'])).stdout;
    expect(rules).not.toContain(pod.address);
  }, 120_000);

  it('WARM_POOL_POLICY=adaptive: a burst of pods is served, in fewer EC2 calls than pods, with targets and reasons in the metrics', async () => {
    const c = await start({ env: { WARM_POOL_POLICY: 'adaptive' } });
    // Let the start-up pass settle, then 12 pods at once (a Job fan-out).
    await eventually('the pool to hold warm addresses', async () => (await enis(c)).TotalIPs >= 2);
    const pods = await Promise.all(Array.from({ length: 12 }, () => c.addPod(0, { retryForMs: 60_000 })));
    expect(new Set(pods.map((p) => p.address)).size).toBe(12);
    expect((await enis(c)).AssignedIPs).toBe(12);
    const grows = c.vpc.simulator.calls.filter(
      (call) => call.action === 'AssignPrivateIpAddresses' || call.action === 'CreateNetworkInterface',
    );
    expect(grows.length).toBeLessThan(12);
    const text = await c.metrics(0);
    expect(text).toMatch(/awscni_warm_pool_adaptive_target\{target="warm"\} \d+/);
    expect(text).toMatch(/awscni_warm_pool_adaptive_reason_count\{reason="[a-z-]+"\} \d+/);
    expect(text).toMatch(/awscni_pool_decision_count\{kind="assign",reason="[a-z-]+"\} \d+/);
    for (const p of pods) await c.delPod(p);
  }, 180_000);
});
