/**
 * The kustomize manifests (examples/vpc-resource-controller/manifests), rendered by Debian's kubectl 1.20,
 * applied to kube-simulator with it, and the program run with the ServiceAccount token they grant: the RBAC is
 * exactly what the controller needs.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { debianKubectl, eventually, runKubectl, scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  ANNOTATION_VALIDATION_PATH,
  ANNOTATION_VALIDATION_WEBHOOK_NAME,
  DEFAULT_ANNOTATION_WRITERS,
  DEFAULT_WEBHOOK_CERT_DIR,
  POD_MUTATION_PATH,
  POD_MUTATION_WEBHOOK_NAME,
} from '../src/index.js';
import { POD_SUBNET, startWorld, type World } from './support/world.js';

const manifests = fileURLToPath(new URL('../manifests', import.meta.url));
const appRoot = fileURLToPath(new URL('..', import.meta.url));

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
};

async function render(): Promise<{ objects: Obj[] }> {
  const cache = scratchDir('vpc-rc-kubectl-');
  const r = await runKubectl(debianKubectl(), '/dev/null', cache.path, ['kustomize', manifests]).finally(() =>
    cache.remove(),
  );
  expect(r.code, r.stderr).toBe(0);
  return { objects: parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj) };
}

describe('vpc-resource-controller manifests, rendered by Debian kubectl 1.20', () => {
  it('render a Deployment of two electing replicas, its ServiceAccount, RBAC, the SecurityGroupPolicy CRD and the pod webhook', async () => {
    const { objects } = await render();
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/vpc-resource-controller',
      'ClusterRoleBinding/vpc-resource-controller',
      'CustomResourceDefinition/securitygrouppolicies.vpcresources.k8s.aws',
      'Deployment/vpc-resource-controller',
      'MutatingWebhookConfiguration/vpc-resource-controller',
      'Role/vpc-resource-controller-leader-election',
      'RoleBinding/vpc-resource-controller-leader-election',
      'Service/vpc-resource-controller-webhook',
      'ServiceAccount/vpc-resource-controller',
      'ValidatingWebhookConfiguration/vpc-resource-controller',
    ]);
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      serviceAccountName: string;
      containers: { command: string[]; args: string[]; image: string }[];
    };
    expect(deployment.spec?.['replicas']).toBe(2);
    expect(pod.serviceAccountName).toBe('vpc-resource-controller');
    const c = pod.containers[0]!;
    expect(c.image).toBe('localhost/vpc-cni-kit/vpc-resource-controller:dev');
    expect(c.args).toContain('--leader-elect');
    // The probes ask the port the program serves them on.
    expect(c.args).toContain('--health-probe-bind-address=:61779');
    const probes = c as unknown as {
      livenessProbe: { httpGet: { path: string; port: string } };
      readinessProbe: { httpGet: { path: string; port: string } };
      ports: { name: string; containerPort: number }[];
    };
    expect(probes.ports).toEqual([
      { name: 'healthz', containerPort: 61779 },
      { name: 'webhook-server', containerPort: 9443 },
      { name: 'metrics', containerPort: 8080 },
    ]);
    expect(c.args).toContain('--metrics-bind-address=:8080');
    // The webhook: served on the port the Service targets, with the certificate Secret mounted where the
    // program reads it by default, and the configuration pointing at that Service and the program's path.
    expect(c.args).toContain('--webhook-bind-address=:9443');
    const mounts = (c as unknown as { volumeMounts: { name: string; mountPath: string }[] }).volumeMounts;
    expect(mounts).toEqual([
      { name: 'webhook-cert', mountPath: `${DEFAULT_WEBHOOK_CERT_DIR}`, readOnly: true },
    ]);
    expect((pod as unknown as { volumes: unknown[] }).volumes).toEqual([
      {
        name: 'webhook-cert',
        secret: { secretName: 'vpc-resource-controller-webhook-cert', defaultMode: 0o444 },
      },
    ]);
    const service = objects.find((o) => o.kind === 'Service')!;
    expect(service.metadata.namespace).toBe('kube-system');
    expect(service.spec?.['ports']).toEqual([{ name: 'webhook', port: 443, targetPort: 'webhook-server' }]);
    const mwc = objects.find((o) => o.kind === 'MutatingWebhookConfiguration')! as unknown as {
      webhooks: { name: string; failurePolicy: string; clientConfig: { service: Record<string, unknown> } }[];
    };
    expect(mwc.webhooks.map((w) => [w.name, w.failurePolicy, w.clientConfig.service])).toEqual([
      [
        POD_MUTATION_WEBHOOK_NAME,
        'Ignore',
        { name: service.metadata.name, namespace: 'kube-system', path: POD_MUTATION_PATH, port: 443 },
      ],
    ]);
    // The annotation validation: CREATE and UPDATE of pods, the program's path, writable only by the
    // ServiceAccount the Deployment runs as (the program's default --annotation-writers).
    const vwc = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration')! as unknown as {
      webhooks: {
        name: string;
        failurePolicy: string;
        clientConfig: { service: Record<string, unknown> };
        rules: { operations: string[]; resources: string[] }[];
      }[];
    };
    expect(
      vwc.webhooks.map((w) => [w.name, w.failurePolicy, w.clientConfig.service, w.rules[0]?.operations]),
    ).toEqual([
      [
        ANNOTATION_VALIDATION_WEBHOOK_NAME,
        'Ignore',
        {
          name: service.metadata.name,
          namespace: 'kube-system',
          path: ANNOTATION_VALIDATION_PATH,
          port: 443,
        },
        ['CREATE', 'UPDATE'],
      ],
    ]);
    const sa = objects.find((o) => o.kind === 'ServiceAccount')!;
    expect(DEFAULT_ANNOTATION_WRITERS).toEqual([
      `system:serviceaccount:${sa.metadata.namespace}:${pod.serviceAccountName}`,
    ]);
    expect(probes.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'healthz' });
    expect(probes.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'healthz' });
    // The command names the program at the image's path (/app is this package).
    expect(c.command[1]?.startsWith('/app/')).toBe(true);
    expect(existsSync(join(appRoot, c.command[1]!.slice('/app/'.length)))).toBe(true);
  });

  it('applied with kubectl, the ServiceAccount token is enough to run the controller (least privilege that works)', async () => {
    world = await startWorld();
    // kube-simulator stores no Deployments (it runs nothing): apply everything else.
    const text = (await render()).objects
      .filter((o) => o.kind !== 'Deployment')
      .map((o) => stringify(o))
      .join('---\n');
    const admin = world.kubeconfigPath;
    const kubectl = (kubeconfig: string, args: readonly string[], stdin?: string) =>
      runKubectl(debianKubectl(), kubeconfig, `${kubeconfig}.cache`, args, stdin);
    const applied = await kubectl(admin, ['apply', '-f', '-'], text);
    expect(applied.code, applied.stderr).toBe(0);
    world.policy();
    // What the ConfigMap watch and custom networking need as well: the cooldown set, node-2 on an ENIConfig.
    world.kube.objects.create('v1', 'configmaps', {
      metadata: { name: 'amazon-vpc-cni', namespace: 'kube-system' },
      data: { 'branch-eni-cooldown': '45' },
    } as never);
    world.kube.objects.create('crd.k8s.amazonaws.com/v1alpha1', 'eniconfigs', {
      metadata: { name: 'pods' },
      spec: { subnet: POD_SUBNET },
    } as never);
    world.kube.objects.patch('v1', 'nodes', 'node-2', {
      metadata: { labels: { 'vpc.amazonaws.com/eniConfig': 'pods' } },
    });
    const sa = join(world.scratchPath, 'controller.kubeconfig');
    writeFileSync(
      sa,
      world.kube.kubeconfig({
        token: world.kube.mintServiceAccountToken('kube-system', 'vpc-resource-controller'),
      }),
    );
    const run = world.spawnBin(['--leader-elect', '--branch-eni-cooldown', '1s'], { kubeconfig: sa });
    world.pod('client-1', 'node-1', { app: 'db-client' });
    await eventually('annotated with the ServiceAccount token', () => world!.annotation('client-1'), 20_000);
    await eventually('capacity', () => {
      const n = world!.kube.objects.get('v1', 'nodes', 'node-1') as {
        status?: { capacity?: Record<string, string> };
      };
      return n.status?.capacity?.['vpc.amazonaws.com/pod-eni'] === '9';
    });
    await eventually('node-2 trunk in the ENIConfig subnet', () =>
      world!.ec2.state.enis().some((e) => e.interfaceType === 'trunk' && e.subnetId === POD_SUBNET),
    );
    await eventually('the ConfigMap cooldown', () => run.log.some((l) => l.includes('"cooldownMs":45000')));
    // Nothing it did was refused.
    const refused = world.kube.requests.filter((r) => r.status === 403);
    expect(refused).toEqual([]);
    expect(run.log.filter((l) => l.includes('"level":"warn"') || l.includes('"level":"error"'))).toEqual([]);
    // And it may not read what it does not need.
    const denied = await kubectl(sa, ['get', 'configmaps', '-A']);
    expect(denied.stderr).toContain('Forbidden');
    expect(
      (await kubectl(sa, ['-n', 'kube-system', 'get', 'configmap', 'kube-root-ca.crt'])).stderr,
    ).toContain('Forbidden');
    expect((await kubectl(sa, ['-n', 'kube-system', 'get', 'configmap', 'amazon-vpc-cni'])).code).toBe(0);
    run.child.kill('SIGTERM');
  });
});
