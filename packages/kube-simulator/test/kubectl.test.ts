import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { debianKubectl, runKubectl, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeSimulator, startKubeSimulator } from '../src/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const dir = scratchDir('vck-kubesim-kubectl-');
let sim: KubeSimulator;
let kubectlPath: string;
const admin = join(dir.path, 'admin.kubeconfig');
const cache = join(dir.path, 'cache');

const kubectl = (args: readonly string[], stdin?: string, kubeconfig = admin) =>
  runKubectl(kubectlPath, kubeconfig, cache, args, stdin);

async function ok(args: readonly string[], stdin?: string): Promise<string> {
  const r = await kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

beforeAll(async () => {
  kubectlPath = debianKubectl();
  sim = await startKubeSimulator({ tls: true });
  writeFileSync(admin, sim.kubeconfig());
});
afterAll(async () => {
  await sim?.close();
  dir.remove();
});

describe("Debian's kubectl 1.20 against kube-simulator", () => {
  it('lists the default namespaces and discovers every group', async () => {
    expect(await ok(['get', 'namespaces', '-o', 'name'])).toBe(
      'namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n',
    );
    const resources = await ok(['api-resources', '-o', 'name']);
    for (const r of [
      'pods',
      'nodes',
      'events.events.k8s.io',
      'leases.coordination.k8s.io',
      'daemonsets.apps',
      'clusterroles.rbac.authorization.k8s.io',
    ])
      expect(resources).toContain(r);
  });

  it('creates, applies (client-side, twice), labels, annotates, patches and deletes', async () => {
    const file = join(dir.path, 'cm.yaml');
    const manifest = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {tier: a}\ndata:\n  mode: "${v}"\n`;
    writeFileSync(file, manifest('one'));
    expect(await ok(['apply', '-f', file])).toBe('configmap/settings created\n');
    writeFileSync(file, manifest('two'));
    expect(await ok(['apply', '-f', file])).toBe('configmap/settings configured\n');
    expect(await ok(['apply', '-f', file])).toBe('configmap/settings unchanged\n');
    await ok(['label', 'configmap', 'settings', 'extra=yes']);
    await ok(['annotate', 'configmap', 'settings', 'note=hello']);
    await ok(['patch', 'configmap', 'settings', '--type', 'merge', '-p', '{"data":{"other":"x"}}']);
    await ok([
      'patch',
      'configmap',
      'settings',
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/data/other"}]',
    ]);
    const cm = JSON.parse(await ok(['get', 'configmap', 'settings', '-o', 'json']));
    expect(cm.data).toEqual({ mode: 'two' });
    expect(cm.metadata.labels).toEqual({ tier: 'a', extra: 'yes' });
    expect(cm.metadata.annotations.note).toBe('hello');
    expect(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"two"');
    const create = await kubectl(['create', '-f', file]);
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain('Error from server (AlreadyExists): error when creating');
    expect(await ok(['delete', 'configmap', 'settings'])).toBe('configmap "settings" deleted\n');
    const gone = await kubectl(['get', 'configmap', 'settings']);
    expect(gone.stderr).toContain('Error from server (NotFound): configmaps "settings" not found');
  });

  it('labels and annotates a node; strategic merge keeps list entries keyed by name', async () => {
    await ok(
      ['create', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-0-1.ec2.internal' } }),
    );
    await ok(['label', 'node', 'ip-10-0-0-1.ec2.internal', 'topology.kubernetes.io/zone=us-west-2a']);
    await ok(['annotate', 'node', 'ip-10-0-0-1.ec2.internal', 'k8s.amazonaws.com/eniConfig=us-west-2a']);
    const bad = await kubectl(['label', 'node', 'ip-10-0-0-1.ec2.internal', 'bad=value with spaces']);
    expect(bad.code).not.toBe(0);
    const node = JSON.parse(await ok(['get', 'node', 'ip-10-0-0-1.ec2.internal', '-o', 'json']));
    expect(node.metadata.labels['topology.kubernetes.io/zone']).toBe('us-west-2a');
    expect(node.metadata.annotations['k8s.amazonaws.com/eniConfig']).toBe('us-west-2a');

    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        nodeName: 'ip-10-0-0-1.ec2.internal',
        containers: [
          { name: 'a', image: 'nginx' },
          { name: 'b', image: 'busybox' },
        ],
      },
    };
    await ok(['create', '-f', '-'], JSON.stringify(pod));
    await ok(['patch', 'pod', 'web', '-p', '{"spec":{"containers":[{"name":"b","image":"busybox:2"}]}}']);
    const patched = JSON.parse(await ok(['get', 'pod', 'web', '-o', 'json']));
    expect(patched.spec.containers).toEqual([
      { name: 'a', image: 'nginx' },
      { name: 'b', image: 'busybox:2' },
    ]);
    const onNode = await ok([
      'get',
      'pods',
      '-A',
      '--field-selector',
      'spec.nodeName=ip-10-0-0-1.ec2.internal',
      '-o',
      'name',
    ]);
    expect(onNode).toBe('pod/web\n');
  });

  it('creates CRDs with apply and serves their custom objects as declared', async () => {
    for (const f of ['eniconfigs', 'cninodes', 'securitygrouppolicies'])
      await ok(['apply', '-f', join(fixtures, 'crds', `${f}.yaml`)]);
    await ok(['apply', '-f', join(fixtures, 'custom-objects.yaml')]);
    const eni = JSON.parse(await ok(['get', 'eniconfig', 'us-west-2a', '-o', 'json']));
    expect(eni.spec).toEqual({
      subnet: 'subnet-0123456789abcdef0',
      securityGroups: ['sg-0123456789abcdef0'],
    });
    expect(eni.metadata.generation).toBe(1);
    expect(await ok(['get', 'sgp', '-n', 'default', '-o', 'name'])).toBe(
      'securitygrouppolicy.vpcresources.k8s.aws/db-access\n',
    );
    const invalid = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'crd.k8s.amazonaws.com/v1alpha1',
        kind: 'ENIConfig',
        metadata: { name: 'nosubnet' },
        spec: {},
      }),
    );
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('spec.subnet: Required value');
    const tooMany = await kubectl([
      'patch',
      'sgp',
      'db-access',
      '-n',
      'default',
      '--type',
      'merge',
      '-p',
      '{"spec":{"securityGroups":{"groupIds":["a","b","c","d","e","f"]}}}',
    ]);
    expect(tooMany.stderr).toContain('spec.securityGroups.groupIds: Too many: 6: must have at most 5 items');
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'vpcresources.k8s.aws/v1alpha1',
        kind: 'CNINode',
        metadata: { name: 'ip-10-0-0-1.ec2.internal' },
        spec: { features: [{ name: 'SecurityGroupsForPods' }] },
      }),
    );
    const strategic = await kubectl([
      'patch',
      'cninode',
      'ip-10-0-0-1.ec2.internal',
      '-p',
      '{"spec":{"features":[]}}',
    ]);
    expect(strategic.stderr).toContain('UnsupportedMediaType');
    await ok([
      'patch',
      'cninode',
      'ip-10-0-0-1.ec2.internal',
      '--type',
      'merge',
      '-p',
      '{"spec":{"features":[{"name":"SecurityGroupsForPods"},{"name":"CustomNetworking","value":"us-west-2a"}]}}',
    ]);
    const cninode = JSON.parse(await ok(['get', 'cnd', 'ip-10-0-0-1.ec2.internal', '-o', 'json']));
    expect(cninode.spec.features).toHaveLength(2);
    expect(cninode.metadata.generation).toBe(2);
  });

  it('applies `kubectl kustomize DIR` output', async () => {
    const rendered = await ok(['kustomize', join(fixtures, 'kustomize')]);
    const out = await ok(['apply', '-f', '-'], rendered);
    expect(out.split('\n').filter(Boolean).sort()).toEqual([
      'clusterrole.rbac.authorization.k8s.io/agent created',
      'clusterrolebinding.rbac.authorization.k8s.io/agent created',
      'configmap/settings created',
      'daemonset.apps/agent created',
      'namespace/demo created',
      'serviceaccount/agent created',
    ]);
    const ds = JSON.parse(await ok(['get', 'daemonset', 'agent', '-n', 'demo', '-o', 'json']));
    expect(ds.metadata.labels['app.kubernetes.io/part-of']).toBe('kube-sim-test');
    expect(ds.spec.template.spec.containers[0].env).toEqual([{ name: 'MODE', value: 'fast' }]);
    expect(await ok(['apply', '-f', '-'], rendered)).toContain('daemonset.apps/agent unchanged');
  });

  it('refuses by RBAC what the ServiceAccount is not granted, and allows what it is', async () => {
    const token = sim.mintServiceAccountToken('demo', 'agent');
    const agent = join(dir.path, 'agent.kubeconfig');
    writeFileSync(agent, sim.kubeconfig({ token, namespace: 'demo' }));
    const nodes = await kubectl(['get', 'nodes', '-o', 'name'], undefined, agent);
    expect(nodes.stdout).toBe('node/ip-10-0-0-1.ec2.internal\n');
    const secrets = await kubectl(['delete', 'configmap', 'settings'], undefined, agent);
    expect(secrets.code).not.toBe(0);
    expect(secrets.stderr).toContain(
      'Error from server (Forbidden): configmaps "settings" is forbidden: User "system:serviceaccount:demo:agent" cannot delete resource "configmaps" in API group "" in the namespace "demo"',
    );
    const bad = join(dir.path, 'bad.kubeconfig');
    writeFileSync(bad, sim.kubeconfig({ token: 'not-a-token' }));
    const denied = await kubectl(['get', 'pods'], undefined, bad);
    expect(denied.stderr).toContain('Unauthorized');
  });

  it('watches pods with get -w', async () => {
    const child = spawn(kubectlPath, [
      '--kubeconfig',
      admin,
      '--cache-dir',
      cache,
      'get',
      'pods',
      '-n',
      'demo',
      '-w',
      '-o',
      'name',
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await new Promise((r) => setTimeout(r, 700));
      sim.objects.create('v1', 'pods', {
        metadata: { name: 'watched', namespace: 'demo' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      });
      const deadline = Date.now() + 10_000;
      while (!out.includes('pod/watched') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(out).toContain('pod/watched');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('reads the kubeconfig the CLI would write (https, CA data, token)', () => {
    const text = readFileSync(admin, 'utf8');
    expect(text).toContain('certificate-authority-data:');
    expect(text).toContain(`server: "${sim.url}"`);
  });
});
