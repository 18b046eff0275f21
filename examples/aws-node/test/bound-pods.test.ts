import { POD_ENI_ANNOTATION, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { describe, expect, it } from 'vitest';
import { type BoundCounts, BoundPods, noteAdds, podVerdict } from '../src/daemon/bound-pods.js';
import { silentLogger } from '../src/log/logger.js';
import type { CniBackend } from '../src/rpc/grpc-server.js';
import type { AddNetworkRequest } from '../src/rpc/messages.js';

const NODE = 'ip-10-0-0-7';

function pod(
  name: string,
  o: {
    node?: string;
    phase?: string;
    hostNetwork?: boolean;
    deleting?: boolean;
    limits?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    owners?: unknown;
  } = {},
): Record<string, unknown> {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: o.uid ?? `uid-${name}`,
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.owners !== undefined ? { ownerReferences: o.owners } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-11-24T12:00:00Z' } : {}),
    },
    spec: {
      nodeName: o.node ?? NODE,
      ...(o.hostNetwork !== undefined ? { hostNetwork: o.hostNetwork } : {}),
      containers: [{ name: 'app', ...(o.limits ? { resources: { limits: o.limits } } : {}) }],
    },
    status: { phase: o.phase ?? 'Pending' },
  };
}

/** An owner reference as the API server stores it. */
function owner(kind: string, apiVersion: string, controller?: boolean): Record<string, unknown> {
  return {
    apiVersion,
    kind,
    name: `${kind.toLowerCase()}-1`,
    uid: `uid-${kind}`,
    ...(controller !== undefined ? { controller, blockOwnerDeletion: true } : {}),
  };
}
const JOB = owner('Job', 'batch/v1', true);
const REPLICA_SET = owner('ReplicaSet', 'apps/v1', true);

describe('podVerdict', () => {
  it('counts a Pending pod of this node that will take a pool address, and says why not for the others', () => {
    expect(podVerdict(pod('a'), NODE)).toEqual({
      ok: true,
      key: 'default/a',
      uid: 'uid-a',
      job: false,
      awaits: true,
    });
    const why = (p: unknown) => {
      const v = podVerdict(p, NODE);
      return v.ok ? (v.why ?? 'awaits') : 'unreadable';
    };
    expect(why(pod('b', { node: 'other' }))).toBe('other-node');
    expect(why(pod('c', { hostNetwork: true }))).toBe('host-network');
    expect(why(pod('d', { hostNetwork: false }))).toBe('awaits');
    expect(why(pod('e', { deleting: true }))).toBe('terminating');
    expect(why(pod('f', { phase: 'Running' }))).toBe('not-pending');
    expect(why(pod('g', { phase: 'Succeeded' }))).toBe('not-pending');
    expect(why(pod('h', { limits: { [POD_ENI_RESOURCE]: '1' } }))).toBe('branch-eni');
    // The annotation alone does not make a branch pod (ADR 0039): the daemon gives it a pool address.
    expect(why(pod('i', { annotations: { [POD_ENI_ANNOTATION]: '[]' } }))).toBe('awaits');
    expect(why(pod('j', { limits: { cpu: '1' } }))).toBe('awaits');
    // No status yet: the API has not given it a phase, it is Pending.
    const { status: _, ...fresh } = pod('k');
    expect(why(fresh)).toBe('awaits');
  });

  it('does not count an object it cannot read (fail closed), whatever is wrong with it', () => {
    const good = pod('x');
    const spec = good.spec as Record<string, unknown>;
    const meta = good.metadata as Record<string, unknown>;
    const broken: unknown[] = [
      null,
      'pod',
      [good],
      { ...good, metadata: undefined },
      { ...good, metadata: { ...meta, name: 7 } },
      { ...good, metadata: { ...meta, namespace: '' } },
      { ...good, metadata: { ...meta, uid: 1 } },
      { ...good, metadata: { ...meta, annotations: 'a=b' } },
      { ...good, metadata: { ...meta, deletionTimestamp: 5 } },
      { ...good, spec: undefined },
      { ...good, spec: { ...spec, nodeName: undefined } },
      { ...good, spec: { ...spec, hostNetwork: 'true' } },
      { ...good, spec: { ...spec, containers: {} } },
      { ...good, spec: { ...spec, containers: ['app'] } },
      { ...good, spec: { ...spec, containers: [{ resources: 'lots' }] } },
      { ...good, status: 'Pending' },
      { ...good, status: { phase: 1 } },
      { ...good, metadata: { ...meta, ownerReferences: JOB } },
      { ...good, metadata: { ...meta, ownerReferences: 'batch/v1 Job' } },
      { ...good, metadata: { ...meta, ownerReferences: [JOB, 'ReplicaSet'] } },
      { ...good, metadata: { ...meta, ownerReferences: [{ ...JOB, controller: 'true' }] } },
      { ...good, metadata: { ...meta, ownerReferences: [{ ...JOB, kind: 5 }] } },
      { ...good, metadata: { ...meta, ownerReferences: [{ ...JOB, apiVersion: undefined }] } },
      // Not the controller, yet malformed all the same.
      { ...good, metadata: { ...meta, ownerReferences: [REPLICA_SET, { kind: 'Job' }] } },
      // Two controllers: the API server refuses such a pod; one that shows it is not trusted.
      { ...good, metadata: { ...meta, ownerReferences: [JOB, REPLICA_SET] } },
    ];
    for (const b of broken) expect(podVerdict(b, NODE), JSON.stringify(b)).toMatchObject({ ok: false });
  });
});

describe('podVerdict: is the controller a Job?', () => {
  const job = (owners: unknown) => {
    const v = podVerdict(pod('p', { owners }), NODE);
    return v.ok ? v.job : 'unreadable';
  };

  it('says so for a pod whose controller owner reference is a batch/v1 Job, and only then', () => {
    expect(job([JOB])).toBe(true);
    // A CronJob's pods: their controller is the Job the CronJob made.
    expect(job([owner('Job', 'batch/v1', true), owner('Foo', 'example.com/v1', false)])).toBe(true);
    expect(job([REPLICA_SET])).toBe(false);
    expect(job([owner('StatefulSet', 'apps/v1', true)])).toBe(false);
    expect(job([owner('DaemonSet', 'apps/v1', true)])).toBe(false);
    // A Job owner that is not the controller (controller false or absent): not the Job's fan-out.
    expect(job([owner('Job', 'batch/v1', false)])).toBe(false);
    expect(job([owner('Job', 'batch/v1')])).toBe(false);
    expect(job([owner('Job', 'batch/v1', false), REPLICA_SET])).toBe(false);
    // Another group's Job kind is not batch/v1's.
    expect(job([owner('Job', 'example.com/v1', true)])).toBe(false);
    expect(job([owner('CronJob', 'batch/v1', true)])).toBe(false);
    // No owner: a bare pod.
    expect(job(undefined)).toBe(false);
    expect(job(null)).toBe(false);
    expect(job([])).toBe(false);
  });

  it('makes the object unreadable when the owner references cannot be read (not counted)', () => {
    for (const owners of [
      {},
      'Job',
      [null],
      [[JOB]],
      [{ ...JOB, controller: 1 }],
      [{ ...JOB, kind: null }],
      [{ ...JOB, apiVersion: ['batch/v1'] }],
      [JOB, owner('Job', 'batch/v1', true)],
    ])
      expect(job(owners), JSON.stringify(owners)).toBe('unreadable');
  });

  it('reads the controller of a pod it does not count too (the verdict is the same object either way)', () => {
    expect(podVerdict(pod('r', { phase: 'Running', owners: [JOB] }), NODE)).toMatchObject({
      ok: true,
      awaits: false,
      job: true,
    });
  });
});

describe('BoundPods', () => {
  function counter(holding: Set<string> = new Set()) {
    const logged: string[] = [];
    const told: BoundCounts[] = [];
    const b = new BoundPods({
      nodeName: NODE,
      holding: () => holding,
      onChange: (c) => told.push(c),
      log: { ...silentLogger, debug: (m, f) => logged.push(`${m} ${JSON.stringify(f)}`) },
    });
    return { b, logged, told, changes: () => told.length };
  }

  it("counts the Job's pods among those counted, with the same exclusions, and tells when either count moves", () => {
    const holding = new Set<string>();
    const { b, told } = counter(holding);
    b.reset([
      pod('job-0', { owners: [JOB] }),
      pod('job-1', { owners: [JOB] }),
      pod('web-0', { owners: [REPLICA_SET] }),
      pod('bare'),
      pod('job-done', { owners: [JOB], phase: 'Succeeded' }),
      pod('job-far', { owners: [JOB], node: 'other' }),
    ]);
    expect(b.counts()).toEqual({ pods: 4, jobPods: 2 });
    expect(b.count()).toBe(4);
    expect(told).toEqual([{ pods: 4, jobPods: 2 }]);
    // One holds an address, one has asked: neither is bound any more, Job's or not.
    holding.add('default/job-0');
    b.asked('default', 'web-0');
    expect(b.counts()).toEqual({ pods: 2, jobPods: 1 });
    // A Job adopts the bare pod (its owner references patched): the same pods, one more of a Job's.
    b.upsert(pod('bare', { owners: [JOB] }));
    expect(b.counts()).toEqual({ pods: 2, jobPods: 2 });
    expect(told.at(-1)).toEqual({ pods: 2, jobPods: 2 });
    // An update whose owner references cannot be read is ignored (logged), as for any field of the wrong type:
    // what the watch knew of the pod stands.
    b.upsert(pod('job-1', { owners: [{ ...JOB, controller: 'yes' }] }));
    expect(b.counts()).toEqual({ pods: 2, jobPods: 2 });
    b.remove(pod('job-1'));
    expect(b.counts()).toEqual({ pods: 1, jobPods: 1 });
    b.lost();
    expect(b.counts()).toEqual({ pods: 0, jobPods: 0 });
    expect(told.at(-1)).toEqual({ pods: 0, jobPods: 0 });
  });

  it('follows the list and the events, and wakes only when the count moves', () => {
    const { b, changes } = counter();
    b.reset([pod('a'), pod('b', { phase: 'Running' }), pod('c', { node: 'other' })]);
    expect(b.count()).toBe(1);
    expect(changes()).toBe(1);
    b.upsert(pod('d'));
    expect(b.count()).toBe(2);
    // The same pod again (a status patch that changes nothing here): no wake.
    b.upsert(pod('d'));
    expect(changes()).toBe(2);
    // Started: no longer awaiting.
    b.upsert(pod('a', { phase: 'Running' }));
    expect(b.pods()).toEqual(['default/d']);
    b.remove(pod('d'));
    expect(b.count()).toBe(0);
    expect(changes()).toBe(4);
  });

  it('leaves out pods already holding an address in the datastore (by namespace/name)', () => {
    const holding = new Set(['default/a']);
    const { b } = counter(holding);
    b.reset([pod('a'), pod('b')]);
    expect(b.pods()).toEqual(['default/b']);
    holding.add('default/b');
    expect(b.count()).toBe(0);
  });

  it("an ADD takes its pod out at once (it is the pool's waiting now), until a new pod takes the name", async () => {
    const { b, changes } = counter();
    b.reset([pod('a'), pod('b')]);
    const asked: string[] = [];
    const backend = noteAdds(b, {
      addNetwork: async (req: AddNetworkRequest) => {
        asked.push(`${req.K8S_POD_NAMESPACE}/${req.K8S_POD_NAME} counted=${b.count()}`);
        return { Success: true };
      },
      delNetwork: async () => ({ Success: true }),
    } as CniBackend);
    await backend.addNetwork({ K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: 'a' } as AddNetworkRequest);
    expect(asked).toEqual(['default/a counted=1']);
    expect(b.pods()).toEqual(['default/b']);
    // The ADD itself is what the pool reacts to: no wake for it.
    expect(changes()).toBe(1);
    // Still Pending after its ADD (the kubelet has not reported Running yet): not counted again.
    b.upsert(pod('a'));
    expect(b.count()).toBe(1);
    // Deleted and recreated under the same name (a StatefulSet): the new pod has not asked.
    b.remove(pod('a'));
    b.upsert(pod('a', { uid: 'uid-a2' }));
    expect(b.count()).toBe(2);
    // A relist with a new uid for b after its ADD: the new b awaits.
    await backend.addNetwork({ K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: 'b' } as AddNetworkRequest);
    expect(b.count()).toBe(1);
    b.reset([pod('a', { uid: 'uid-a2' }), pod('b', { uid: 'uid-b2' })]);
    expect(b.count()).toBe(2);
    expect(noteAdds(undefined, backend)).toBe(backend);
  });

  it('counts nothing once the API is lost, and ignores unreadable objects with a debug line', () => {
    const { b, logged } = counter();
    b.reset([pod('a'), { metadata: { name: 'x' } }]);
    expect(b.count()).toBe(1);
    b.upsert({ spec: {} });
    b.remove('garbage');
    expect(b.count()).toBe(1);
    expect(logged).toHaveLength(3);
    expect(logged[0]).toMatch(/^pod object from the API ignored/);
    b.lost();
    expect(b.count()).toBe(0);
  });
});
