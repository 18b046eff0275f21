import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type KubeSimulator,
  type KubeObject as SimObject,
  startKubeSimulator,
} from '@vpc-cni-kit/kube-simulator';
import { isSgpError, POD_ENI_ANNOTATION, POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { eventually, scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../src/config/config.js';
import { ConfigError } from '../src/config/env-reader.js';
import type { KubeSettings } from '../src/config/kube-settings.js';
import { CNINODE, ensureCniNode } from '../src/kube/cni-node.js';
import { readPodView } from '../src/kube/daemon-kube.js';
import { lookupEniConfig } from '../src/kube/eni-config.js';
import { httpsKubeApi } from '../src/kube/https-kube-api.js';
import { type InClusterTarget, resolveInCluster } from '../src/kube/in-cluster.js';
import { isKubeCallError, type KubeApi, KubeCallError } from '../src/kube/kube-api.js';
import { KubeSide } from '../src/kube/kube-side.js';
import {
  clearPodIpAnnotation,
  POD_IPS_ANNOTATION,
  setPodIpAnnotation,
} from '../src/kube/pod-ip-annotation.js';
import type { Logger } from '../src/log/logger.js';
import { recordingLogger } from './support/logger.js';

const dir = scratchDir('vck-aws-node-kube-');
let sim: KubeSimulator;
let target: InClusterTarget;
let api: KubeApi;
const NODE = 'ip-10-0-0-9.us-west-2.compute.internal';
const base = { AWS_VPC_K8S_PLUGIN_LOG_FILE: '/tmp/p.log' };

function settings(over: Partial<KubeSettings> = {}): KubeSettings {
  return {
    apiServer: sim.url,
    serviceAccountDir: dir.path,
    nodeName: NODE,
    podName: 'aws-node-abcde',
    podNamespace: 'kube-system',
    annotatePodIp: true,
    ...over,
  };
}

/** Every document of a YAML stream as plain objects. */
const loadAllYaml = (text: string): unknown[] => parseAllDocuments(text).map((d) => d.toJS() as unknown);

beforeAll(async () => {
  sim = await startKubeSimulator();
  const crd = loadAllYaml(
    readFileSync(
      join(
        import.meta.dirname,
        '..',
        '..',
        '..',
        'tools',
        'cluster-harness',
        'manifests',
        'cninode-crd.yaml',
      ),
      'utf8',
    ),
  )[0] as SimObject;
  sim.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', crd);
  const eniConfigCrd = loadAllYaml(
    readFileSync(join(import.meta.dirname, '..', 'manifests', 'eniconfig-crd.yaml'), 'utf8'),
  )[0] as SimObject;
  sim.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', eniConfigCrd);
  const plural: Record<string, string> = {
    ServiceAccount: 'serviceaccounts',
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
  };
  for (const o of loadAllYaml(
    readFileSync(join(import.meta.dirname, '..', 'manifests', 'rbac.yaml'), 'utf8'),
  ) as SimObject[])
    sim.objects.create(String(o.apiVersion), plural[String(o.kind)]!, o);
  sim.objects.create('v1', 'nodes', { metadata: { name: NODE } });
  sim.objects.create('v1', 'pods', {
    metadata: { name: 'aws-node-abcde', namespace: 'kube-system' },
    spec: { nodeName: NODE, containers: [{ name: 'aws-node', image: 'x' }] },
  });
  writeFileSync(join(dir.path, 'token'), sim.mintServiceAccountToken('kube-system', 'aws-node'));
  writeFileSync(join(dir.path, 'ca.crt'), sim.caPem!);
  const t = await resolveInCluster(settings());
  if (!('server' in t)) throw new Error(t.reason);
  target = t;
  api = httpsKubeApi(target, 2000);
});
afterAll(async () => {
  await sim?.close();
  dir.remove();
});

describe('Kubernetes settings', () => {
  it('builds the API URL from KUBERNETES_SERVICE_* or CLUSTER_ENDPOINT and accepts ANNOTATE_POD_IP', () => {
    const inCluster = loadConfig({
      ...base,
      KUBERNETES_SERVICE_HOST: '10.100.0.1',
      MY_NODE_NAME: NODE,
      ANNOTATE_POD_IP: 'true',
    });
    expect(inCluster.kube).toMatchObject({
      apiServer: 'https://10.100.0.1:443',
      nodeName: NODE,
      annotatePodIp: true,
      podNamespace: 'kube-system',
    });
    expect(
      loadConfig({
        ...base,
        KUBERNETES_SERVICE_HOST: 'x',
        CLUSTER_ENDPOINT: 'https://api.example.com/',
        MY_NODE_NAME: NODE,
      }).kube.apiServer,
    ).toBe('https://api.example.com');
    expect(loadConfig(base).kube.apiServer).toBeUndefined();
  });
  it.each([
    [{ ANNOTATE_POD_IP: 'true' }, 'ANNOTATE_POD_IP: needs the Kubernetes API'],
    [{ CLUSTER_ENDPOINT: 'http://api', MY_NODE_NAME: NODE }, 'CLUSTER_ENDPOINT: must be an https URL'],
    [
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: 'https', MY_NODE_NAME: NODE },
      'KUBERNETES_SERVICE_PORT: must be a port number',
    ],
    [{ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, 'MY_NODE_NAME: must name this node'],
    [
      { AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: 'true' },
      'AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: needs the Kubernetes API to read ENIConfigs',
    ],
  ])('refuses %j', (env, message) => {
    const err = (() => {
      try {
        loadConfig({ ...base, ...env });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.map((p) => `${p.variable}: ${p.problem}`).join('\n')).toContain(
      message,
    );
  });
  it('says why when the ServiceAccount files are missing', async () => {
    expect(await resolveInCluster(settings({ serviceAccountDir: join(dir.path, 'nope') }))).toEqual({
      reason: expect.stringMatching(/^ServiceAccount credentials unreadable in .*nope: ENOENT$/),
    });
  });
});

describe('CNINode', () => {
  afterEach(() => {
    if (sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE))
      sim.objects.delete('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE);
  });

  it('is created with the features, then left alone, then patched with new ones (as aws-node, through RBAC)', async () => {
    expect(await ensureCniNode(api, NODE, 'uid-1', [])).toBe('created');
    expect(await ensureCniNode(api, NODE, 'uid-1', [])).toBe('unchanged');
    sim.objects.patch('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE, {
      spec: { features: [{ name: 'Other' }] },
    });
    expect(await ensureCniNode(api, NODE, 'uid-1', [{ name: 'SecurityGroupsForPods' }])).toBe('patched');
    expect(sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE)!.spec).toEqual({
      features: [{ name: 'Other' }, { name: 'SecurityGroupsForPods' }],
    });
  });

  it('refuses a CNINode whose features are not {name, value?} as a typed error, and writes nothing over it', async () => {
    await ensureCniNode(api, NODE, undefined, []);
    const before = sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE);
    // The CRD's schema keeps such a CNINode out of this API server; one without it (or an older CRD) does not.
    for (const bad of [[null], ['SecurityGroupsForPods'], [{ name: 7 }], [{ name: 'x', value: 1 }], 'x']) {
      const skewed: KubeApi = {
        ...api,
        getClusterObject: async (r, name) => ({
          ...(await api.getClusterObject(r, name)),
          spec: { features: bad },
        }),
      };
      const patches = sim.requests.filter((r) => r.method === 'PATCH').length;
      const failed = await ensureCniNode(skewed, NODE, undefined, [{ name: 'SecurityGroupsForPods' }]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isKubeCallError(failed, 'Other'), String(failed)).toBe(true);
      expect((failed as Error).message).toMatch(new RegExp(`^CNINode ${NODE}: spec\\.features`));
      expect(sim.requests.filter((r) => r.method === 'PATCH').length).toBe(patches);
    }
    expect(sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE)).toEqual(before);
  });

  it('re-reads and retries when its optimistic-lock patch meets a concurrent change (409)', async () => {
    await ensureCniNode(api, NODE, undefined, []);
    let raced = false;
    const racing: KubeApi = {
      ...api,
      mergePatchClusterObject: async (r, name, patch) => {
        if (!raced) {
          raced = true;
          sim.objects.patch('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE, {
            spec: { features: [{ name: 'CustomNetworking', value: 'az-a' }] },
          });
        }
        return api.mergePatchClusterObject(r, name, patch);
      },
    };
    expect(await ensureCniNode(racing, NODE, undefined, [{ name: 'SecurityGroupsForPods' }])).toBe('patched');
    expect(sim.objects.get('vpcresources.k8s.aws/v1alpha1', 'cninodes', NODE)!.spec).toEqual({
      features: [{ name: 'CustomNetworking', value: 'az-a' }, { name: 'SecurityGroupsForPods' }],
    });
    expect(sim.requests.some((r) => r.method === 'PATCH' && r.status === 409)).toBe(true);
  });

  it('reports what RBAC refuses as Forbidden', async () => {
    await expect(api.getClusterObject({ ...CNINODE, plural: 'cninodes' }, 'x')).rejects.toMatchObject({
      code: 'NotFound',
    });
    const err = await api.getNode('other').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeCallError);
    expect((err as KubeCallError).code).toBe('NotFound');
    const denied = await api
      .getClusterObject(
        { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' },
        'cninodes.vpcresources.k8s.aws',
      )
      .catch((e: unknown) => e);
    expect(denied).toMatchObject({ code: 'Forbidden', status: 403 });
    expect((denied as Error).message).toBe(
      'customresourcedefinitions.apiextensions.k8s.io "cninodes.vpcresources.k8s.aws" is forbidden: User "system:serviceaccount:kube-system:aws-node" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope',
    );
    const invalid = await api.createEvent('default', { metadata: { name: 'e' } }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: 'Invalid', status: 422 });
  });
});

describe('pod IP annotation', () => {
  it('sets the annotation in one idempotent patch, and clears it only while it names the released address', async () => {
    sim.objects.create('v1', 'pods', {
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'x' }] },
    });
    const read = () =>
      (
        sim.objects.get('v1', 'pods', 'web', 'default')!.metadata!.annotations as
          | Record<string, string>
          | undefined
      )?.[POD_IPS_ANNOTATION];
    const web = { namespace: 'default', name: 'web' };
    expect(await setPodIpAnnotation(api, web, '10.0.0.20')).toBe(true);
    expect(read()).toBe('10.0.0.20');
    const rv = sim.objects.get('v1', 'pods', 'web', 'default')!.metadata!.resourceVersion;
    expect(await setPodIpAnnotation(api, web, '10.0.0.20')).toBe(true);
    expect(sim.objects.get('v1', 'pods', 'web', 'default')!.metadata!.resourceVersion).toBe(rv);
    expect(await clearPodIpAnnotation(api, web, '10.0.0.99')).toBe(false);
    expect(read()).toBe('10.0.0.20');
    expect(await clearPodIpAnnotation(api, web, '10.0.0.20')).toBe(true);
    expect(read()).toBe('');
    expect(await clearPodIpAnnotation(api, { namespace: 'default', name: 'gone' }, '10.0.0.20')).toBe(false);
    expect(await setPodIpAnnotation(api, { namespace: 'default', name: 'gone' }, '10.0.0.21')).toBe(false);
  });
});

describe('KubeSide', () => {
  function side(log: Logger, over: Partial<KubeSettings> = {}) {
    return new KubeSide({
      settings: settings(over),
      log,
      features: [],
      target,
      connect: async (t) => httpsKubeApi(t, 1000),
      now: () => Date.UTC(2026, 10, 24, 4, 0, 0),
      random: () => 0,
      sleep: (ms, signal) =>
        new Promise((r) => {
          const t = setTimeout(r, Math.min(ms, 50));
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(t);
              r();
            },
            { once: true },
          );
        }),
    });
  }

  it('emits one MissingIAMPermissions Event per action and interval, about its own pod', async () => {
    const log = recordingLogger();
    const k = side(log);
    k.start();
    const call = {
      service: 'ec2' as const,
      action: 'CreateNetworkInterface',
      latencyMs: 3,
      errorCode: 'UnauthorizedOperation',
      attempt: 1,
      throttledMs: 0,
    };
    k.onEc2Call(call);
    k.onEc2Call(call);
    k.onEc2Call({ ...call, errorCode: 'Throttling' });
    await eventually(
      'the Event',
      () => sim.objects.list('events.k8s.io/v1', 'events', 'kube-system').length > 0,
    );
    await eventually('drained', () => k.status().pending === 0);
    const events = sim.objects.list('events.k8s.io/v1', 'events', 'kube-system');
    expect(events).toHaveLength(1);
    const uid = sim.objects.get('v1', 'pods', 'aws-node-abcde', 'kube-system')!.metadata!.uid;
    expect(events[0]).toMatchObject({
      type: 'Warning',
      reason: 'MissingIAMPermissions',
      action: 'ec2:CreateNetworkInterface',
      reportingController: 'aws-node',
      reportingInstance: NODE,
      eventTime: '2026-11-24T04:00:00.000000Z',
      regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'kube-system', name: 'aws-node-abcde', uid },
    });
    await k.stop();
  });

  it('security groups for pods: reads a pod through RBAC and writes a rate-limited Warning Event about it', async () => {
    sim.objects.create('v1', 'namespaces', { metadata: { name: 'shop' } });
    sim.objects.create('v1', 'pods', {
      metadata: { name: 'db-client-0', namespace: 'shop', annotations: { [POD_ENI_ANNOTATION]: '[]' } },
      spec: {
        nodeName: NODE,
        containers: [{ name: 'app', image: 'x', resources: { limits: { [POD_ENI_RESOURCE]: '1' } } }],
      },
    });
    const k = side(recordingLogger());
    k.start();
    await eventually('connected', () => k.status().state === 'connected');
    expect(await readPodView(k, 'shop', 'db-client-0')).toEqual({
      annotations: { [POD_ENI_ANNOTATION]: '[]' },
      containerLimits: [{ [POD_ENI_RESOURCE]: '1' }],
    });
    const missing = await readPodView(k, 'shop', 'gone').catch((e: unknown) => e);
    expect(isSgpError(missing, 'POD_NOT_FOUND')).toBe(true);

    k.podEvent({ namespace: 'shop', name: 'db-client-0' }, 'PodEniNoTrunk', 'no trunk');
    k.podEvent({ namespace: 'shop', name: 'db-client-0' }, 'PodEniNoTrunk', 'no trunk');
    await eventually('the Event', () => sim.objects.list('events.k8s.io/v1', 'events', 'shop').length > 0);
    await eventually('drained', () => k.status().pending === 0);
    const events = sim.objects.list('events.k8s.io/v1', 'events', 'shop');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Warning',
      reason: 'PodEniNoTrunk',
      note: 'no trunk',
      reportingController: 'aws-node',
      reportingInstance: NODE,
      regarding: { kind: 'Pod', namespace: 'shop', name: 'db-client-0' },
    });
    await k.stop();
  });

  it('an Event whose note passes the API server limit (1024 bytes) is written cut with " ...", not refused', async () => {
    const log = recordingLogger();
    const k = side(log);
    k.start();
    // An ENIConfig's spec.subnet is free text the problem message quotes.
    const message = `ENIConfig "zone-a" spec.subnet is not a subnet id: "${'é'.repeat(3000)}"`;
    k.eniConfigProblem('EniConfigInvalid', message);
    const written = await eventually('the Event', () =>
      sim.objects
        .list('events.k8s.io/v1', 'events', 'kube-system')
        .find((e) => (e as { reason?: string }).reason === 'EniConfigInvalid'),
    );
    const note = (written as { note: string }).note;
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(note)).toBeGreaterThan(1000);
    expect(note.startsWith('ENIConfig "zone-a" spec.subnet is not a subnet id: "é')).toBe(true);
    expect(note.endsWith(' ...')).toBe(true);
    expect(note).not.toContain('\uFFFD');
    expect(log.lines.filter((l) => l.includes('not written'))).toEqual([]);
    await k.stop();
  });

  it('degrades while the API is unreachable, says so once, and catches up when it answers again', async () => {
    sim.objects.create('v1', 'pods', {
      metadata: { name: 'late', namespace: 'default' },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'x' }] },
    });
    await sim.suspend();
    const log = recordingLogger();
    const k = side(log);
    try {
      k.start();
      k.podAdded({ namespace: 'default', name: 'late' }, '10.0.0.30');
      await eventually('unreachable', () => k.status().state === 'unreachable');
      await new Promise((r) => setTimeout(r, 300));
      expect(log.lines.filter((l) => l.includes('Kubernetes API unreachable'))).toHaveLength(1);
      expect(k.status().pending).toBe(1);
    } finally {
      await sim.resume();
    }
    const resumedAt = Date.now();
    await eventually(
      'annotation',
      () =>
        (
          sim.objects.get('v1', 'pods', 'late', 'default')!.metadata!.annotations as
            | Record<string, string>
            | undefined
        )?.[POD_IPS_ANNOTATION] === '10.0.0.30',
      18_000,
    );
    expect(Date.now() - resumedAt).toBeLessThan(5000);
    expect(log.lines.some((l) => l.startsWith('info Kubernetes API reachable again'))).toBe(true);
    expect(k.status()).toMatchObject({ state: 'connected', cniNodeReady: true });
    await k.stop();
  });

  it('is off without a cluster, and ignores pods when ANNOTATE_POD_IP is off', async () => {
    const log = recordingLogger();
    const off = new KubeSide({
      settings: settings({ apiServer: undefined }),
      log,
      features: [],
      target: { reason: 'not in a cluster' },
      connect: () => Promise.reject(new Error('unused')),
      now: Date.now,
      random: Math.random,
      sleep: async () => {},
    });
    off.start();
    off.podAdded({ namespace: 'default', name: 'x' }, '10.0.0.1');
    expect(off.status()).toEqual({ state: 'off', cniNodeReady: false, pending: 0 });
    expect(log.lines[0]).toMatch(/^info Kubernetes API not used/);
    const quiet = side(recordingLogger(), { annotatePodIp: false });
    quiet.podAdded({ namespace: 'default', name: 'x' }, '10.0.0.1');
    expect(quiet.status().pending).toBe(0);
  });
});

describe('ENIConfig lookup (custom networking) through the RBAC of manifests/rbac.yaml', () => {
  const keys = { labelKey: 'topology.kubernetes.io/zone' };
  const ENICONFIG_API = 'crd.k8s.amazonaws.com/v1alpha1';
  afterEach(() => {
    for (const name of ['us-west-2a', 'broken', 'by-annotation']) {
      try {
        sim.objects.delete(ENICONFIG_API, 'eniconfigs', name);
      } catch {
        // not created by this test
      }
    }
    sim.objects.patch('v1', 'nodes', NODE, { metadata: { labels: null, annotations: null } });
  });

  it('finds the ENIConfig the zone label names; a missing one is EniConfigNotFound, a bad one EniConfigInvalid', async () => {
    sim.objects.patch('v1', 'nodes', NODE, {
      metadata: { labels: { 'topology.kubernetes.io/zone': 'us-west-2a' } },
    });
    expect(await lookupEniConfig(api, NODE, keys)).toMatchObject({
      ok: false,
      code: 'EniConfigNotFound',
      choice: { name: 'us-west-2a', source: 'label' },
    });
    sim.objects.create(ENICONFIG_API, 'eniconfigs', {
      metadata: { name: 'us-west-2a' },
      spec: { subnet: 'subnet-0a640000000000001', securityGroups: ['sg-0a640000000000001'] },
    });
    expect(await lookupEniConfig(api, NODE, keys)).toEqual({
      ok: true,
      choice: { name: 'us-west-2a', source: 'label' },
      spec: { subnet: 'subnet-0a640000000000001', securityGroups: ['sg-0a640000000000001'] },
    });
    sim.objects.create(ENICONFIG_API, 'eniconfigs', {
      metadata: { name: 'broken' },
      spec: { subnet: 'nope' },
    });
    sim.objects.patch('v1', 'nodes', NODE, {
      metadata: { labels: { 'vpc.amazonaws.com/externalEniConfig': 'broken' } },
    });
    expect(await lookupEniConfig(api, NODE, keys)).toMatchObject({
      ok: false,
      code: 'EniConfigInvalid',
      choice: { name: 'broken', source: 'external-label' },
    });
  });

  it('follows the annotation named by ENI_CONFIG_ANNOTATION_DEF over the label', async () => {
    sim.objects.create(ENICONFIG_API, 'eniconfigs', {
      metadata: { name: 'by-annotation' },
      spec: { subnet: 'subnet-0b640000000000001' },
    });
    sim.objects.patch('v1', 'nodes', NODE, {
      metadata: {
        labels: { 'topology.kubernetes.io/zone': 'us-west-2a' },
        annotations: { 'example.com/eni-config': 'by-annotation' },
      },
    });
    expect(await lookupEniConfig(api, NODE, { ...keys, annotationKey: 'example.com/eni-config' })).toEqual({
      ok: true,
      choice: { name: 'by-annotation', source: 'annotation' },
      spec: { subnet: 'subnet-0b640000000000001', securityGroups: [] },
    });
  });

  it('an annotation naming no possible ENIConfig ("..", "a/b", "Zone A") is EniConfigInvalid, naming its source, not an API failure', async () => {
    for (const name of ['..', 'a/b', 'Zone A']) {
      sim.objects.patch('v1', 'nodes', NODE, {
        metadata: { annotations: { 'k8s.amazonaws.com/eniConfig': name } },
      });
      const found = await lookupEniConfig(api, NODE, keys);
      expect(found).toMatchObject({
        ok: false,
        code: 'EniConfigInvalid',
        choice: { name, source: 'annotation' },
      });
      expect((found as { message: string }).message).toMatch(/is not an ENIConfig name/);
    }
  });
});
