import {
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  makeInformer,
  type V1Pod,
} from '@kubernetes/client-node';
import { eventually } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type KubeSimulator, startKubeSimulator } from '../src/index.js';

const sims: KubeSimulator[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.close();
});

function pod(name: string): Record<string, unknown> {
  return {
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}

function informerOn(sim: KubeSimulator) {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Pod>(kc, '/api/v1/namespaces/default/pods', () =>
    api.listNamespacedPod({ namespace: 'default' }),
  );
  const seen = new Set<string>();
  const errors: unknown[] = [];
  informer.on('add', (p) => seen.add(p.metadata!.name!));
  informer.on('delete', (p) => seen.delete(p.metadata!.name!));
  // The documented client-node pattern: an informer stops on a connection error; restart it after a pause.
  informer.on('error', (e) => {
    errors.push(e);
    setTimeout(() => void informer.start().catch(() => {}), 100);
  });
  return { informer, seen, errors };
}

/** A started simulator (closed after the test) and a client-node API of `Api` on it as the admin. */
async function adminClient<T>(
  Api: new (...args: never[]) => T,
  options: Parameters<typeof startKubeSimulator>[0] = {},
): Promise<{ sim: KubeSimulator; api: T }> {
  const sim = await startKubeSimulator(options);
  sims.push(sim);
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return { sim, api: kc.makeApiClient(Api as never) as T };
}

describe('@kubernetes/client-node 1.4 informers against kube-simulator', () => {
  it('re-lists after a watch expiry (410 Gone) and keeps its cache right', async () => {
    const sim = await startKubeSimulator();
    sims.push(sim);
    sim.objects.create('v1', 'pods', pod('a'));
    const { informer, seen } = informerOn(sim);
    await informer.start();
    await eventually('pod a', () => seen.has('a'));
    sim.objects.create('v1', 'pods', pod('b'));
    await eventually('pod b via watch', () => seen.has('b'));

    // The informer's resourceVersion falls out of the history while its watch is down.
    const listsBefore = sim.requests.filter(
      (r) => r.method === 'GET' && !r.url.includes('watch=true'),
    ).length;
    sim.faults.dropWatches();
    sim.objects.delete('v1', 'pods', 'a', 'default');
    sim.objects.create('v1', 'pods', pod('c'));
    sim.faults.expireHistory();
    await eventually('re-list after 410', () => seen.has('c') && !seen.has('a'));
    const lists = sim.requests.filter((r) => r.method === 'GET' && !r.url.includes('watch=true')).length;
    expect(lists).toBeGreaterThan(listsBefore);
    expect([...seen].sort()).toEqual(['b', 'c']);
    sim.objects.create('v1', 'pods', pod('d'));
    await eventually('pod d after the re-list', () => seen.has('d'));
    await informer.stop();
  });

  it('survives a restart of the simulator from a snapshot on the same port', async () => {
    const first = await startKubeSimulator();
    sims.push(first);
    first.objects.create('v1', 'pods', pod('before'));
    const { informer, seen, errors } = informerOn(first);
    await informer.start();
    await eventually('pod before', () => seen.has('before'));

    const snapshot = first.snapshot();
    await first.close();
    await eventually('the informer notices', () => errors.length > 0);
    const second = await startKubeSimulator({ tls: first.tls!, port: first.port, snapshot });
    sims.push(second);
    second.objects.create('v1', 'pods', pod('after'));
    second.objects.delete('v1', 'pods', 'before', 'default');
    await eventually('state of the restarted simulator', () => seen.has('after') && !seen.has('before'));
    await informer.stop();
  });

  it('gets 403 Status objects it can read, over https and over plain http', async () => {
    const sim = await startKubeSimulator();
    sims.push(sim);
    const plain = await startKubeSimulator({ tls: false });
    sims.push(plain);
    expect(plain.url.startsWith('http://')).toBe(true);
    const pk = new KubeConfig();
    pk.loadFromString(plain.kubeconfig());
    expect((await pk.makeApiClient(CoreV1Api).listNamespace()).items).toHaveLength(4);
    sim.objects.create('v1', 'serviceaccounts', { metadata: { name: 'reader', namespace: 'default' } });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig({ token: sim.mintServiceAccountToken('default', 'reader') }));
    const api = kc.makeApiClient(CoreV1Api);
    const err = await api.listNode().catch((e: unknown) => e);
    expect((err as { code?: number }).code).toBe(403);
    expect(JSON.parse((err as { body: string }).body)).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message:
        'nodes is forbidden: User "system:serviceaccount:default:reader" cannot list resource "nodes" in API group "" at the cluster scope',
    });
  });

  it('refuses metadata fields of the wrong JSON type and a list resourceVersion that is no version with 400, storing nothing', async () => {
    const { sim, api } = await adminClient(CoreV1Api);
    const statusOf = (e: unknown) => ({
      code: (e as { code?: number }).code,
      message: (JSON.parse((e as { body: string }).body) as { message: string }).message,
    });
    // client-node sends what it is given: a number where Go has a string.
    const named5 = { metadata: { name: 5 as unknown as string }, data: { k: 'v' } };
    expect(
      statusOf(await api.createNamespacedConfigMap({ namespace: 'default', body: named5 }).catch((e) => e)),
    ).toEqual({
      code: 400,
      message: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string',
    });
    await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
    const rv5 = { metadata: { name: 'a', resourceVersion: 5 as unknown as string } };
    expect(
      statusOf(
        await api.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: rv5 }).catch((e) => e),
      ).code,
    ).toBe(400);
    // (client-node itself will not serialize a non-list ownerReferences; the admin API goes the same way.)
    expect(() =>
      sim.objects.create('v1', 'configmaps', {
        metadata: { name: 'b', namespace: 'default', ownerReferences: {} as never },
      }),
    ).toThrow(/cannot unmarshal object into Go struct field ObjectMeta.metadata.ownerReferences/);
    expect(sim.objects.list('v1', 'configmaps', 'default').map((c) => c.metadata?.name)).toEqual(['a']);

    expect(
      statusOf(
        await api.listNamespacedConfigMap({ namespace: 'default', resourceVersion: 'abc' }).catch((e) => e),
      ),
    ).toEqual({ code: 400, message: 'invalid resource version: abc' });
    const listed = await api.listNamespacedConfigMap({ namespace: 'default', resourceVersion: '0' });
    expect(listed.items.map((c) => c.metadata?.name)).toEqual(['a']);
  });

  it('refuses a body nested deeper than 1000 with 400 and stores nothing; one nested 1000 deep is stored and listed', async () => {
    const { sim, api } = await adminClient(CustomObjectsApi, { tls: false });
    sim.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', {
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { kind: 'Thing', plural: 'things', singular: 'thing', listKind: 'ThingList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    const nested = (levels: number): unknown => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    const thing = (name: string, spec: unknown) => ({
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name },
      spec,
    });
    const where = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'things' };
    // The object is one level; 999 arrays in its spec make 1000.
    await api.createNamespacedCustomObject({ ...where, body: thing('deep-enough', nested(999)) });
    // Deeper than a JavaScript stack serializes: written as text (client-node could not send it), over plain http.
    const deep = `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"too-deep"},"spec":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    const refused = await fetch(`${sim.url}/apis/example.com/v1/namespaces/default/things`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.adminToken}`, 'content-type': 'application/json' },
      body: deep,
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      reason: 'BadRequest',
      message: 'json: exceeded max depth of 1000',
    });
    // Just over the limit, sent by client-node: the same answer.
    const over = await api
      .createNamespacedCustomObject({ ...where, body: thing('over', nested(1000)) })
      .catch((e: unknown) => e);
    expect((over as { code?: number }).code).toBe(400);
    const listed = (await api.listNamespacedCustomObject(where)) as {
      items: { metadata: { name: string } }[];
    };
    expect(listed.items.map((i) => i.metadata.name)).toEqual(['deep-enough']);

    // Two JSON patch operations, each shallow enough, nesting one value inside the other: the result is held to
    // the same limit, and the object stays as it was.
    await api.createNamespacedCustomObject({ ...where, body: thing('patched', { a: 1 }) });
    const patch = (ops: unknown) =>
      fetch(`${sim.url}/apis/example.com/v1/namespaces/default/things/patched`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${sim.adminToken}`, 'content-type': 'application/json-patch+json' },
        body: JSON.stringify(ops),
      });
    expect((await patch([{ op: 'replace', path: '/spec/a', value: nested(600) }])).status).toBe(200);
    const inside = `/spec/a${'/0'.repeat(599)}/0`;
    const refusedPatch = await patch([{ op: 'add', path: inside, value: nested(600) }]);
    expect(refusedPatch.status).toBe(400);
    expect(await refusedPatch.json()).toMatchObject({ message: 'json: exceeded max depth of 1000' });
    const after = (await api.getNamespacedCustomObject({ ...where, name: 'patched' })) as {
      spec: { a: unknown };
    };
    expect(after.spec.a).toEqual(nested(600));
  });

  it('refuses an events.k8s.io/v1 Event whose note passes 1024 bytes, or reason/action/reportingInstance 128, with 422', async () => {
    const { sim, api } = await adminClient(EventsV1Api);
    const event = (name: string, over: Record<string, string>) => ({
      metadata: { name, namespace: 'default' },
      eventTime: new Date(Date.UTC(2026, 10, 24)),
      reportingController: 'example.com/test',
      reportingInstance: 'node-1',
      action: 'Test',
      reason: 'Testing',
      type: 'Warning',
      note: 'é'.repeat(512), // 1024 bytes: at the limit
      regarding: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
      ...over,
    });
    await api.createNamespacedEvent({ namespace: 'default', body: event('fits', {}) });
    for (const [field, value] of [
      ['note', `${'é'.repeat(512)}x`],
      ['reason', 'r'.repeat(129)],
      ['action', 'a'.repeat(129)],
      ['reportingInstance', 'n'.repeat(129)],
    ] as const) {
      const e = await api
        .createNamespacedEvent({
          namespace: 'default',
          body: event(`too-long-${field.toLowerCase()}`, { [field]: value }),
        })
        .catch((x: unknown) => x);
      expect((e as { code?: number }).code).toBe(422);
      expect(JSON.parse((e as { body: string }).body)).toMatchObject({
        reason: 'Invalid',
        details: { causes: [{ field, message: expect.stringContaining('can have at most') }] },
      });
    }
    expect(sim.objects.list('events.k8s.io/v1', 'events', 'default').map((e) => e.metadata?.name)).toEqual([
      'fits',
    ]);
  });
});
