import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
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
