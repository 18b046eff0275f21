/**
 * A cluster for the controller's tests: ec2-simulator (EC2 through the real SDK) and kube-simulator (the
 * Kubernetes API over HTTPS), with the SecurityGroupPolicy and CNINode CRDs, a Node and a CNINode per instance
 * (kube-simulator makes the `default` ServiceAccount of each namespace, as a cluster does).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Ec2Simulator, startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import {
  type KubeSimulator,
  startKubeSimulator,
  type WebhookServiceResolver,
} from '@vpc-cni-kit/kube-simulator';
import { POD_ENI_RESOURCE } from '@vpc-cni-kit/sgp-branch';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { parseAllDocuments } from 'yaml';
import {
  type ControllerMetrics,
  jsonLogger,
  type Logger,
  type RunningController,
  startController,
} from '../../src/index.js';

export const VPC = 'vpc-0a000000000000001';
export const SUBNET = 'subnet-0a000000000000001';
export const NODE_SG = 'sg-0a000000000000001';
export const DB_CLIENT_SG = 'sg-0b000000000000002';
export const CLUSTER = 'test-cluster';
/** A second subnet of the zone, for custom networking (ENIConfig). */
export const POD_SUBNET = 'subnet-0c000000000000003';
/** A group for ENIConfigs. */
export const POD_NET_SG = 'sg-0c000000000000003';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '../../../..');
export const BIN = join(here, '../../dist/bin/vpc-resource-controller.cjs');

/** An instance of the world: node name → instance id. */
export interface WorldNode {
  readonly name: string;
  readonly instanceId: string;
  readonly instanceType: string;
  /** Whether its CNINode asks for SecurityGroupsForPods. */
  readonly sgp: boolean;
}

/** The running world. */
export interface World {
  readonly ec2: Ec2Simulator;
  readonly kube: KubeSimulator;
  readonly kubeconfigPath: string;
  /** A scratch directory removed by {@link World.close}. */
  readonly scratchPath: string;
  readonly nodes: readonly WorldNode[];
  /** Starts a controller in this process. */
  controller(options?: {
    cooldownMs?: number;
    tickMs?: number;
    kubeconfig?: string;
    metrics?: ControllerMetrics;
    now?: () => number;
    log?: Logger;
  }): Promise<RunningController>;
  /** Spawns the built program with these extra arguments; its stdout log lines are collected. */
  spawnBin(
    args: readonly string[],
    options?: { kubeconfig?: string },
  ): { child: ChildProcess; log: string[]; stderr: string[] };
  /** Creates a SecurityGroupPolicy (default: the one selecting `app=db-client`). */
  policy(obj?: Record<string, unknown>): void;
  /**
   * Creates a pod on a node, its container requesting `vpc.amazonaws.com/pod-eni` as the pod webhook makes a
   * selected pod do (`requestsPodEni: false`: as admitted while the webhook was down, or not selected), running
   * as `serviceAccountName` (default: `default`).
   */
  pod(
    name: string,
    node: string,
    labels?: Record<string, string>,
    options?: { requestsPodEni?: boolean; serviceAccountName?: string },
  ): { uid: string };
  /** The branch ENIs EC2 holds (interfaces of description aws-k8s-branch-eni). */
  branches(): { id: string; subnetId: string; groups: string[]; podUid: string | undefined }[];
  /** The pod's `vpc.amazonaws.com/pod-eni` annotation. */
  annotation(name: string): string | undefined;
  close(): Promise<void>;
}

const DEFAULT_NODES: WorldNode[] = [
  { name: 'node-1', instanceId: 'i-0a000000000000001', instanceType: 'm5.large', sgp: true },
  { name: 'node-2', instanceId: 'i-0a000000000000002', instanceType: 'm5.large', sgp: true },
];

/** Options of {@link startWorld}. */
export interface WorldOptions {
  /** How kube-simulator reaches admission webhook Services. */
  readonly resolveWebhookService?: WebhookServiceResolver;
}

export async function startWorld(
  nodes: WorldNode[] = DEFAULT_NODES,
  options: WorldOptions = {},
): Promise<World> {
  const scratch = scratchDir('vpc-rc');
  const ec2 = await startEc2Simulator({
    rateLimits: false,
    scenario: {
      vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16'] }],
      subnets: [
        { id: SUBNET, cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' },
        { id: POD_SUBNET, cidrBlock: '10.0.64.0/20', availabilityZone: 'us-west-2a' },
      ],
      securityGroups: [
        { id: NODE_SG, name: 'node', description: 'nodes' },
        { id: DB_CLIENT_SG, name: 'db-client', description: 'pods that may reach the database' },
        { id: POD_NET_SG, name: 'pod-net', description: 'custom networking' },
      ],
      instances: nodes.map((n) => ({
        id: n.instanceId,
        instanceType: n.instanceType,
        subnetId: SUBNET,
        securityGroupIds: [NODE_SG],
      })),
    },
  });
  const kube = await startKubeSimulator(
    options.resolveWebhookService ? { resolveWebhookService: options.resolveWebhookService } : {},
  );
  const kubeconfigPath = join(scratch.path, 'kubeconfig');
  writeFileSync(kubeconfigPath, kube.kubeconfig());
  for (const file of [
    join(here, '../../manifests/crds.yaml'),
    join(repo, 'deploy/kustomize/base/crds.yaml'),
  ]) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const obj = doc.toJS() as Record<string, unknown> | null;
      if (obj?.['kind'] === 'CustomResourceDefinition')
        kube.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', obj as never);
    }
  }
  for (const n of nodes) {
    kube.objects.create('v1', 'nodes', {
      metadata: { name: n.name },
      spec: { providerID: `aws:///us-west-2a/${n.instanceId}` },
    } as never);
    kube.objects.create('vpcresources.k8s.aws/v1alpha1', 'cninodes', {
      metadata: { name: n.name },
      spec: { features: n.sgp ? [{ name: 'SecurityGroupsForPods' }] : [] },
    } as never);
  }
  const running: RunningController[] = [];
  const children: ChildProcess[] = [];
  return {
    ec2,
    kube,
    kubeconfigPath,
    scratchPath: scratch.path,
    nodes,
    async controller(options = {}) {
      const c = await startController({
        clusterName: CLUSTER,
        region: ec2.region,
        ec2Endpoint: ec2.endpoint,
        ec2Credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
        kubeconfig: options.kubeconfig ?? kubeconfigPath,
        cooldownMs: options.cooldownMs ?? 300,
        tickMs: options.tickMs ?? 100,
        nodeRetryMs: 100,
        log: options.log ?? jsonLogger(() => undefined),
        metrics: options.metrics,
        now: options.now,
      });
      running.push(c);
      return c;
    },
    spawnBin(args, options = {}) {
      const child = spawn(
        process.execPath,
        [
          BIN,
          '--cluster-name',
          CLUSTER,
          '--region',
          ec2.region,
          '--ec2-endpoint',
          ec2.endpoint,
          '--kubeconfig',
          options.kubeconfig ?? kubeconfigPath,
          // No metrics on the default :8080 unless a test asks (parallel tests, a shared machine).
          ...(args.some((a) => a.startsWith('--metrics-bind-address')) ? [] : ['--metrics-bind-address=0']),
          ...args,
        ],
        {
          env: {
            PATH: process.env['PATH'],
            AWS_ACCESS_KEY_ID: 'AKID',
            AWS_SECRET_ACCESS_KEY: 'secret',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      children.push(child);
      const log: string[] = [];
      const stderr: string[] = [];
      child.stdout?.setEncoding('utf8').on('data', (s: string) => log.push(...s.split('\n').filter(Boolean)));
      child.stderr?.setEncoding('utf8').on('data', (s: string) => stderr.push(s));
      return { child, log, stderr };
    },
    policy(obj = dbClientPolicy()) {
      kube.objects.create('vpcresources.k8s.aws/v1beta1', 'securitygrouppolicies', obj as never);
    },
    pod(name, node, labels = {}, options = {}) {
      const podEni = { [POD_ENI_RESOURCE]: '1' };
      const resources =
        options.requestsPodEni === false ? {} : { resources: { limits: podEni, requests: podEni } };
      const p = kube.objects.create('v1', 'pods', {
        metadata: { name, namespace: 'default', labels },
        spec: {
          nodeName: node,
          ...(options.serviceAccountName !== undefined
            ? { serviceAccountName: options.serviceAccountName }
            : {}),
          containers: [{ name: 'c', image: 'busybox', ...resources }],
        },
      } as never) as { metadata: { uid: string } };
      return { uid: p.metadata.uid };
    },
    branches() {
      return ec2.state
        .enis()
        .filter((e) => e.description === 'aws-k8s-branch-eni')
        .map((e) => ({
          id: e.id,
          subnetId: e.subnetId,
          groups: [...e.groups],
          podUid: e.tags.get('vpcresources.k8s.aws/pod-uid'),
        }));
    },
    annotation(name) {
      const p = kube.objects.get('v1', 'pods', name, 'default') as
        | { metadata?: { annotations?: Record<string, string> } }
        | undefined;
      return p?.metadata?.annotations?.['vpc.amazonaws.com/pod-eni'];
    },
    async close() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      for (const c of running) await c.stop();
      await kube.close();
      await ec2.close();
      scratch.remove();
    },
  };
}

/** The SecurityGroupPolicy selecting `app=db-client` in `default`. */
export function dbClientPolicy(groupIds: string[] = [DB_CLIENT_SG]): Record<string, unknown> {
  return {
    metadata: { name: 'db-client', namespace: 'default' },
    spec: { podSelector: { matchLabels: { app: 'db-client' } }, securityGroups: { groupIds } },
  };
}
