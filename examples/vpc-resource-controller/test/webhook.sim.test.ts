/**
 * The pod mutating webhook: `reviewPod` on its own, then end to end — kube-simulator calling the built program's
 * webhook over HTTPS (through the Service of manifests/webhook.yaml and its caBundle), pods created by Debian's
 * kubectl 1.20 without any limit, and the controller annotating what the webhook marked.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfSignedCertificate, type TlsMaterial } from '@vpc-cni-kit/kube-simulator';
import { debianKubectl, eventually, fifoWithLateWriter, runKubectl } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  ANNOTATION_VALIDATION_WEBHOOK_NAME,
  DEFAULT_ANNOTATION_WRITERS,
  type PolicyLookup,
  reviewPod,
  reviewPodAnnotation,
} from '../src/index.js';
import { DB_CLIENT_SG, startWorld, type World } from './support/world.js';

const WEBHOOK_HOST = 'vpc-resource-controller-webhook.kube-system.svc';
const manifests = fileURLToPath(new URL('../manifests', import.meta.url));

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function review(object: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      namespace: 'default',
      operation: 'CREATE',
      object,
      ...extra,
    },
  };
}

const pod = (spec: Record<string, unknown>, labels: Record<string, string> = { app: 'db-client' }) => ({
  metadata: { name: 'p', labels },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});

const selects: PolicyLookup = async (p) => (p.labels['app'] === 'db-client' ? [DB_CLIENT_SG] : []);

function patchOf(answer: Awaited<ReturnType<typeof reviewPod>>): unknown {
  if (answer.status !== 200) throw new Error('not a 200');
  const r = answer.body['response'] as { patch?: string; patchType?: string };
  return r.patch === undefined ? undefined : JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8'));
}

describe('reviewPod (the reference mpod.vpc.k8s.aws mutation)', () => {
  it('adds pod-eni "1" to the first container, creating resources, or limits and requests, as needed', async () => {
    expect(patchOf(await reviewPod(review(pod({})), selects))).toEqual([
      {
        op: 'add',
        path: '/spec/containers/0/resources',
        value: {
          limits: { 'vpc.amazonaws.com/pod-eni': '1' },
          requests: { 'vpc.amazonaws.com/pod-eni': '1' },
        },
      },
    ]);
    const withLimits = pod({
      containers: [
        { name: 'a', image: 'x', resources: { limits: { memory: '1Gi' } } },
        { name: 'b', image: 'y' },
      ],
    });
    expect(patchOf(await reviewPod(review(withLimits), selects))).toEqual([
      { op: 'add', path: '/spec/containers/0/resources/limits/vpc.amazonaws.com~1pod-eni', value: '1' },
      {
        op: 'add',
        path: '/spec/containers/0/resources/requests',
        value: { 'vpc.amazonaws.com/pod-eni': '1' },
      },
    ]);
  });

  it('admits unchanged: a pod no policy selects, hostNetwork, Windows and Fargate pods', async () => {
    const asked: string[] = [];
    const lookup: PolicyLookup = async (p) => {
      asked.push(p.namespace);
      return selects(p);
    };
    for (const obj of [
      pod({}, { app: 'web' }),
      pod({ hostNetwork: true }),
      pod({ nodeSelector: { 'kubernetes.io/os': 'windows' } }),
      pod({}, { app: 'db-client', 'eks.amazonaws.com/fargate-profile': 'fp' }),
    ]) {
      const a = await reviewPod(review(obj), lookup);
      expect(a.status).toBe(200);
      expect(patchOf(a)).toBeUndefined();
      expect(
        (a as unknown as { body: { response: { allowed: boolean; uid: string } } }).body.response,
      ).toMatchObject({
        allowed: true,
        uid: 'u-1',
      });
    }
    // Only the first was looked up; the namespace came from the request.
    expect(asked).toEqual(['default']);
  });

  it('a failed policy lookup denies the pod; a malformed review is 400 with the reason', async () => {
    const failing: PolicyLookup = async () => {
      throw new Error('HTTP 503: unavailable');
    };
    const denied = await reviewPod(review(pod({})), failing);
    expect(denied.status).toBe(200);
    expect((denied as unknown as { body: { response: unknown } }).body.response).toMatchObject({
      allowed: false,
      status: { code: 403, message: expect.stringContaining('HTTP 503: unavailable') },
    });
    for (const [body, why] of [
      [null, 'AdmissionReview'],
      [{ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: {} }, 'AdmissionReview'],
      [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'request.uid'],
      [review('not a pod'), 'Pod'],
      [review(pod({}), { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }), 'Pod'],
      [review({ metadata: {}, spec: { containers: [] } }), 'no containers'],
      [review(pod({}), { namespace: undefined }), 'no namespace'],
    ] as const) {
      const a = await reviewPod(body, selects);
      expect(a.status).toBe(400);
      expect(a.body).toContain(why);
    }
  });
});

/** The MutatingWebhookConfiguration of manifests/webhook.yaml with this CA and failure policy. */
function webhookConfiguration(ca: string, failurePolicy: 'Ignore' | 'Fail'): Record<string, unknown> {
  const docs = parseAllDocuments(readFileSync(join(manifests, 'webhook.yaml'), 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  const mwc = docs.find((d) => d['kind'] === 'MutatingWebhookConfiguration')!;
  const hooks = mwc['webhooks'] as Record<string, unknown>[];
  hooks[0]!['failurePolicy'] = failurePolicy;
  (hooks[0]!['clientConfig'] as Record<string, unknown>)['caBundle'] = Buffer.from(ca).toString('base64');
  return mwc;
}

function podYaml(
  name: string,
  labels: Record<string, string>,
  node = 'node-1',
  annotations: Record<string, string> = {},
): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const a = Object.entries(annotations)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ');
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\n  labels: {${l}}\n  annotations: {${a}}\nspec:\n  nodeName: ${node}\n  containers:\n  - {name: c, image: busybox}\n`;
}

/** The ValidatingWebhookConfiguration of manifests/webhook.yaml, with `ca` as its caBundle. */
function validatingConfiguration(ca: string): Record<string, unknown> {
  const docs = parseAllDocuments(readFileSync(join(manifests, 'webhook.yaml'), 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  const vwc = docs.find((d) => d['kind'] === 'ValidatingWebhookConfiguration')!;
  for (const h of vwc['webhooks'] as Record<string, unknown>[])
    (h['clientConfig'] as Record<string, unknown>)['caBundle'] = Buffer.from(ca).toString('base64');
  return vwc;
}

type StoredPod = {
  metadata?: { annotations?: Record<string, string> };
  spec?: {
    containers?: { resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }[];
  };
};

async function startWebhookWorld(options: { asServiceAccount?: boolean } = {}): Promise<{
  world: World;
  tls: TlsMaterial;
  kubectl: (args: readonly string[], stdin?: string) => ReturnType<typeof runKubectl>;
  run: ReturnType<World['spawnBin']>;
  port: () => number;
}> {
  let port = 0;
  const w = await startWorld(undefined, {
    resolveWebhookService: (ref) =>
      ref.namespace === 'kube-system' &&
      ref.name === 'vpc-resource-controller-webhook' &&
      ref.port === 443 &&
      port
        ? { host: '127.0.0.1', port }
        : undefined,
  });
  world = w;
  const tls = await selfSignedCertificate([WEBHOOK_HOST]);
  const certFile = join(w.scratchPath, 'tls.crt');
  const keyFile = join(w.scratchPath, 'tls.key');
  writeFileSync(certFile, tls.cert);
  writeFileSync(keyFile, tls.key, { mode: 0o600 });
  let kubeconfig: string | undefined;
  if (options.asServiceAccount) {
    // As deployed: the manifests' ServiceAccount and RBAC, the program authenticating with its token.
    const rbac = await runKubectl(debianKubectl(), w.kubeconfigPath, `${w.kubeconfigPath}.cache`, [
      'apply',
      '-f',
      join(manifests, 'rbac.yaml'),
    ]);
    if (rbac.code !== 0) throw new Error(rbac.stderr);
    kubeconfig = join(w.scratchPath, 'controller.kubeconfig');
    writeFileSync(
      kubeconfig,
      w.kube.kubeconfig({ token: w.kube.mintServiceAccountToken('kube-system', 'vpc-resource-controller') }),
    );
  }
  const run = w.spawnBin(
    [
      '--webhook-bind-address',
      '127.0.0.1:0',
      '--webhook-cert-file',
      certFile,
      '--webhook-key-file',
      keyFile,
      '--branch-eni-cooldown',
      '1s',
    ],
    kubeconfig === undefined ? {} : { kubeconfig },
  );
  const line = await eventually(
    'the webhook serves',
    () => run.log.find((l) => l.includes('"serving the pod mutating webhook"')),
    20_000,
  );
  port = (JSON.parse(line) as { port: number }).port;
  const kubectl = (args: readonly string[], stdin?: string) =>
    runKubectl(debianKubectl(), w.kubeconfigPath, `${w.kubeconfigPath}.cache`, args, stdin);
  return { world: w, tls, kubectl, run, port: () => port };
}

describe('reviewPodAnnotation (the reference vpod.vpc.k8s.aws validation)', () => {
  const CONTROLLER = DEFAULT_ANNOTATION_WRITERS[0]!;
  const withEni = (value?: string) => ({
    metadata: {
      name: 'p',
      annotations: { other: 'x', ...(value === undefined ? {} : { 'vpc.amazonaws.com/pod-eni': value }) },
    },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });
  const ask = (operation: string, object: unknown, oldObject: unknown, username: string) =>
    reviewPodAnnotation(
      review(object, { operation, oldObject, userInfo: { username, groups: ['system:authenticated'] } }),
      DEFAULT_ANNOTATION_WRITERS,
    );
  const verdict = (a: ReturnType<typeof reviewPodAnnotation>) => {
    if (a.status !== 200) throw new Error(`not a 200: ${a.body}`);
    const r = a.body['response'] as {
      uid: string;
      allowed: boolean;
      status?: { code: number; message: string };
    };
    expect(r.uid).toBe('u-1');
    return r.allowed ? 'allowed' : `${r.status?.code} ${r.status?.message}`;
  };

  it('no one creates a pod with the annotation, the controller included; without it anyone may', () => {
    for (const user of ['alice', CONTROLLER])
      expect(verdict(ask('CREATE', withEni('[]'), null, user))).toBe(
        '403 pod cannot be created with vpc.amazonaws.com/pod-eni annotation',
      );
    expect(verdict(ask('CREATE', withEni(), null, 'alice'))).toBe('allowed');
  });

  it('only the controller adds, changes or removes it; other updates pass', () => {
    const cases: [string | undefined, string | undefined][] = [
      [undefined, '[{"eniId":"eni-1"}]'],
      ['[{"eniId":"eni-1"}]', '[{"eniId":"eni-2"}]'],
      ['[{"eniId":"eni-1"}]', undefined],
      [undefined, ''],
    ];
    for (const [before, after] of cases) {
      expect(verdict(ask('UPDATE', withEni(after), withEni(before), CONTROLLER))).toBe('allowed');
      expect(
        verdict(ask('UPDATE', withEni(after), withEni(before), 'system:serviceaccount:default:app')),
      ).toBe(
        '403 only vpc-resource-controller may set, change or remove the vpc.amazonaws.com/pod-eni annotation, not "system:serviceaccount:default:app"',
      );
    }
    // Unchanged (other fields change): anyone.
    expect(verdict(ask('UPDATE', withEni('[]'), withEni('[]'), 'alice'))).toBe('allowed');
    expect(verdict(ask('DELETE', null, withEni('[]'), 'alice'))).toBe('allowed');
  });

  it('a body that is not a review of a pod, or an update without its old object, is 400 with the reason', () => {
    expect(reviewPodAnnotation({ kind: 'AdmissionReview' }, DEFAULT_ANNOTATION_WRITERS)).toEqual({
      status: 400,
      body: 'expected an admission.k8s.io/v1 AdmissionReview',
    });
    expect(
      reviewPodAnnotation(
        review(withEni(), { operation: 'UPDATE', oldObject: null }),
        DEFAULT_ANNOTATION_WRITERS,
      ),
    ).toEqual({ status: 400, body: 'the AdmissionReview of an UPDATE has no request.oldObject' });
    expect(
      reviewPodAnnotation(
        review(withEni(), { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }),
        DEFAULT_ANNOTATION_WRITERS,
      ),
    ).toEqual({ status: 400, body: 'the AdmissionReview does not carry a Pod in request.object' });
  });
});

describe('the webhook end to end (kube-simulator → the program over HTTPS)', () => {
  it('a pod created by kubectl without any limit that a policy selects is stored with pod-eni, then annotated; others unchanged', async () => {
    const { world: w, tls, kubectl, run, port } = await startWebhookWorld();
    w.kube.objects.create(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      webhookConfiguration(tls.cert, 'Fail') as never,
    );
    w.policy();
    const created = await kubectl(['create', '-f', '-'], podYaml('client-1', { app: 'db-client' }));
    expect(created.stderr).toBe('');
    expect(created.stdout).toBe('pod/client-1 created\n');
    const stored = w.kube.objects.get('v1', 'pods', 'client-1', 'default') as StoredPod;
    expect(stored.spec?.containers?.[0]?.resources).toEqual({
      limits: { 'vpc.amazonaws.com/pod-eni': '1' },
      requests: { 'vpc.amazonaws.com/pod-eni': '1' },
    });
    await eventually('the branch annotation', () => w.annotation('client-1'), 20_000);
    expect(w.branches().map((b) => b.groups)).toEqual([[DB_CLIENT_SG]]);

    expect((await kubectl(['create', '-f', '-'], podYaml('web-1', { app: 'web' }))).stdout).toBe(
      'pod/web-1 created\n',
    );
    const plain = w.kube.objects.get('v1', 'pods', 'web-1', 'default') as StoredPod;
    expect(plain.spec?.containers?.[0]?.resources).toBeUndefined();

    // A malformed review sent straight to the webhook is a 400 with the reason, and the program lives on.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: port(),
          path: '/mutate-v1-pod',
          method: 'POST',
          ca: tls.cert,
          servername: WEBHOOK_HOST,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end('{"not": "a review"');
    });
    expect(answer).toEqual({ status: 400, body: 'the request body is not JSON\n' });
    expect(run.child.exitCode).toBeNull();
    expect(w.kube.requests.filter((r) => r.status >= 500)).toEqual([]);
  });

  it('the annotation validation: a forged vpc.amazonaws.com/pod-eni is refused with the webhook message; the controller (its ServiceAccount) annotates', async () => {
    const { world: w, tls, kubectl, run } = await startWebhookWorld({ asServiceAccount: true });
    w.kube.objects.create(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      webhookConfiguration(tls.cert, 'Fail') as never,
    );
    w.kube.objects.create(
      'admissionregistration.k8s.io/v1',
      'validatingwebhookconfigurations',
      validatingConfiguration(tls.cert) as never,
    );
    w.policy();
    // Created by someone else (kubectl as the administrator) with another pod's branch: refused, not stored.
    const stolen =
      '[{"eniId":"eni-0b5","ifAddress":"0a:00:00:00:00:b5","privateIp":"10.0.0.9","vlanId":1,"subnetCidr":"10.0.0.0/24"}]';
    const forged = await kubectl(
      ['create', '-f', '-'],
      podYaml('forger', { app: 'db-client' }, 'node-1', { 'vpc.amazonaws.com/pod-eni': stolen }),
    );
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toBe(
      `Error from server (Forbidden): error when creating "STDIN": admission webhook "${ANNOTATION_VALIDATION_WEBHOOK_NAME}" denied the request: pod cannot be created with vpc.amazonaws.com/pod-eni annotation\n`,
    );
    expect(w.kube.objects.get('v1', 'pods', 'forger', 'default')).toBeUndefined();

    // A selected pod: the controller's own patch, as system:serviceaccount:kube-system:vpc-resource-controller,
    // is allowed.
    expect((await kubectl(['create', '-f', '-'], podYaml('client-1', { app: 'db-client' }))).code).toBe(0);
    const annotation = await eventually('the branch annotation', () => w.annotation('client-1'), 20_000);
    expect(w.kube.requests.filter((r) => r.status >= 400 && r.url.includes('/pods/'))).toEqual([]);

    // Anyone else changing or removing it is refused; other annotations pass.
    const changed = await kubectl([
      'annotate',
      'pod',
      'client-1',
      '--overwrite',
      `vpc.amazonaws.com/pod-eni=${stolen}`,
    ]);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain(
      `admission webhook "${ANNOTATION_VALIDATION_WEBHOOK_NAME}" denied the request: only vpc-resource-controller may set, change or remove the vpc.amazonaws.com/pod-eni annotation, not "kube-sim:admin"`,
    );
    const removed = await kubectl(['annotate', 'pod', 'client-1', 'vpc.amazonaws.com/pod-eni-']);
    expect(removed.code).not.toBe(0);
    expect(w.annotation('client-1')).toBe(annotation);
    expect((await kubectl(['annotate', 'pod', 'client-1', 'team=shop'])).code).toBe(0);
    expect(run.log.some((l) => l.includes('"pod refused"') && l.includes('/validate-v1-pod'))).toBe(true);
  });

  it('with the webhook down: failurePolicy Fail refuses the create with the API server message, Ignore creates it without pod-eni', async () => {
    const { world: w, tls, kubectl, run } = await startWebhookWorld();
    w.policy();
    run.child.kill('SIGTERM');
    await new Promise((r) => run.child.once('exit', r));
    w.kube.objects.create(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      webhookConfiguration(tls.cert, 'Fail') as never,
    );
    const refused = await kubectl(['create', '-f', '-'], podYaml('client-2', { app: 'db-client' }));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /^Error from server \(InternalError\): error when creating "STDIN": Internal error occurred: failed calling webhook "mpod\.vpc\.k8s\.aws": failed to call webhook: Post "https:\/\/vpc-resource-controller-webhook\.kube-system\.svc:443\/mutate-v1-pod\?timeout=10s": /,
    );
    expect(w.kube.objects.get('v1', 'pods', 'client-2', 'default')).toBeUndefined();

    w.kube.objects.delete(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      'vpc-resource-controller',
    );
    w.kube.objects.create(
      'admissionregistration.k8s.io/v1',
      'mutatingwebhookconfigurations',
      webhookConfiguration(tls.cert, 'Ignore') as never,
    );
    expect((await kubectl(['create', '-f', '-'], podYaml('client-3', { app: 'db-client' }))).stdout).toBe(
      'pod/client-3 created\n',
    );
    const stored = w.kube.objects.get('v1', 'pods', 'client-3', 'default') as StoredPod;
    expect(stored.spec?.containers?.[0]?.resources).toBeUndefined();

    // The controller (running again) gives that pod no branch, as the reference: it does not request one. It says
    // so on the pod.
    await w.controller();
    const event = await eventually('the Warning event', () =>
      (
        w.kube.objects.list('v1', 'events', 'default') as {
          reason?: string;
          message?: string;
          type?: string;
        }[]
      ).find((e) => e.reason === 'BranchENINotRequested'),
    );
    expect(event).toMatchObject({ type: 'Warning' });
    expect(event.message).toMatch(
      /^a SecurityGroupPolicy selects this pod \(groups sg-\w+\) but it does not request vpc\.amazonaws\.com\/pod-eni/,
    );
    expect(w.annotation('client-3')).toBeUndefined();
    expect(w.branches()).toEqual([]);
  });

  it('a FIFO as the certificate stops the program at start with one line naming it (exit 1), not a start that waits', async () => {
    world = await startWorld();
    // The server read it with readFileSync, which waited for a writer (here one comes after 15 s).
    const fifo = fifoWithLateWriter(join(world.scratchPath, 'tls.crt'), 15_000);
    try {
      const started = performance.now();
      const run = world.spawnBin(['--webhook-bind-address', '127.0.0.1:0', '--webhook-cert-file', fifo.path]);
      const code = await new Promise<number | null>((r) => run.child.once('exit', r));
      expect(code).toBe(1);
      expect(run.stderr.join('')).toBe(
        `vpc-resource-controller: cannot serve the webhook: ${fifo.path} is a FIFO, not a regular file (hint: mount the serving certificate Secret, or pass --webhook-cert-file and --webhook-key-file)\n`,
      );
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      fifo.stop();
    }
  });

  it('a certificate it cannot read stops the program at start with one line and a hint (exit 1)', async () => {
    world = await startWorld();
    const missing = join(world.scratchPath, 'absent.crt');
    const run = world.spawnBin(['--webhook-bind-address', '127.0.0.1:0', '--webhook-cert-file', missing]);
    const code = await new Promise<number | null>((r) => run.child.once('exit', r));
    expect(code).toBe(1);
    expect(run.stderr.join('')).toBe(
      `vpc-resource-controller: cannot serve the webhook: cannot read ${missing}: ENOENT (hint: mount the serving certificate Secret, or pass --webhook-cert-file and --webhook-key-file)\n`,
    );
  });
});
