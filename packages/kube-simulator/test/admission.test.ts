import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { debianKubectl, runKubectl, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type KubeSimulator,
  selfSignedCertificate,
  startKubeSimulator,
  type TlsMaterial,
} from '../src/index.js';

/**
 * A real HTTPS admission webhook: pods labelled `mutate=yes` get the label `mutated=by-webhook` (JSONPatch),
 * `deny=yes` is refused with a message, `slow=yes` answers after 2 s. It records every review it receives.
 */
const reviews: Record<string, unknown>[] = [];
let webhook: Server;
let webhookPort = 0;
let webhookTls: TlsMaterial;
let connections = 0;
let otherCa: TlsMaterial;
let sim: KubeSimulator;
const dir = scratchDir('vck-kubesim-admission-');
const kubeconfigPath = join(dir.path, 'admin.kubeconfig');

beforeAll(async () => {
  webhookTls = await selfSignedCertificate(['hooks.webhooks.svc']);
  otherCa = await selfSignedCertificate();
  webhook = createServer({ cert: webhookTls.cert, key: webhookTls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reviews.push(review);
      const request = review.request;
      if (req.url?.startsWith('/validate')) {
        // Validating: only system:serviceaccount:webhooks:owner may set or change the annotation "locked".
        const locked = (o: { metadata?: { annotations?: Record<string, string> } } | null) =>
          o?.metadata?.annotations?.locked;
        const changed = locked(request.object) !== locked(request.oldObject);
        const allowed = !changed || request.userInfo.username === 'system:serviceaccount:webhooks:owner';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid: request.uid,
              allowed,
              ...(allowed
                ? {}
                : { status: { code: 403, reason: 'Forbidden', message: 'only the owner sets locked' } }),
            },
          }),
        );
        return;
      }
      const labels = request.object.metadata.labels ?? {};
      const reply = (response: Record<string, unknown>) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: request.uid, ...response },
          }),
        );
      };
      if (labels.deny === 'yes')
        return reply({
          allowed: false,
          status: { code: 403, reason: 'Forbidden', message: 'no pods like this' },
        });
      if (labels.mutate !== 'yes') return reply({ allowed: true });
      const patch = [{ op: 'add', path: '/metadata/labels/mutated', value: 'by-webhook' }];
      const answer = () =>
        reply({
          allowed: true,
          patchType: 'JSONPatch',
          patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
        });
      if (labels.slow === 'yes') setTimeout(answer, 2000);
      else answer();
    });
  });
  webhook.on('secureConnection', () => connections++);
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  webhookPort = (webhook.address() as AddressInfo).port;
  sim = await startKubeSimulator({
    resolveWebhookService: (ref) =>
      ref.namespace === 'webhooks' && ref.name === 'hooks' && ref.port === 443
        ? { host: '127.0.0.1', port: webhookPort }
        : undefined,
  });
  writeFileSync(kubeconfigPath, sim.kubeconfig());
});
afterAll(async () => {
  await sim?.close();
  webhook?.closeAllConnections();
  await new Promise((r) => webhook?.close(r));
  dir.remove();
});

function configure(webhooks: Record<string, unknown>[]): void {
  for (const c of sim.objects.list('admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations'))
    sim.objects.delete(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      String(c.metadata?.name),
    );
  sim.objects.create('admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', {
    metadata: { name: 'test' },
    webhooks,
  });
}

function hook(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'labels.test.io',
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: {
      service: { namespace: 'webhooks', name: 'hooks', path: '/mutate' },
      caBundle: Buffer.from(webhookTls.cert).toString('base64'),
    },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    ...overrides,
  };
}

function core(): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return kc.makeApiClient(CoreV1Api);
}

async function createPod(name: string, labels: Record<string, string>) {
  return core().createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  });
}

async function refusal(p: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: number; body: string };
    return { code: err.code, body: JSON.parse(err.body) };
  }
  throw new Error('the create was not refused');
}

describe('mutating admission webhooks (admissionregistration.k8s.io/v1)', () => {
  it('kubectl creates a pod through a Service webhook: the JSONPatch is stored, the review is v1', async () => {
    configure([hook()]);
    reviews.length = 0;
    const file = join(dir.path, 'pod.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kubectl-pod\n  labels: {mutate: "yes"}\nspec:\n  containers:\n  - {name: c, image: busybox}\n',
    );
    const r = await runKubectl(debianKubectl(), kubeconfigPath, join(dir.path, 'cache'), [
      'create',
      '-f',
      file,
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('pod/kubectl-pod created\n');
    const stored = sim.objects.get('v1', 'pods', 'kubectl-pod', 'default');
    expect(stored?.metadata?.labels).toEqual({ mutate: 'yes', mutated: 'by-webhook' });
    expect(reviews).toHaveLength(1);
    const review = reviews[0] as { apiVersion: string; kind: string; request: Record<string, unknown> };
    expect(review.apiVersion).toBe('admission.k8s.io/v1');
    expect(review.kind).toBe('AdmissionReview');
    expect(review.request).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'kubectl-pod',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'kube-sim:admin' },
      oldObject: null,
      dryRun: false,
    });
  });

  it('calls clientConfig.url too; objects the rules do not cover and unlabelled pods pass unchanged', async () => {
    configure([
      hook({
        clientConfig: {
          url: `https://127.0.0.1:${webhookPort}/mutate`,
          caBundle: Buffer.from(webhookTls.cert).toString('base64'),
        },
      }),
    ]);
    const created = await createPod('url-pod', { mutate: 'yes' });
    expect(created.metadata?.labels).toEqual({ mutate: 'yes', mutated: 'by-webhook' });
    const plain = await createPod('plain-pod', { app: 'x' });
    expect(plain.metadata?.labels).toEqual({ app: 'x' });
    reviews.length = 0;
    await core().createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm' } } });
    expect(reviews).toHaveLength(0);
  });

  it('honours objectSelector and namespaceSelector', async () => {
    configure([hook({ objectSelector: { matchLabels: { opted: 'in' } } })]);
    reviews.length = 0;
    expect((await createPod('not-opted', { mutate: 'yes' })).metadata?.labels).toEqual({ mutate: 'yes' });
    expect(reviews).toHaveLength(0);
    configure([
      hook({ namespaceSelector: { matchExpressions: [{ key: 'skip-webhooks', operator: 'DoesNotExist' }] } }),
    ]);
    sim.objects.patch('v1', 'namespaces', 'default', { metadata: { labels: { 'skip-webhooks': 'true' } } });
    try {
      expect((await createPod('ns-skipped', { mutate: 'yes' })).metadata?.labels).toEqual({ mutate: 'yes' });
    } finally {
      sim.objects.patch('v1', 'namespaces', 'default', { metadata: { labels: { 'skip-webhooks': null } } });
    }
    expect((await createPod('ns-selected', { mutate: 'yes' })).metadata?.labels?.mutated).toBe('by-webhook');
  });

  it('a denial refuses the create with the API server wording and stores nothing', async () => {
    configure([hook()]);
    const r = await refusal(createPod('denied', { deny: 'yes' }));
    expect(r.code).toBe(403);
    expect(r.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      message: 'admission webhook "labels.test.io" denied the request: no pods like this',
    });
    expect(sim.objects.get('v1', 'pods', 'denied', 'default')).toBeUndefined();
  });

  it('an unreachable webhook: failurePolicy Fail refuses (500), Ignore admits unchanged', async () => {
    configure([
      hook({ clientConfig: { service: { namespace: 'webhooks', name: 'gone', path: '/mutate' } } }),
    ]);
    const r = await refusal(createPod('fail-closed', { mutate: 'yes' }));
    expect(r.code).toBe(500);
    expect(r.body.reason).toBe('InternalError');
    expect(String(r.body.message)).toMatch(
      /^Internal error occurred: failed calling webhook "labels\.test\.io": failed to call webhook: Post "https:\/\/gone\.webhooks\.svc:443\/mutate\?timeout=10s": /,
    );
    expect(sim.objects.get('v1', 'pods', 'fail-closed', 'default')).toBeUndefined();
    configure([
      hook({
        failurePolicy: 'Ignore',
        clientConfig: {
          url: 'https://127.0.0.1:1/mutate',
          caBundle: Buffer.from(webhookTls.cert).toString('base64'),
        },
      }),
    ]);
    expect((await createPod('fail-open', { mutate: 'yes' })).metadata?.labels).toEqual({ mutate: 'yes' });
  });

  it('verifies the caBundle: a webhook certificate from another CA is a failed call', async () => {
    configure([
      hook({
        clientConfig: {
          service: { namespace: 'webhooks', name: 'hooks', path: '/mutate' },
          caBundle: Buffer.from(otherCa.cert).toString('base64'),
        },
      }),
    ]);
    const r = await refusal(createPod('bad-ca', { mutate: 'yes' }));
    expect(r.code).toBe(500);
    expect(String(r.body.message)).toContain('failed to call webhook');
    expect(sim.objects.get('v1', 'pods', 'bad-ca', 'default')).toBeUndefined();
  });

  it('timeoutSeconds: a webhook slower than its timeout is a failed call', async () => {
    configure([hook({ timeoutSeconds: 1 })]);
    const started = Date.now();
    const r = await refusal(createPod('slow', { mutate: 'yes', slow: 'yes' }));
    expect(r.code).toBe(500);
    expect(String(r.body.message)).toContain('?timeout=1s": context deadline exceeded');
    expect(Date.now() - started).toBeLessThan(1900);
  });

  it('dryRun=All reaches webhooks without side effects and stores nothing; others refuse it; calls reuse a connection', async () => {
    configure([hook()]);
    reviews.length = 0;
    const before = connections;
    for (const name of ['dry-1', 'dry-2', 'dry-3']) {
      const dry = await core().createNamespacedPod({
        namespace: 'default',
        dryRun: 'All',
        body: {
          metadata: { name, labels: { mutate: 'yes' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      });
      expect(dry.metadata?.labels?.mutated).toBe('by-webhook');
      expect(sim.objects.get('v1', 'pods', name, 'default')).toBeUndefined();
    }
    expect(reviews.map((r) => (r.request as { dryRun: boolean }).dryRun)).toEqual([true, true, true]);
    expect(connections - before).toBeLessThanOrEqual(1);
    configure([hook({ sideEffects: 'Some' })]);
    const r = await refusal(
      core().createNamespacedPod({
        namespace: 'default',
        dryRun: 'All',
        body: { metadata: { name: 'dry-x' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      }),
    );
    expect(r.code).toBe(400);
    expect(r.body.message).toBe('admission webhook "labels.test.io" does not support dry run');
  });
});

describe('validating admission webhooks (admissionregistration.k8s.io/v1)', () => {
  function configureValidating(failurePolicy: 'Fail' | 'Ignore' = 'Fail'): void {
    for (const c of sim.objects.list('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations'))
      sim.objects.delete(
        'admissionregistration.k8s.io/v1',
        'validatingwebhookconfigurations',
        String(c.metadata?.name),
      );
    sim.objects.create('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', {
      metadata: { name: 'locks' },
      webhooks: [
        hook({
          name: 'locks.test.io',
          failurePolicy,
          clientConfig: {
            service: { namespace: 'webhooks', name: 'hooks', path: '/validate' },
            caBundle: Buffer.from(webhookTls.cert).toString('base64'),
          },
          rules: [
            { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] },
          ],
        }),
      ],
    });
  }

  /** A client authenticated as ServiceAccount webhooks/<name>, allowed everything on pods. */
  function clientAs(name: string): CoreV1Api {
    if (sim.objects.get('v1', 'namespaces', 'webhooks') === undefined)
      sim.objects.create('v1', 'namespaces', { metadata: { name: 'webhooks' } });
    if (sim.objects.get('v1', 'serviceaccounts', name, 'webhooks') === undefined) {
      sim.objects.create('v1', 'serviceaccounts', { metadata: { name, namespace: 'webhooks' } });
      sim.objects.create('rbac.authorization.k8s.io/v1', 'clusterroles', {
        metadata: { name: `pods-${name}` },
        rules: [{ apiGroups: [''], resources: ['pods', 'pods/status'], verbs: ['*'] }],
      });
      sim.objects.create('rbac.authorization.k8s.io/v1', 'clusterrolebindings', {
        metadata: { name: `pods-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `pods-${name}` },
        subjects: [{ kind: 'ServiceAccount', name, namespace: 'webhooks' }],
      });
    }
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig({ token: sim.mintServiceAccountToken('webhooks', name) }));
    return kc.makeApiClient(CoreV1Api);
  }

  const lockedOf = (name: string) =>
    (
      sim.objects.get('v1', 'pods', name, 'default')?.metadata?.annotations as
        | Record<string, string>
        | undefined
    )?.locked;

  it('refuses a create or an update the webhook denies, with its message, by the identity it authenticated', async () => {
    configure([]);
    configureValidating();
    reviews.length = 0;
    // kubectl (the administrator) creating a pod with the annotation: refused, nothing stored.
    const file = join(dir.path, 'locked.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: forged\n  annotations: {locked: "yes"}\nspec:\n  containers:\n  - {name: c, image: busybox}\n',
    );
    const r = await runKubectl(debianKubectl(), kubeconfigPath, join(dir.path, 'cache'), [
      'create',
      '-f',
      file,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe(
      'Error from server (Forbidden): error when creating "' +
        file +
        '": admission webhook "locks.test.io" denied the request: only the owner sets locked\n',
    );
    expect(sim.objects.get('v1', 'pods', 'forged', 'default')).toBeUndefined();
    const create = reviews[0] as { request: Record<string, unknown> };
    expect(create.request).toMatchObject({
      operation: 'CREATE',
      userInfo: { username: 'kube-sim:admin' },
      oldObject: null,
      options: { kind: 'CreateOptions' },
    });
    // As stored: the review's object carries the uid the create would give it.
    expect((create.request.object as { metadata: { uid?: string } }).metadata.uid).toMatch(/^[0-9a-f-]{36}$/);

    // The owner sets it (a merge patch), another ServiceAccount may not change it (PUT or patch), nor remove it.
    await createPod('guarded', { app: 'x' });
    const owner = clientAs('owner');
    await owner.patchNamespacedPod(
      { name: 'guarded', namespace: 'default', body: { metadata: { annotations: { locked: 'by-owner' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(lockedOf('guarded')).toBe('by-owner');
    const update = reviews.at(-1) as { request: Record<string, unknown> };
    expect(update.request).toMatchObject({
      operation: 'UPDATE',
      name: 'guarded',
      userInfo: { username: 'system:serviceaccount:webhooks:owner' },
      options: { kind: 'UpdateOptions' },
    });
    expect(
      (update.request.oldObject as { metadata: { annotations?: unknown } }).metadata.annotations,
    ).toBeUndefined();
    expect((update.request.object as { metadata: { annotations: unknown } }).metadata.annotations).toEqual({
      locked: 'by-owner',
    });

    const intruder = clientAs('intruder');
    const patched = await refusal(
      intruder.patchNamespacedPod(
        { name: 'guarded', namespace: 'default', body: { metadata: { annotations: { locked: null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(patched.code).toBe(403);
    expect(patched.body).toMatchObject({
      reason: 'Forbidden',
      message: 'admission webhook "locks.test.io" denied the request: only the owner sets locked',
    });
    const current = await intruder.readNamespacedPod({ name: 'guarded', namespace: 'default' });
    const put = await refusal(
      intruder.replaceNamespacedPod({
        name: 'guarded',
        namespace: 'default',
        body: { ...current, metadata: { ...current.metadata, annotations: { locked: 'stolen' } } },
      }),
    );
    expect(put.code).toBe(403);
    expect(lockedOf('guarded')).toBe('by-owner');
    // Changes that leave it alone pass, and the status subresource is not admitted at all.
    await intruder.patchNamespacedPod(
      { name: 'guarded', namespace: 'default', body: { metadata: { labels: { more: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(sim.objects.get('v1', 'pods', 'guarded', 'default')?.metadata?.labels).toEqual({
      app: 'x',
      more: 'yes',
    });
    const before = reviews.length;
    await intruder.patchNamespacedPodStatus(
      { name: 'guarded', namespace: 'default', body: { status: { phase: 'Running' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(reviews.length).toBe(before);
  });

  it('an unreachable validating webhook: Fail refuses the update (500), Ignore lets it through', async () => {
    configure([]);
    await createPod('unguarded', { app: 'x' });
    configureValidating('Fail');
    const down = sim.objects.get(
      'admissionregistration.k8s.io/v1',
      'validatingwebhookconfigurations',
      'locks',
    )!;
    const unreachable = (policy: string) => ({
      metadata: { name: 'locks' },
      webhooks: (down.webhooks as Record<string, unknown>[]).map((w) => ({
        ...w,
        failurePolicy: policy,
        clientConfig: { service: { namespace: 'webhooks', name: 'nowhere', path: '/validate' } },
      })),
    });
    sim.objects.delete('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', 'locks');
    sim.objects.create(
      'admissionregistration.k8s.io/v1',
      'validatingwebhookconfigurations',
      unreachable('Fail'),
    );
    const body = { metadata: { annotations: { locked: 'x' } } };
    const r = await refusal(
      core().patchNamespacedPod(
        { name: 'unguarded', namespace: 'default', body },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(r.code).toBe(500);
    expect(String(r.body.message)).toMatch(
      /^Internal error occurred: failed calling webhook "locks.test.io": /,
    );
    expect(lockedOf('unguarded')).toBeUndefined();
    sim.objects.delete('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', 'locks');
    sim.objects.create(
      'admissionregistration.k8s.io/v1',
      'validatingwebhookconfigurations',
      unreachable('Ignore'),
    );
    await core().patchNamespacedPod(
      { name: 'unguarded', namespace: 'default', body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(lockedOf('unguarded')).toBe('x');
    sim.objects.delete('admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', 'locks');
  });
});
