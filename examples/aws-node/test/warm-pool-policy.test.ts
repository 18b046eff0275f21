import { Datastore, nullCheckpointer } from '@vpc-cni-kit/datastore';
import { ManualClock } from '@vpc-cni-kit/datastore/testing';
import type { EniManager } from '@vpc-cni-kit/eni-manager';
import { describe, expect, it } from 'vitest';
import { loadConfig, poolTargets } from '../src/config/config.js';
import { ConfigError } from '../src/config/env-reader.js';
import { BoundPods } from '../src/daemon/bound-pods.js';
import { introspectionServer, listen } from '../src/daemon/http-servers.js';
import { silentLogger } from '../src/daemon/logger.js';
import { DaemonMetrics } from '../src/daemon/metrics.js';
import type { PoolLoop } from '../src/daemon/pool-loop.js';
import { testPool } from './support/pool.js';

describe('WARM_POOL_POLICY', () => {
  it('is static by default, adaptive on request, and anything else is refused naming the variable', () => {
    expect(loadConfig({}).warmPoolPolicy).toBe('static');
    expect(loadConfig({ WARM_POOL_POLICY: 'adaptive' }).warmPoolPolicy).toBe('adaptive');
    let caught: unknown;
    try {
      loadConfig({ WARM_POOL_POLICY: 'smart' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.variable)).toEqual(['WARM_POOL_POLICY']);
  });

  it('lets prefix delegation run without a static warm target under adaptive, and only there', () => {
    const pd = loadConfig({ ENABLE_PREFIX_DELEGATION: 'true', WARM_POOL_POLICY: 'adaptive' });
    expect(pd).toMatchObject({ prefixDelegation: true, warmPoolPolicy: 'adaptive', warmPrefixTarget: 0 });
    let caught: unknown;
    try {
      loadConfig({ ENABLE_PREFIX_DELEGATION: 'true' });
    } catch (e) {
      caught = e;
    }
    expect((caught as ConfigError).problems.map((p) => p.problem).join('\n')).toContain(
      'or WARM_POOL_POLICY=adaptive',
    );
  });

  it('AWS_NODE_ADAPTIVE_POD_WATCH: on with adaptive and the Kubernetes API, off otherwise; an explicit true that would do nothing is refused', () => {
    const inCluster = { KUBERNETES_SERVICE_HOST: '10.100.0.1', MY_NODE_NAME: 'ip-10-0-0-9' };
    expect(loadConfig({ ...inCluster, WARM_POOL_POLICY: 'adaptive' }).adaptivePodWatch).toBe(true);
    expect(loadConfig({ ...inCluster }).adaptivePodWatch).toBe(false);
    expect(loadConfig({ WARM_POOL_POLICY: 'adaptive' }).adaptivePodWatch).toBe(false);
    expect(
      loadConfig({ ...inCluster, WARM_POOL_POLICY: 'adaptive', AWS_NODE_ADAPTIVE_POD_WATCH: 'false' })
        .adaptivePodWatch,
    ).toBe(false);
    expect(loadConfig({ AWS_NODE_ADAPTIVE_POD_WATCH: 'false' }).adaptivePodWatch).toBe(false);
    for (const [env, problem] of [
      [{ ...inCluster, AWS_NODE_ADAPTIVE_POD_WATCH: 'true' }, 'only used with WARM_POOL_POLICY=adaptive'],
      [{ WARM_POOL_POLICY: 'adaptive', AWS_NODE_ADAPTIVE_POD_WATCH: 'true' }, 'needs the Kubernetes API'],
      [{ WARM_POOL_POLICY: 'adaptive', AWS_NODE_ADAPTIVE_POD_WATCH: 'sometimes' }, 'must be a boolean'],
    ] as const) {
      let caught: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      const problems = (caught as ConfigError).problems;
      expect(problems.map((p) => p.variable)).toEqual(['AWS_NODE_ADAPTIVE_POD_WATCH']);
      expect(problems[0]!.problem).toContain(problem);
    }
  });

  it('is reported on /v1/ipamd-env-settings next to the reference variables', async () => {
    const ds = new Datastore({ clock: new ManualClock(), checkpointer: nullCheckpointer });
    for (const [env, policy] of [
      [{}, 'static'],
      [{ WARM_POOL_POLICY: 'adaptive' }, 'adaptive'],
    ] as const) {
      const endpoint = await listen(introspectionServer(ds, loadConfig(env), silentLogger), '127.0.0.1:0');
      try {
        const res = await fetch(`http://${endpoint.address}/v1/ipamd-env-settings`);
        // The real behaviour: the daemon manages ENIs on unschedulable nodes too.
        expect(await res.json()).toMatchObject({
          WARM_POOL_POLICY: policy,
          WARM_ENI_TARGET: 1,
          AWS_MANAGE_ENIS_NON_SCHEDULABLE: true,
        });
      } finally {
        await endpoint.close();
      }
    }
  });
});

/** A node on one ENI of 30 addresses (29 usable), up for a while, holding `addresses` /32s. */
function node(addresses: number) {
  const clock = new ManualClock();
  const datastore = new Datastore({ clock, checkpointer: nullCheckpointer, cooldownMs: 0 });
  datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  let next = 10;
  const add = (n: number) => {
    const got: string[] = [];
    for (let i = 0; i < n; i++) got.push(`10.0.1.${next++}`);
    return got;
  };
  for (const a of add(addresses)) datastore.addCidr('eni-0', `${a}/32`);
  const calls: number[] = [];
  const eni = {
    async assignIpv4(_eniId: string, request: { ipv4Count?: number }) {
      calls.push(request.ipv4Count ?? 0);
      return { ipv4Addresses: add(request.ipv4Count ?? 0), ipv4Prefixes: [] };
    },
    async unassignIpv4() {
      return {};
    },
  } as unknown as EniManager;
  return { datastore, eni, calls };
}

/** The shared test pool loop for `n`, with WARM_ENI_TARGET=1 on one ENI of 30 (max pods 29). */
function loopFor(
  n: ReturnType<typeof node>,
  more: Partial<ConstructorParameters<typeof PoolLoop>[0]> = {},
): PoolLoop {
  return testPool(n.datastore, n.eni, 0, {
    targets: {
      warmEniTarget: 1,
      warmIpTarget: 0,
      minimumIpTarget: 0,
      warmPrefixTarget: 0,
      prefixDelegation: false,
    },
    limits: { maxEnis: 1, ipv4PerEni: 30, maxPods: 29 },
    now: () => 1_000_000,
    ...more,
  });
}

describe('PoolLoop with the adaptive policy', () => {
  it('sees a burst through the backend observer, grows for it in one call, and exposes targets and reasons', async () => {
    const n = node(3);
    const { datastore, calls } = n;
    const metrics = new DaemonMetrics();
    let t = 1_000_000;
    const pool = loopFor(n, {
      policy: 'adaptive',
      // At most 2 warm addresses on a quiet node (and as its start-up prior).
      adaptiveSettings: { minWarm: 2, maxWarm: 2 },
      now: () => t,
      observer: metrics,
    });
    const backendObserver = pool.observing(metrics);
    expect((await pool.tick()).kind).toBe('none'); // 3 free ≥ warm 2 on a quiet node
    t += 60_000;
    // A burst: 3 pods get the warm addresses, 5 more find the pool empty.
    for (let i = 0; i < 3; i++) {
      datastore.assign({ networkName: 'aws-cni', containerID: `burst-${i}`, ifName: 'eth0' });
      backendObserver.addNetwork(1, 'success');
    }
    for (let i = 0; i < 5; i++) backendObserver.noAvailableAddress();
    const d = await pool.tick();
    expect(d.kind).toBe('assign');
    expect(calls).toEqual([d.kind === 'assign' ? d.count : -1]);
    expect(calls[0]).toBeGreaterThanOrEqual(7); // the 5 waiting pods on top of the warm 2, in one call
    expect(d.reason.message).toMatch(/^adaptive warm \d+/);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/awscni_warm_pool_adaptive_target\{target="warm"\} \d+/);
    expect(text).toMatch(/awscni_warm_pool_adaptive_target\{target="surge"\} \d+/);
    expect(text).toMatch(/awscni_warm_pool_adaptive_target\{target="surge_floor"\} [\d.]+/);
    expect(text).toMatch(/awscni_warm_pool_adaptive_target\{target="draining"\} [01]/);
    expect(text).toContain('awscni_warm_pool_adaptive_reason_count{reason="pods-waiting"} 1');
    // The observer still forwards to the metrics it wraps.
    expect(text).toContain('awscni_no_available_ip_addresses 5');
  });

  it('grows for pods bound to the node before any of them asks (observation.bound), with its metric and reason', async () => {
    const n = node(3);
    const metrics = new DaemonMetrics();
    let t = 1_000_000;
    let bound = 0;
    const pool = loopFor(n, {
      policy: 'adaptive',
      adaptiveSettings: { minWarm: 2, maxWarm: 2 },
      now: () => t,
      observer: metrics,
      bound: () => {
        metrics.boundPods({ pods: bound, jobPods: 0 });
        return { pods: bound, jobPods: 0 };
      },
    });
    expect((await pool.tick()).kind).toBe('none');
    t += 60_000;
    // Six pods bound, none has asked: no ADD, no miss, yet the pool grows for them in one call.
    bound = 6;
    const d = await pool.tick();
    expect(d.kind).toBe('assign');
    expect(n.calls).toHaveLength(1);
    expect(n.datastore.stats().totalIPs).toBeGreaterThanOrEqual(2 + 6);
    expect(pool.lastAdaptive()).toMatchObject({ bound: 6, why: { code: 'pods-bound' } });
    const text = await metrics.registry.metrics();
    expect(text).toContain('awscni_warm_pool_adaptive_bound_pods 6');
    expect(text).toContain('awscni_warm_pool_adaptive_reason_count{reason="pods-bound"} 1');
    // Without the watch (the static policy, or the switch off) nothing is asked.
    expect(loopFor(node(3)).lastAdaptive()).toBeUndefined();
  });

  it("a bound pod of a Job grows the pool for the rest of its fan-out before it asks; a ReplicaSet's does not", async () => {
    /** One pod bound to a node up for an hour: what the pool grows by, from a real BoundPods fed its object. */
    async function grownFor(controller: { apiVersion: string; kind: string }) {
      const n = node(3);
      const metrics = new DaemonMetrics();
      let t = 1_000_000;
      const bound = new BoundPods({
        nodeName: 'ip-10-0-0-7',
        holding: () => new Set(),
        onChange: (c) => metrics.boundPods(c),
        log: silentLogger,
      });
      const pool = loopFor(n, {
        policy: 'adaptive',
        now: () => t,
        observer: metrics,
        bound: () => bound.counts(),
      });
      // Start-up warms one ENI's worth; an hour later, with no pod, the pool has shrunk back to its minimum.
      await pool.tick();
      t += 3_600_000;
      for (let i = 0; i < 20 && (await pool.tick()).kind !== 'none'; i++) t += 60_000;
      const before = n.datastore.stats().totalIPs;
      t += 60_000;
      bound.upsert({
        metadata: {
          name: 'p-0',
          namespace: 'batch',
          uid: 'uid-p-0',
          ownerReferences: [{ ...controller, name: 'c', uid: 'uid-c', controller: true }],
        },
        spec: { nodeName: 'ip-10-0-0-7', containers: [{ name: 'app' }] },
        status: { phase: 'Pending' },
      });
      const d = await pool.tick();
      return {
        before,
        grew: n.datastore.stats().totalIPs - before,
        decision: d,
        seen: pool.lastAdaptive(),
        text: await metrics.registry.metrics(),
      };
    }
    const job = await grownFor({ apiVersion: 'batch/v1', kind: 'Job' });
    const replicaSet = await grownFor({ apiVersion: 'apps/v1', kind: 'ReplicaSet' });
    // The same pool before the pod: back to the minimum.
    expect(job.before).toBe(replicaSet.before);
    // The Job's pod: one call growing for the rest of a fan-out (up to what one ENI holds), before any ADD.
    expect(job.decision).toMatchObject({ kind: 'assign', unit: 'ip' });
    expect(job.grew).toBeGreaterThanOrEqual(20);
    // The ReplicaSet's lone pod takes a warm address; the pool grows after it, as without the watch.
    expect(replicaSet.decision.kind).toBe('none');
    expect(replicaSet.grew).toBe(0);
    expect(job.seen).toMatchObject({ bound: 1, boundJobPods: 1 });
    expect(replicaSet.seen).toMatchObject({ bound: 1, boundJobPods: 0 });
    expect(job.text).toContain('awscni_warm_pool_adaptive_bound_job_pods 1');
    expect(replicaSet.text).toContain('awscni_warm_pool_adaptive_bound_job_pods 0');
    expect(replicaSet.text).toContain('awscni_warm_pool_adaptive_bound_pods 1');
  });

  it('the static policy stays the reference: the same node with WARM_ENI_TARGET=1 fills its ENI', async () => {
    const n = node(3);
    const pool = loopFor(n);
    const d = await pool.tick();
    // 29 free wanted; the ENI's 26 free slots are filled in one call.
    expect(d).toMatchObject({ kind: 'assign', count: 26, reason: { code: 'below-warm-eni-target' } });
    expect(n.calls).toEqual([26]);
  });

  it('runs with prefix delegation and no static warm target: grows in /28 prefixes for a burst', async () => {
    const clock = new ManualClock();
    const datastore = new Datastore({
      clock,
      checkpointer: nullCheckpointer,
      cooldownMs: 0,
      prefixDelegation: true,
    });
    datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
    datastore.addCidr('eni-0', '10.0.16.0/28');
    const requests: unknown[] = [];
    let next = 32;
    const eni = {
      async assignIpv4(_eniId: string, request: { prefixCount?: number }) {
        requests.push(request);
        const prefixes: string[] = [];
        for (let i = 0; i < (request.prefixCount ?? 0); i++, next += 16) prefixes.push(`10.0.16.${next}/28`);
        return { ipv4Addresses: [], ipv4Prefixes: prefixes };
      },
    } as unknown as EniManager;
    const config = loadConfig({ ENABLE_PREFIX_DELEGATION: 'true', WARM_POOL_POLICY: 'adaptive' });
    let t = 1_000_000;
    const metrics = new DaemonMetrics();
    const pool = testPool(datastore, eni, 0, {
      policy: config.warmPoolPolicy,
      targets: poolTargets(config),
      limits: { maxEnis: 1, ipv4PerEni: 10, maxPods: 110 },
      // maxWarm 16: one prefix's worth (the start-up prior), so the test reads in prefixes.
      adaptiveSettings: { maxWarm: 16 },
      now: () => t,
      observer: metrics,
    });
    const backendObserver = pool.observing(metrics);
    t += 600_000;
    // 14 pods land on the node's one prefix at once: 2 addresses left, and a surge under way.
    for (let i = 0; i < 14; i++) {
      datastore.assign({ networkName: 'aws-cni', containerID: `burst-${i}`, ifName: 'eth0' });
      backendObserver.addNetwork(1, 'success');
    }
    const d = await pool.tick();
    expect(d).toMatchObject({ kind: 'assign', unit: 'prefix' });
    expect(requests).toEqual([{ prefixCount: d.kind === 'assign' ? d.count : -1 }]);
    expect(datastore.stats().totalIPs).toBeGreaterThanOrEqual(32);
  });
});
