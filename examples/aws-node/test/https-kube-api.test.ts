import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { type KubeSimulator, selfSignedCertificate, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { fifoWithLateWriter, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsKubeApi, httpsPodWatchApi } from '../src/kube/https-kube-api.js';
import type { InClusterTarget } from '../src/kube/in-cluster.js';
import { type KubeApi, KubeCallError } from '../src/kube/kube-api.js';

// The transport's own behaviour against kube-simulator (TLS, token, deadline, Status mapping); what the daemon
// does with the calls is in kube.test.ts.

const dir = scratchDir('vck-aws-node-https-kube-');
let sim: KubeSimulator;
let target: InClusterTarget;
let api: KubeApi;
const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles' };

async function failure(p: Promise<unknown>): Promise<KubeCallError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(KubeCallError);
  return e as KubeCallError;
}

beforeAll(async () => {
  sim = await startKubeSimulator();
  writeFileSync(join(dir.path, 'token'), `${sim.adminToken}\n`);
  target = { server: sim.url, tokenFile: join(dir.path, 'token'), caPem: sim.caPem! };
  api = httpsKubeApi(target, 2000);
  sim.objects.create('v1', 'nodes', { metadata: { name: 'n1' } });
  sim.objects.create('v1', 'pods', {
    metadata: { name: 'p1', namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
  });
});
afterAll(async () => {
  await sim?.close();
  dir.remove();
});

describe('httpsKubeApi', () => {
  it("verifies the server against the cluster CA: the simulator's CA is trusted, another CA is not", async () => {
    expect((await api.getNode('n1')).metadata?.name).toBe('n1');
    const other = await selfSignedCertificate();
    const e = await failure(httpsKubeApi({ ...target, caPem: other.cert }, 2000).getNode('n1'));
    expect(e).toMatchObject({ code: 'Unreachable', status: 0 });
    expect(e.message).toMatch(/^GET \/api\/v1\/nodes\/n1: https:\/\/127\.0\.0\.1:\d+: [A-Z_]+$/);
  });

  it('sends the token file as it is now: a bad token is 401 Unauthorized, the rotated good one works', async () => {
    const tokenFile = join(dir.path, 'rotating');
    writeFileSync(tokenFile, 'not-a-token');
    const rotating = httpsKubeApi({ ...target, tokenFile }, 2000);
    expect(await failure(rotating.getNode('n1'))).toMatchObject({ code: 'Unauthorized', status: 401 });
    writeFileSync(tokenFile, sim.adminToken);
    expect((await rotating.getNode('n1')).metadata?.name).toBe('n1');
    const missing = await failure(
      httpsKubeApi({ ...target, tokenFile: join(dir.path, 'nope') }, 2000).getNode('n1'),
    );
    expect(missing).toMatchObject({ code: 'Unauthorized', status: 0 });
    expect(missing.message).toContain('ENOENT');
  });

  it('refuses a token file that is not a regular file at once: a FIFO is named, never waited on', async () => {
    const fifo = fifoWithLateWriter(join(dir.path, 'token.fifo'));
    try {
      const started = performance.now();
      const e = await failure(httpsKubeApi({ ...target, tokenFile: fifo.path }, 10_000).getNode('n1'));
      expect(e).toMatchObject({ code: 'Unauthorized', status: 0 });
      expect(e.message).toBe(
        `GET /api/v1/nodes/n1: token file ${fifo.path} unreadable: a FIFO, not a regular file`,
      );
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      fifo.stop();
    }
  });

  it('maps a 409 Status to Conflict (stale resourceVersion) or AlreadyExists (create twice)', async () => {
    const role = { metadata: { name: 'r1' }, rules: [] };
    const created = await api.createClusterObject(CLUSTER_ROLES, role);
    expect(await failure(api.createClusterObject(CLUSTER_ROLES, role))).toMatchObject({
      code: 'AlreadyExists',
      status: 409,
    });
    const rv = created.metadata!.resourceVersion!;
    await api.mergePatchClusterObject(CLUSTER_ROLES, 'r1', { metadata: { labels: { a: '1' } } });
    const stale = await failure(
      api.mergePatchClusterObject(CLUSTER_ROLES, 'r1', {
        metadata: { resourceVersion: rv, labels: { a: '2' } },
      }),
    );
    expect(stale).toMatchObject({ code: 'Conflict', status: 409 });
    expect(stale.message).toContain('the object has been modified');
    expect(sim.objects.get('rbac.authorization.k8s.io/v1', 'clusterroles', 'r1')!.metadata!.labels).toEqual({
      a: '1',
    });
  });

  it('sends each patch with its media type (merge patch vs RFC 6902, whose failed test is 422 Invalid)', async () => {
    const merged = await api.mergePatchPod('default', 'p1', { metadata: { annotations: { k: 'v' } } });
    expect(merged.metadata?.annotations).toEqual({ k: 'v' });
    const patched = await api.jsonPatchPod('default', 'p1', [
      { op: 'test', path: '/metadata/annotations/k', value: 'v' },
      { op: 'replace', path: '/metadata/annotations/k', value: 'w' },
    ]);
    expect(patched.metadata?.annotations).toEqual({ k: 'w' });
    expect(
      await failure(
        api.jsonPatchPod('default', 'p1', [{ op: 'test', path: '/metadata/annotations/k', value: 'v' }]),
      ),
    ).toMatchObject({ code: 'Invalid', status: 422 });
    expect((await api.getPod('default', 'p1')).metadata?.annotations).toEqual({ k: 'w' });
  });

  it('refuses a name that is not one path segment, without sending anything', async () => {
    const before = sim.requests.length;
    for (const bad of ['', '..', 'a/b'])
      expect(await failure(api.getPod('default', bad))).toMatchObject({ code: 'Invalid', status: 0 });
    expect(sim.requests.length).toBe(before);
  });

  it('is Unreachable within the deadline when the server accepts but never answers, and at once when refused', async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const t0 = performance.now();
      const e = await failure(
        httpsKubeApi({ ...target, server: `https://127.0.0.1:${port}` }, 300).getNode('n1'),
      );
      const took = performance.now() - t0;
      expect(e).toMatchObject({ code: 'Unreachable', status: 0 });
      expect(e.message).toBe(`GET /api/v1/nodes/n1: no answer from https://127.0.0.1:${port} within 300 ms`);
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1500);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => silent.close(r));
    }
    const refused = await failure(
      httpsKubeApi({ ...target, server: `https://127.0.0.1:${port}` }, 2000).getNode('n1'),
    );
    expect(refused).toMatchObject({ code: 'Unreachable', status: 0 });
    expect(refused.message).toContain('ECONNREFUSED');
  });

  it('a watch that cannot be opened fails in the same words as a call: no answer within the deadline, refused', async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const server = `https://127.0.0.1:${port}`;
    /** Opens a watch and a call to `server` with `timeoutMs`: their errors, each without its `<method> <path>: `. */
    const both = async (timeoutMs: number) => {
      const watch = httpsPodWatchApi({ ...target, server }, timeoutMs);
      const opening = await failure(
        watch.watchNodePods('n1', {
          resourceVersion: '1',
          timeoutSeconds: 60,
          onLine: () => undefined,
          signal: new AbortController().signal,
        }),
      );
      watch.close();
      const call = await failure(httpsKubeApi({ ...target, server }, timeoutMs).getNode('n1'));
      for (const e of [opening, call]) expect(e).toMatchObject({ code: 'Unreachable', status: 0 });
      expect(opening.message).toMatch(
        /^GET \/api\/v1\/pods\?fieldSelector=spec\.nodeName%3Dn1&watch=true&\S+: /,
      );
      const words = (e: KubeCallError) => e.message.replace(/^GET \S+: /, '');
      return { watch: words(opening), call: words(call) };
    };
    try {
      const deadline = await both(300);
      expect(deadline.watch).toBe(`no answer from ${server} within 300 ms`);
      expect(deadline.call).toBe(deadline.watch);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => silent.close(r));
    }
    const refused = await both(2000);
    expect(refused.watch).toBe(`${server}: ECONNREFUSED`);
    expect(refused.call).toBe(refused.watch);
  });
});
