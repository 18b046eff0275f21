import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeSimulator, startKubeSimulator } from '../src/index.js';

let sim: KubeSimulator;
beforeAll(async () => {
  sim = await startKubeSimulator({
    tls: false,
    historySize: 50,
    bookmarkIntervalMs: 100,
    maxBodyBytes: 64 * 1024,
  });
});
afterAll(async () => {
  await sim.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
  token = sim.adminToken,
): Promise<Answer> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': contentType } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, headers: res.headers };
}

const cm = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
});

const CMS = '/api/v1/namespaces/default/configmaps';

async function readWatch(
  path: string,
  until: (events: { type: string; object: Record<string, unknown> }[]) => boolean,
) {
  const controller = new AbortController();
  const res = await fetch(`${sim.url}${path}`, {
    headers: { authorization: `Bearer ${sim.adminToken}` },
    signal: controller.signal,
  });
  const events: { type: string; object: Record<string, unknown> }[] = [];
  const reader = res.body!.getReader();
  let buffer = '';
  const deadline = Date.now() + 5000;
  try {
    while (!until(events) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += new TextDecoder().decode(value);
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
    }
  } finally {
    controller.abort();
  }
  return { status: res.status, events };
}

describe('object semantics over HTTP', () => {
  it('stamps uid, creationTimestamp and resourceVersion; refuses stale updates with 409 Conflict', async () => {
    const created = await call('POST', CMS, cm('rv', { a: '1' }));
    expect(created.status).toBe(201);
    const meta = created.body.metadata as Record<string, string>;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const first = await call('PUT', `${CMS}/rv`, { ...created.body, data: { a: '2' } });
    expect(first.status).toBe(200);
    expect(Number((first.body.metadata as Record<string, string>).resourceVersion)).toBeGreaterThan(
      Number(meta.resourceVersion),
    );
    const stale = await call('PUT', `${CMS}/rv`, { ...created.body, data: { a: '3' } });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on configmaps "rv": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'rv', kind: 'configmaps' },
      code: 409,
    });
    const lockedPatch = await call(
      'PATCH',
      `${CMS}/rv`,
      { metadata: { resourceVersion: meta.resourceVersion }, data: { a: '4' } },
      'application/merge-patch+json',
    );
    expect(lockedPatch.status).toBe(409);
    expect((await call('GET', `${CMS}/rv`)).body.data).toEqual({ a: '2' });
    const dup = await call('POST', CMS, cm('rv'));
    expect(dup.status).toBe(409);
    expect(dup.body.reason).toBe('AlreadyExists');
  });

  it('answers bad input with the real status codes and changes nothing', async () => {
    const malformed = await call('POST', CMS, '{"metadata": {');
    expect([malformed.status, malformed.body.reason]).toEqual([400, 'BadRequest']);
    const badName = await call('POST', CMS, cm('Not_Valid'));
    expect(badName.status).toBe(422);
    expect(badName.body.reason).toBe('Invalid');
    expect((badName.body.details as { causes: { field: string; reason: string }[] }).causes[0]).toMatchObject(
      { field: 'metadata.name', reason: 'FieldValueInvalid' },
    );
    expect(badName.body.message).toMatch(
      /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/,
    );
    const badLabel = await call('POST', CMS, cm('ok-name', {}, { 'bad key!': 'x' }));
    expect(badLabel.status).toBe(422);
    const big = await call('POST', CMS, cm('big', { blob: 'x'.repeat(70 * 1024) }));
    expect([big.status, big.body.reason]).toEqual([413, 'RequestEntityTooLarge']);
    const yaml = await call('POST', CMS, 'kind: ConfigMap', 'application/x-yaml');
    expect(yaml.status).toBe(415);
    expect((await call('PATCH', `${CMS}/rv`, { data: {} }, 'text/plain')).status).toBe(415);
    const strict = await call('POST', `${CMS}?fieldValidation=Strict`, { ...cm('strict'), bogus: 1 });
    expect([strict.status, strict.body.message]).toEqual([
      400,
      'strict decoding error: unknown field "bogus"',
    ]);
    const warned = await call('POST', CMS, { ...cm('warned'), bogus: 1 });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"bogus\\""');
    expect(warned.body.bogus).toBeUndefined();
    const failedTest = await call(
      'PATCH',
      `${CMS}/rv`,
      [
        { op: 'replace', path: '/data/a', value: '9' },
        { op: 'test', path: '/data/a', value: 'nope' },
      ],
      'application/json-patch+json',
    );
    expect(failedTest.status).toBe(422);
    expect((await call('GET', `${CMS}/rv`)).body.data).toEqual({ a: '2' });
    for (const n of ['Not_Valid', 'ok-name', 'big', 'strict'])
      expect((await call('GET', `${CMS}/${n}`)).status).toBe(404);
    const missingNs = await call('POST', '/api/v1/namespaces/nope/configmaps', cm('x'));
    expect([missingNs.status, missingNs.body.message]).toEqual([404, 'namespaces "nope" not found']);
    expect((await call('GET', '/apis/nothing.example.com/v1/things')).status).toBe(404);
  });

  it('selects by labels and fields and pages with limit/continue', async () => {
    for (const [n, tier] of [
      ['p1', 'web'],
      ['p2', 'db'],
      ['p3', 'web'],
      ['p4', 'cache'],
    ] as const)
      expect((await call('POST', CMS, cm(`page-${n}`, {}, { tier, paged: 'yes' }))).status).toBe(201);
    const web = await call(
      'GET',
      `${CMS}?labelSelector=${encodeURIComponent('paged=yes,tier in (web,cache),tier!=cache')}`,
    );
    expect((web.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'page-p1',
      'page-p3',
    ]);
    const byName = await call(
      'GET',
      `/api/v1/configmaps?fieldSelector=metadata.name%3Dpage-p2,metadata.namespace%3Ddefault`,
    );
    expect((byName.body.items as unknown[]).length).toBe(1);
    const badField = await call('GET', `${CMS}?fieldSelector=spec.nodeName%3Dx`);
    expect(badField.status).toBe(400);
    const names: string[] = [];
    let cont = '';
    for (let page = 0; page < 10; page++) {
      const r = await call(
        'GET',
        `${CMS}?labelSelector=paged%3Dyes&limit=3${cont ? `&continue=${cont}` : ''}`,
      );
      names.push(...(r.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
      cont = (r.body.metadata as { continue?: string }).continue ?? '';
      if (!cont) break;
    }
    expect(names).toEqual(['page-p1', 'page-p2', 'page-p3', 'page-p4']);
  });

  it('keeps objects with finalizers until the last one is removed; bumps generation on spec changes only', async () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', finalizers: ['example.com/cleanup'] },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    const path = '/apis/apps/v1/namespaces/default/daemonsets';
    expect((await call('POST', path, ds)).body.metadata).toMatchObject({ generation: 1 });
    const labelled = await call(
      'PATCH',
      `${path}/agent`,
      { metadata: { labels: { x: 'y' } } },
      'application/strategic-merge-patch+json',
    );
    expect((labelled.body.metadata as { generation: number }).generation).toBe(1);
    const changed = await call(
      'PATCH',
      `${path}/agent`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'i2' }] } } } },
      'application/strategic-merge-patch+json',
    );
    expect((changed.body.metadata as { generation: number }).generation).toBe(2);
    const status = await call(
      'PATCH',
      `${path}/agent/status`,
      { status: { numberReady: 3 } },
      'application/merge-patch+json',
    );
    expect([status.status, (status.body.status as { numberReady: number }).numberReady]).toEqual([200, 3]);
    const deleting = await call('DELETE', `${path}/agent`);
    expect(deleting.status).toBe(200);
    expect((deleting.body.metadata as { deletionTimestamp?: string }).deletionTimestamp).toBeDefined();
    expect((await call('GET', `${path}/agent`)).status).toBe(200);
    const released = await call(
      'PATCH',
      `${path}/agent`,
      [{ op: 'remove', path: '/metadata/finalizers' }],
      'application/json-patch+json',
    );
    expect(released.status).toBe(200);
    expect((await call('GET', `${path}/agent`)).status).toBe(404);
  });

  it('watches from a resourceVersion with bookmarks, and answers 410 Expired for one too old', async () => {
    const start = (await call('GET', CMS)).body.metadata as { resourceVersion: string };
    await call('POST', CMS, cm('w1'));
    await call('DELETE', `${CMS}/w1`);
    const w = await readWatch(
      `${CMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${start.resourceVersion}`,
      (ev) => ev.some((e) => e.type === 'BOOKMARK'),
    );
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED', 'BOOKMARK']);
    for (let i = 0; i < 60; i++)
      await call('PATCH', `${CMS}/rv`, { data: { n: String(i) } }, 'application/merge-patch+json');
    const old = await readWatch(
      `${CMS}?watch=true&resourceVersion=${start.resourceVersion}`,
      (ev) => ev.length > 0,
    );
    expect(old.status).toBe(200);
    expect(old.events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({
          kind: 'Status',
          status: 'Failure',
          reason: 'Expired',
          code: 410,
          message: expect.stringMatching(/^too old resource version: /),
        }),
      },
    ]);
  });

  it('ends a watch at its timeoutSeconds as the API server does: a complete response, no ERROR event', async () => {
    const rv = ((await call('GET', CMS)).body.metadata as { resourceVersion: string }).resourceVersion;
    const watches = sim.openWatches;
    const opened = performance.now();
    const res = await fetch(`${sim.url}${CMS}?watch=true&resourceVersion=${rv}&timeoutSeconds=1`, {
      headers: { authorization: `Bearer ${sim.adminToken}` },
    });
    expect(res.status).toBe(200);
    // Read to the end: the body completes (a clean end, not a reset), and nothing came on it.
    expect(await res.text()).toBe('');
    expect(performance.now() - opened).toBeGreaterThanOrEqual(1000);
    expect(sim.openWatches).toBe(watches);
    const bad = await call('GET', `${CMS}?watch=true&timeoutSeconds=1s`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });

  it('serves events through both Event APIs from one storage', async () => {
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'node-1.abc' },
      regarding: { kind: 'Node', name: 'node-1' },
      reason: 'MissingIAMPermissions',
      note: 'Unauthorized operation',
      type: 'Warning',
      reportingController: 'aws-node',
      reportingInstance: 'node-1',
      action: 'Start',
      eventTime: '2026-01-01T00:00:00.000000Z',
    };
    expect((await call('POST', '/apis/events.k8s.io/v1/namespaces/default/events', ev)).status).toBe(201);
    const core = await call('GET', '/api/v1/namespaces/default/events/node-1.abc');
    expect(core.body).toMatchObject({
      apiVersion: 'v1',
      involvedObject: { kind: 'Node', name: 'node-1' },
      message: 'Unauthorized operation',
      reportingComponent: 'aws-node',
    });
    const byReason = await call(
      'GET',
      '/api/v1/events?fieldSelector=involvedObject.name%3Dnode-1,type%3DWarning',
    );
    expect((byReason.body.items as unknown[]).length).toBe(1);
  });

  it('answers a malformed percent-escape in the path with 400 BadRequest, not a server error', async () => {
    const res = await call('GET', `${CMS}/bad%ZZname`);
    expect(res.status).toBe(400);
    expect(res.body.kind).toBe('Status');
    expect(res.body.reason).toBe('BadRequest');
    expect(res.body.message).toContain('malformed percent-escape');
  });

  it('authenticates bearer tokens and authorizes by stored RBAC objects', async () => {
    const noToken = await fetch(`${sim.url}/api/v1/namespaces`);
    expect(noToken.status).toBe(401);
    expect((await fetch(`${sim.url}/version`)).status).toBe(200);
    await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'leader' } });
    const token = sim.mintServiceAccountToken('default', 'leader');
    const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const denied = await call('POST', leases, { metadata: { name: 'lock' } }, 'application/json', token);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:default:leader" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"',
    );
    await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      metadata: { name: 'lease-writer' },
      rules: [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
      ],
    });
    await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'lease-writer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lease-writer' },
      subjects: [{ kind: 'ServiceAccount', name: 'leader' }],
    });
    const lease = await call(
      'POST',
      leases,
      { metadata: { name: 'lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
      'application/json',
      token,
    );
    expect(lease.status).toBe(201);
    expect((await call('DELETE', `${leases}/lock`, undefined, 'application/json', token)).status).toBe(403);
    expect(
      (await call('GET', '/api/v1/namespaces/kube-system/configmaps', undefined, 'application/json', token))
        .status,
    ).toBe(403);
    await call('DELETE', '/api/v1/namespaces/default/serviceaccounts/leader');
    expect((await call('GET', `${leases}/lock`, undefined, 'application/json', token)).status).toBe(401);
  });

  it('authorizes a list or watch narrowed by fieldSelector=metadata.name against resourceNames', async () => {
    await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'cm-reader' } });
    const token = sim.mintServiceAccountToken('default', 'cm-reader');
    await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      metadata: { name: 'one-configmap' },
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['one'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'one-configmap' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'one-configmap' },
      subjects: [{ kind: 'ServiceAccount', name: 'cm-reader' }],
    });
    await call('POST', CMS, { metadata: { name: 'one' }, data: { k: 'v' } });
    const get = (q: string) => call('GET', `${CMS}${q}`, undefined, 'application/json', token);
    const narrowed = await get('?fieldSelector=metadata.name%3Done');
    expect(narrowed.status).toBe(200);
    expect((narrowed.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'one',
    ]);
    expect((await get('?fieldSelector=metadata.name%3D%3Done')).status).toBe(200);
    expect((await get('')).status).toBe(403);
    expect((await get('?fieldSelector=metadata.name%3Dother')).status).toBe(403);
    expect((await get('?fieldSelector=metadata.name!%3Done')).status).toBe(403);
    const watch = await fetch(
      `${sim.url}${CMS}?watch=true&fieldSelector=metadata.name%3Done&timeoutSeconds=1`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    expect(watch.status).toBe(200);
    await watch.body?.cancel();
  });

  it('snapshots state and restores it into a new simulator with the same tokens', async () => {
    const snap = sim.snapshot();
    const copy = await startKubeSimulator({ tls: false, snapshot: snap });
    try {
      const res = await fetch(`${copy.url}${CMS}/rv`, {
        headers: { authorization: `Bearer ${sim.adminToken}` },
      });
      expect(res.status).toBe(200);
      expect(copy.adminToken).toBe(sim.adminToken);
    } finally {
      await copy.close();
    }
  });
});

describe('open watches and connections', () => {
  it('counts watch streams and client connections while they are open, and neither once the client is gone', async () => {
    const { request, Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true });
    const before = { watches: sim.openWatches, connections: sim.openConnections };
    const req = request(`${sim.url}${CMS}?watch=true`, {
      agent,
      headers: { authorization: `Bearer ${sim.adminToken}` },
    });
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
    expect(res.statusCode).toBe(200);
    expect(sim.openWatches).toBe(before.watches + 1);
    expect(sim.openConnections).toBe(before.connections + 1);
    req.destroy();
    agent.destroy();
    const deadline = Date.now() + 5000;
    while (
      (sim.openWatches > before.watches || sim.openConnections > before.connections) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 10));
    expect(sim.openWatches).toBe(before.watches);
    expect(sim.openConnections).toBe(before.connections);
  });
});
