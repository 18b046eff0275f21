/**
 * The watch of the pods bound to this node against kube-simulator over TLS, with the ServiceAccount token and
 * the RBAC of manifests/rbac.yaml: LIST then WATCH, resume after a dropped stream, relist after 410, the API
 * away and back (one log line each way), RBAC refusing, malformed lines, and stop() closing every connection.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type KubeSimulator,
  type KubeObject as SimObject,
  selfSignedCertificate,
  startKubeSimulator,
} from '@vpc-cni-kit/kube-simulator';
import { eventually, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BoundPods } from '../src/daemon/bound-pods.js';
import { abortableSleep as sleep } from '../src/kube/daemon-kube.js';
import { httpsPodWatchApi } from '../src/kube/https-kube-api.js';
import type { InClusterTarget } from '../src/kube/in-cluster.js';
import { PodWatch, type PodWatchSink } from '../src/kube/pod-watch.js';
import type { Logger } from '../src/log/logger.js';
import { recordingLogger } from './support/logger.js';

const NODE = 'ip-10-0-0-7.us-west-2.compute.internal';
const dir = scratchDir('vck-aws-node-pod-watch-');
let sim: KubeSimulator;
let target: InClusterTarget;

function createPod(name: string, node = NODE, extra: Record<string, unknown> = {}): void {
  sim.objects.create('v1', 'pods', {
    metadata: { name, namespace: 'default' },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'pause' }], ...extra },
  });
}

function deletePod(name: string): void {
  sim.objects.delete('v1', 'pods', name, 'default');
}

/** A sink that keeps what the watch says: the pod names it holds, resets and losses. */
function recordingSink(): PodWatchSink & { names: Set<string>; resets: number; losses: number } {
  const nameOf = (o: unknown) => String((o as { metadata?: { name?: unknown } }).metadata?.name);
  const s = {
    names: new Set<string>(),
    resets: 0,
    losses: 0,
    reset(items: readonly unknown[]) {
      s.resets += 1;
      s.names = new Set(items.map(nameOf));
    },
    upsert(o: unknown) {
      s.names.add(nameOf(o));
    },
    remove(o: unknown) {
      s.names.delete(nameOf(o));
    },
    lost() {
      s.losses += 1;
      s.names.clear();
    },
  };
  return s;
}

const watches: PodWatch[] = [];
function startWatch(
  sink: PodWatchSink,
  log: Logger,
  over: {
    target?: InClusterTarget;
    timeoutSeconds?: number;
    backoff?: { baseMs: number; maxMs: number };
    /** Receives every backoff delay the watch waits. */
    slept?: number[];
  } = {},
): PodWatch {
  const w = new PodWatch({
    nodeName: NODE,
    target: over.target ?? target,
    connect: (t) => httpsPodWatchApi(t, 2000),
    sink,
    log,
    random: () => 0.5,
    sleep: (ms, signal) => {
      over.slept?.push(ms);
      return sleep(ms, signal);
    },
    now: () => performance.now(),
    watchTimeoutSeconds: () => over.timeoutSeconds ?? 60,
    backoff: { ...(over.backoff ?? { baseMs: 20, maxMs: 100 }), factor: 2, jitter: 0 },
  });
  watches.push(w);
  w.start();
  return w;
}

beforeAll(async () => {
  // Bookmarks only when a test wants them (they move the resourceVersion on).
  sim = await startKubeSimulator({ bookmarkIntervalMs: 3_600_000 });
  const plural: Record<string, string> = {
    ServiceAccount: 'serviceaccounts',
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
  };
  const rbac = parseAllDocuments(
    readFileSync(join(import.meta.dirname, '..', 'manifests', 'rbac.yaml'), 'utf8'),
  );
  for (const d of rbac) {
    const o = d.toJS() as SimObject;
    sim.objects.create(String(o.apiVersion), plural[String(o.kind)]!, o);
  }
  writeFileSync(join(dir.path, 'token'), sim.mintServiceAccountToken('kube-system', 'aws-node'));
  target = { server: sim.url, tokenFile: join(dir.path, 'token'), caPem: sim.caPem! };
});
afterEach(async () => {
  sim.faults.setUnavailable(false);
  for (const w of watches.splice(0)) await w.stop();
  for (const p of sim.objects.list('v1', 'pods', 'default')) deletePod(String(p.metadata?.name));
});
afterAll(async () => {
  await sim?.close();
  dir.remove();
});

describe('PodWatch against kube-simulator, with the RBAC of manifests/rbac.yaml', () => {
  it("lists this node's pods, then sees them come and go through the watch; other nodes' pods never", async () => {
    createPod('before');
    createPod('elsewhere', 'ip-10-0-0-8.us-west-2.compute.internal');
    const sink = recordingSink();
    const log = recordingLogger();
    const w = startWatch(sink, log);
    await eventually('the watch', () => w.status().state === 'watching');
    expect([...sink.names]).toEqual(['before']);
    createPod('after');
    createPod('elsewhere-2', 'ip-10-0-0-8.us-west-2.compute.internal');
    await eventually('the new pod', () => sink.names.has('after'));
    deletePod('before');
    await eventually('the deleted pod gone', () => !sink.names.has('before'));
    expect([...sink.names]).toEqual(['after']);
    expect(w.status()).toMatchObject({ lists: 1, watches: 1, malformed: 0 });
    const request = sim.requests.find((r) => r.url.includes('watch=true'))!;
    expect(request.url).toContain(`fieldSelector=spec.nodeName%3D${NODE}`);
    expect(request.url).toContain('allowWatchBookmarks=true');
    expect(request.url).toMatch(/timeoutSeconds=60/);
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('resumes from the last resourceVersion when the server drops the stream (no relist), and misses nothing', async () => {
    const sink = recordingSink();
    const w = startWatch(sink, recordingLogger());
    await eventually('the watch', () => w.status().state === 'watching' && sim.openWatches > 0);
    createPod('a');
    await eventually('pod a', () => sink.names.has('a'));
    expect(sim.faults.dropWatches()).toBeGreaterThan(0);
    // Made while no stream is open: the resumed watch replays it from the resourceVersion.
    createPod('b');
    await eventually('pod b', () => sink.names.has('b'));
    await eventually('a second stream', () => w.status().watches >= 2);
    expect(w.status().lists).toBe(1);
    expect(sink.resets).toBe(1);
  });

  it('relists when the resourceVersion is too old (410 Gone as an ERROR event)', async () => {
    const sink = recordingSink();
    const w = startWatch(sink, recordingLogger());
    await eventually('the watch', () => w.status().state === 'watching' && sim.openWatches > 0);
    createPod('old');
    await eventually('pod old', () => sink.names.has('old'));
    // The store moves on (another resource), forgets its history, and the stream ends: resuming from the
    // pods' resourceVersion is answered 410.
    sim.objects.create('v1', 'configmaps', { metadata: { name: 'tick', namespace: 'default' } });
    sim.faults.expireHistory();
    sim.faults.dropWatches();
    await eventually('the relist', () => w.status().lists === 2);
    createPod('new');
    await eventually('pod new', () => sink.names.has('new'));
    expect([...sink.names].sort()).toEqual(['new', 'old']);
    expect(sink.resets).toBe(2);
    expect(sink.losses).toBe(0);
    sim.objects.delete('v1', 'configmaps', 'tick', 'default');
  });

  it('an API that stops answering: the sink hears it lost, one warning for many retries, one line when back', async () => {
    createPod('p');
    const sink = recordingSink();
    const log = recordingLogger();
    const w = startWatch(sink, log);
    await eventually('the watch', () => w.status().state === 'watching' && sink.names.has('p'));
    sim.faults.setUnavailable(true);
    sim.faults.dropWatches();
    await eventually('unreachable', () => w.status().state === 'unreachable');
    expect(sink.names.size).toBe(0);
    // Several retries at the test's backoff (20–100 ms).
    const requests = sim.requests.length;
    await eventually('retries', () => sim.requests.length >= requests + 4, 5000);
    expect(log.lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    expect(log.lines.find((l) => l.startsWith('warn'))).toMatch(/Kubernetes API unreachable: pods bound/);
    sim.faults.setUnavailable(false);
    await eventually('watching again', () => w.status().state === 'watching' && sink.names.has('p'));
    expect(log.lines.filter((l) => l.includes('watched again'))).toHaveLength(1);
  });

  it('RBAC refusing list/watch on pods: one warning naming the fix, nothing counted, retried', async () => {
    sim.objects.create('v1', 'serviceaccounts', { metadata: { name: 'nobody', namespace: 'kube-system' } });
    const tokenFile = join(dir.path, 'nobody');
    writeFileSync(tokenFile, sim.mintServiceAccountToken('kube-system', 'nobody'));
    const sink = recordingSink();
    const log = recordingLogger();
    const w = startWatch(sink, log, { target: { ...target, tokenFile } });
    await eventually('forbidden', () => w.status().state === 'forbidden');
    const lists = sim.requests.filter((r) => r.status === 403).length;
    await eventually('a retry', () => sim.requests.filter((r) => r.status === 403).length > lists + 2, 5000);
    const warnings = log.lines.filter((l) => l.startsWith('warn'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('grant list and watch on pods');
    expect(sink.losses).toBeGreaterThan(0);
  });

  it('stop() ends the stream and closes every connection it opened', async () => {
    // The watches of the tests before were stopped (afterEach): nothing of theirs is left open either.
    await eventually(
      'no connection left',
      () => sim.openWatches === 0 && sim.openConnections === 0,
      5000,
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}: ${sim.openWatches} watches, ${sim.openConnections} connections`);
    });
    const w = startWatch(recordingSink(), recordingLogger());
    await eventually('the watch', () => w.status().state === 'watching' && sim.openWatches === 1);
    expect(sim.openConnections).toBeGreaterThan(0);
    await w.stop();
    await eventually(
      'no open watch or connection',
      () => sim.openWatches === 0 && sim.openConnections === 0,
      5000,
    );
    expect(w.status().state).toBe('off');
  });

  it('the server ending each quiet watch at its timeoutSeconds is resumed at once (no backoff), not relisted', async () => {
    const sink = recordingSink();
    const slept: number[] = [];
    // A backoff long enough to see: a stream ended at its timeout must not wait 2 s before the next.
    const w = startWatch(sink, recordingLogger(), {
      timeoutSeconds: 1,
      backoff: { baseMs: 2000, maxMs: 5000 },
      slept,
    });
    // No pods change and no bookmark comes (one an hour here): each stream ends empty, by the server's timeout.
    await eventually('three streams', () => w.status().watches >= 3, 8000);
    expect(slept).toEqual([]);
    createPod('late');
    await eventually('pod late', () => sink.names.has('late'), 5000);
    expect(w.status().lists).toBe(1);
    expect(slept).toEqual([]);
  }, 15_000);
});

describe('PodWatch against a server that sends what no API server should', () => {
  let server: Server;
  let served: string[] = [];
  beforeAll(async () => {
    const tls = await selfSignedCertificate();
    server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      if (!req.url?.includes('watch=true')) {
        res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '5' }, items: [] }));
        return;
      }
      res.write(served.join('\n'));
      res.write('\n');
      setTimeout(() => res.end(), 50);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    writeFileSync(join(dir.path, 'fake-token'), 'x');
    fakeTarget = {
      server: `https://127.0.0.1:${port}`,
      tokenFile: join(dir.path, 'fake-token'),
      caPem: tls.cert,
    };
  });
  let fakeTarget: InClusterTarget;
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('ignores lines that are not watch events and pods it cannot read, counts the good one, never throws', async () => {
    const pod = (name: string, spec: unknown, rv: string) => ({
      metadata: { name, namespace: 'default', uid: `u-${name}`, resourceVersion: rv },
      spec,
      status: { phase: 'Pending' },
    });
    served = [
      'not json at all',
      '[1,2,3]',
      JSON.stringify({ type: 'ADDED' }),
      JSON.stringify({ type: 'WHATEVER', object: {} }),
      JSON.stringify({ type: 'ADDED', object: { metadata: 'nope' } }),
      JSON.stringify({
        type: 'ADDED',
        object: pod('bad-host', { nodeName: NODE, hostNetwork: 'yes', containers: [] }, '6'),
      }),
      JSON.stringify({
        type: 'ADDED',
        object: pod('bad-containers', { nodeName: NODE, containers: 'x' }, '7'),
      }),
      JSON.stringify({
        type: 'ADDED',
        object: pod('good', { nodeName: NODE, containers: [{ name: 'c' }] }, '8'),
      }),
    ];
    const log = recordingLogger();
    let changes = 0;
    const bound = new BoundPods({ nodeName: NODE, holding: () => new Set(), onChange: () => changes++, log });
    const w = startWatch(bound, log, { target: fakeTarget });
    await eventually('the good pod', () => bound.count() === 1);
    expect(bound.pods()).toEqual(['default/good']);
    await eventually('a resumed stream', () => w.status().watches >= 2);
    expect(w.status().resourceVersion).toBe('8');
    expect(w.status().malformed).toBeGreaterThanOrEqual(4);
    expect(log.lines.some((l) => l.startsWith('debug pod object from the API ignored'))).toBe(true);
    expect(log.lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
    expect(changes).toBe(1);
  });

  it('a server ending every watch at once with nothing on it is re-asked with backoff, not in a tight loop', async () => {
    served = [];
    const slept: number[] = [];
    const w = startWatch(recordingSink(), recordingLogger(), { target: fakeTarget, slept });
    await eventually('five streams', () => w.status().watches >= 5, 5000);
    // Each stream ended 50 ms after it opened, long before its 60 s: 20, 40, 80, then the 100 ms cap.
    expect(slept.slice(0, 4)).toEqual([20, 40, 80, 100]);
    expect(w.status().lists).toBe(1);
  });

  it('a server answering every watch with an ERROR is relisted with backoff, not in a tight loop', async () => {
    served = [
      JSON.stringify({
        type: 'ERROR',
        object: { kind: 'Status', status: 'Failure', code: 500, reason: 'InternalError', message: 'boom' },
      }),
    ];
    const log = recordingLogger();
    const w = startWatch(recordingSink(), log, { target: fakeTarget });
    await new Promise((r) => setTimeout(r, 1000));
    // Backoff 20 → 100 ms: about a dozen rounds in a second (a tight loop would be hundreds).
    expect(w.status().lists).toBeGreaterThanOrEqual(3);
    expect(w.status().lists).toBeLessThan(20);
    expect(log.lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
  });
});
