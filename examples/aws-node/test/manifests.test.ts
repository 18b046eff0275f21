/**
 * The kustomize manifests (deploy/kustomize), rendered by Debian's kubectl 1.20 (`kubectl kustomize`, the
 * kustomize v2 a Debian 12 node has; newer ones read them too): the objects the reference's aws-k8s-cni.yaml
 * has, every command they run present in this package's build at the image's path (/app = this package),
 * and every environment value accepted by the daemon's configuration rules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { debianKubectl, runKubectl, scratchDir } from '@vpc-cni-kit/testkit';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { loadConfig } from '../src/config/config.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}
interface Container {
  name: string;
  image: string;
  command: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  livenessProbe?: { exec: { command: string[] }; initialDelaySeconds: number; timeoutSeconds: number };
  readinessProbe?: { exec: { command: string[] }; initialDelaySeconds: number; timeoutSeconds: number };
  securityContext?: { privileged?: boolean; capabilities?: { add: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
}

function renderText(dir: string): string {
  return execFileSync(debianKubectl(), ['kustomize', `${repo}/deploy/kustomize/${dir}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function render(dir: string): K8sObject[] {
  return parseAllDocuments(renderText(dir)).map((d) => d.toJS() as K8sObject);
}

function daemonSet(objects: K8sObject[]) {
  const ds = objects.find((o) => o.kind === 'DaemonSet');
  if (ds === undefined) throw new Error('no DaemonSet rendered');
  const pod = (ds.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
    initContainers: Container[];
    containers: Container[];
    volumes: { name: string; hostPath: { path: string; type?: string } }[];
    [k: string]: unknown;
  };
  return { ds, pod };
}

/** The container's literal environment, as the daemon would see it. */
function literalEnv(c: Container): Record<string, string> {
  return Object.fromEntries((c.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
}

/** A command's path in the image (/app = this package) mapped to this build. */
const inBuild = (path: string) => path.replace(/^\/app\//, `${packageDir}/`);

describe('kustomize manifests, rendered by Debian kubectl 1.20', () => {
  it('base: the reference objects, a DaemonSet with init container, probes, host paths and capabilities', () => {
    const objects = render('base');
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/aws-node',
      'ClusterRoleBinding/aws-node',
      'CustomResourceDefinition/cninodes.vpcresources.k8s.aws',
      'CustomResourceDefinition/eniconfigs.crd.k8s.amazonaws.com',
      'DaemonSet/aws-node',
      'ServiceAccount/aws-node',
    ]);
    const { ds, pod } = daemonSet(objects);
    expect(ds.metadata.namespace).toBe('kube-system');
    expect(pod).toMatchObject({
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      serviceAccountName: 'aws-node',
      terminationGracePeriodSeconds: 10,
      tolerations: [{ operator: 'Exists' }],
    });
    const [init] = pod.initContainers as [Container];
    const [daemon] = pod.containers as [Container];
    for (const c of [init, daemon]) expect(c.image).toBe('localhost/vpc-cni-kit/aws-node:dev');
    expect(init.securityContext?.privileged).toBe(true);
    expect(daemon.securityContext).toEqual({
      privileged: true,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'] },
    });
    const probe = [
      '/app/dist/bin/grpc-health-probe.cjs',
      '-addr=unix:///var/run/aws-node/ipamd.sock',
      '-connect-timeout=5s',
      '-rpc-timeout=5s',
    ];
    expect(daemon.livenessProbe).toEqual({
      exec: { command: probe },
      initialDelaySeconds: 60,
      timeoutSeconds: 10,
    });
    expect(daemon.readinessProbe).toEqual({
      exec: { command: probe },
      initialDelaySeconds: 1,
      timeoutSeconds: 10,
    });
    // Every program the manifest runs is in this build, where the image puts it.
    for (const path of [init.command[0], daemon.command[0], probe[0]] as string[])
      expect(existsSync(inBuild(path)), `${path} in the build`).toBe(true);
    // The reference's host paths, plus the runtime's network namespaces (the daemon plumbs pods).
    expect(Object.fromEntries(pod.volumes.map((v) => [v.name, v.hostPath.path]))).toEqual({
      'cni-bin-dir': '/opt/cni/bin',
      'cni-net-dir': '/etc/cni/net.d',
      'log-dir': '/var/log/aws-routed-eni',
      'run-dir': '/var/run/aws-node',
      'xtables-lock': '/run/xtables.lock',
      'netns-dir': '/var/run/netns',
    });
    expect(init.volumeMounts).toEqual([{ name: 'cni-bin-dir', mountPath: '/host/opt/cni/bin' }]);
    // The daemon's configuration accepts the manifest's environment, and its paths match the mounts.
    const config = loadConfig(literalEnv(daemon));
    expect(config).toMatchObject({ prefixDelegation: false, warmEniTarget: 1, eniMtu: 9001 });
    const mounts = (daemon.volumeMounts ?? []).map((m) => m.mountPath);
    for (const path of [config.hostCniBinPath, config.hostCniConfDirPath, config.logFile, config.socketPath])
      expect(
        mounts.some((m) => path.startsWith(`${m}/`) || path === m),
        `${path} on a mount`,
      ).toBe(true);
  });

  it('prefix-delegation overlay: the daemon is configured for /28 prefixes, nothing else changes', () => {
    const base = daemonSet(render('base'));
    const overlay = daemonSet(render('overlays/prefix-delegation'));
    const env = literalEnv(overlay.pod.containers[0] as Container);
    expect(env).toEqual({
      ...literalEnv(base.pod.containers[0] as Container),
      ENABLE_PREFIX_DELEGATION: 'true',
    });
    expect(loadConfig(env)).toMatchObject({ prefixDelegation: true, warmPrefixTarget: 1 });
  });

  it('security-groups-for-pods overlay: ENABLE_POD_ENI on aws-node plus the controller, applied by kubectl', async () => {
    const base = render('base');
    const objects = render('overlays/security-groups-for-pods');
    const names = (list: K8sObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    // Exactly the base's objects and the controller's (examples/vpc-resource-controller/manifests).
    const controllerObjects = render('../../examples/vpc-resource-controller/manifests');
    expect(names(objects)).toEqual([...names(base), ...names(controllerObjects)].sort());
    expect(names(controllerObjects)).toContain('Deployment/vpc-resource-controller');
    // aws-node: the base's environment plus the feature, in strict mode; the init container turns early demux off.
    const [baseInit] = daemonSet(base).pod.initContainers as [Container];
    const [baseDaemon] = daemonSet(base).pod.containers as [Container];
    const { pod } = daemonSet(objects);
    const [init] = pod.initContainers as [Container];
    const [daemon] = pod.containers as [Container];
    expect(literalEnv(daemon)).toEqual({
      ...literalEnv(baseDaemon),
      ENABLE_POD_ENI: 'true',
      POD_SECURITY_GROUP_ENFORCING_MODE: 'strict',
    });
    expect(literalEnv(init)).toEqual({ ...literalEnv(baseInit), DISABLE_TCP_EARLY_DEMUX: 'true' });
    // The daemon accepts it with what the kubelet adds: the API server's address and MY_NODE_NAME (fieldRef).
    const env = {
      ...literalEnv(daemon),
      KUBERNETES_SERVICE_HOST: '10.100.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      MY_NODE_NAME: 'ip-10-0-0-9.us-west-2.compute.internal',
    };
    expect(loadConfig(env).podEni).toMatchObject({ enabled: true, mode: 'strict' });
    // The controller runs its image (deploy/image/build.mjs --image vpc-resource-controller).
    const deployment = objects.find((o) => o.kind === 'Deployment') as K8sObject;
    const [controller] = (deployment.spec as { template: { spec: { containers: Container[] } } }).template
      .spec.containers as [Container];
    expect(controller.image).toBe('localhost/vpc-cni-kit/vpc-resource-controller:dev');
    expect(controller.command).toEqual(['node', '/app/dist/bin/vpc-resource-controller.cjs']);

    const dir = scratchDir('vck-manifests-');
    const sim = await startKubeSimulator({ tls: true });
    try {
      const admin = join(dir.path, 'admin.kubeconfig');
      writeFileSync(admin, sim.kubeconfig());
      // kube-simulator stores no Deployments (it runs nothing; the controller's image runs under containerd in
      // tools/cluster-harness/test/controller-image.privileged.test.ts): kubectl applies everything else.
      const stored = objects.filter((o) => o.kind !== 'Deployment');
      const applied = await runKubectl(
        debianKubectl(),
        admin,
        `${admin}.cache`,
        ['apply', '-f', '-'],
        stored.map((o) => stringify(o)).join('---\n'),
      );
      expect(applied.stderr).toBe('');
      const lines = applied.stdout.split('\n').filter(Boolean);
      expect(lines).toHaveLength(stored.length);
      for (const line of lines) expect(line).toMatch(/ created$/);
      const ds = sim.objects.get('apps/v1', 'daemonsets', 'aws-node', 'kube-system') as {
        spec: { template: { spec: { containers: Container[] } } };
      };
      expect(literalEnv(ds.spec.template.spec.containers[0] as Container)['ENABLE_POD_ENI']).toBe('true');
      const crd = 'securitygrouppolicies.vpcresources.k8s.aws';
      expect(sim.objects.get('apiextensions.k8s.io/v1', 'customresourcedefinitions', crd)).toBeDefined();
    } finally {
      await sim.close();
      dir.remove();
    }
  });

  it('applies to kube-simulator with kubectl; the ServiceAccount gets what the daemon uses and no more', async () => {
    const dir = scratchDir('vck-manifests-');
    const sim = await startKubeSimulator({ tls: true });
    try {
      const admin = join(dir.path, 'admin.kubeconfig');
      writeFileSync(admin, sim.kubeconfig());
      // A discovery cache per kubeconfig, taken after the CRDs exist for the ServiceAccount.
      const kubectl = (kubeconfig: string, args: readonly string[], stdin?: string) =>
        runKubectl(debianKubectl(), kubeconfig, `${kubeconfig}.cache`, args, stdin);
      const applied = await kubectl(admin, ['apply', '-f', '-'], renderText('base'));
      expect(applied.stderr).toBe('');
      expect(applied.stdout.split('\n').filter(Boolean).sort()).toEqual([
        'clusterrole.rbac.authorization.k8s.io/aws-node created',
        'clusterrolebinding.rbac.authorization.k8s.io/aws-node created',
        'customresourcedefinition.apiextensions.k8s.io/cninodes.vpcresources.k8s.aws created',
        'customresourcedefinition.apiextensions.k8s.io/eniconfigs.crd.k8s.amazonaws.com created',
        'daemonset.apps/aws-node created',
        'serviceaccount/aws-node created',
      ]);
      const ds = JSON.parse(
        (await kubectl(admin, ['get', 'ds', 'aws-node', '-n', 'kube-system', '-o', 'json'])).stdout,
      );
      expect(ds.spec.template.spec.serviceAccountName).toBe('aws-node');
      // With the ServiceAccount's token: its CNINode may be created and read, pods listed (the adaptive pool's
      // watch of its node's pods); ENIConfigs (no custom networking yet) and ConfigMaps may not be listed.
      const sa = join(dir.path, 'aws-node.kubeconfig');
      writeFileSync(sa, sim.kubeconfig({ token: sim.mintServiceAccountToken('kube-system', 'aws-node') }));
      const cninode =
        'apiVersion: vpcresources.k8s.aws/v1alpha1\nkind: CNINode\nmetadata:\n  name: ip-10-0-0-9\nspec:\n  features: []\n';
      expect((await kubectl(sa, ['create', '-f', '-'], cninode)).code).toBe(0);
      expect((await kubectl(sa, ['get', 'cninode', 'ip-10-0-0-9', '-o', 'name'])).stdout).toBe(
        'cninode.vpcresources.k8s.aws/ip-10-0-0-9\n',
      );
      expect(
        (await kubectl(sa, ['get', 'pods', '-A', '--field-selector', 'spec.nodeName=ip-10-0-0-9'])).code,
      ).toBe(0);
      for (const args of [
        ['get', 'eniconfigs'],
        ['get', 'configmaps', '-A'],
      ]) {
        const denied = await kubectl(sa, args);
        expect(denied.code, args.join(' ')).not.toBe(0);
        expect(denied.stderr, args.join(' ')).toContain('Forbidden');
      }
    } finally {
      await sim.close();
      dir.remove();
    }
  });
});
