/**
 * The cluster's Kubernetes API: one kube-simulator per cluster, reachable from every instance at
 * `https://203.0.113.10:443` (the simulated internet's API host, as an EKS public endpoint is), seeded with the
 * CRDs aws-node uses and aws-node's own RBAC manifest. The harness acts as the kubelet and the cloud
 * controller: it creates a Node per instance, the aws-node Pod per node and each test pod before its CNI ADD.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { DescribedInstance, VirtualVpcDescription } from '@vpc-cni-kit/ec2-simulator';
import {
  type KubeObject,
  type KubeSimulator,
  selfSignedCertificate,
  startKubeSimulator,
} from '@vpc-cni-kit/kube-simulator';
import { withNetnsSync } from '@vpc-cni-kit/netlink';
import { loadAll } from 'js-yaml';

/** Where the API server listens inside the VPC's internet namespace. */
export const KUBE_API_PORT = 443;

/** A file of this package (found through the package, so it works from a bundle too). */
function ownFile(...parts: string[]): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@vpc-cni-kit/cluster-harness/package.json')), ...parts);
}

function manifest(path: string): KubeObject[] {
  return (loadAll(readFileSync(path, 'utf8')) as KubeObject[]).filter(Boolean);
}

/** A manifest of the aws-node package (`manifests/<file>`). */
function awsNodeManifest(file: string): KubeObject[] {
  const require = createRequire(import.meta.url);
  return manifest(join(dirname(require.resolve('@vpc-cni-kit/aws-node/package.json')), 'manifests', file));
}

/** aws-node's RBAC manifest (ServiceAccount, ClusterRole, ClusterRoleBinding), from the aws-node package. */
export function awsNodeRbacManifest(): KubeObject[] {
  return awsNodeManifest('rbac.yaml');
}

/** A manifest of the vpc-resource-controller package (`manifests/<file>`). */
function controllerManifest(file: string): KubeObject[] {
  const require = createRequire(import.meta.url);
  return manifest(
    join(dirname(require.resolve('@vpc-cni-kit/vpc-resource-controller/package.json')), 'manifests', file),
  );
}

/** The ServiceAccount the VPC resource controller runs as (its own manifest's RBAC decides what it may do). */
export const CONTROLLER_SERVICE_ACCOUNT = {
  namespace: 'kube-system',
  name: 'vpc-resource-controller',
} as const;

/** The SecurityGroupPolicy API (`vpcresources.k8s.aws/v1beta1`, plural `securitygrouppolicies`). */
export const SGP_API = ['vpcresources.k8s.aws/v1beta1', 'securitygrouppolicies'] as const;

/** A SecurityGroupPolicy to create: which pods of `namespace` get a branch ENI with `groupIds`. */
export interface SecurityGroupPolicySpec {
  readonly namespace?: string;
  readonly name: string;
  /** `spec.podSelector.matchLabels`. */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `spec.serviceAccountSelector.matchLabels`. */
  readonly serviceAccountLabels?: Readonly<Record<string, string>>;
  readonly groupIds: readonly string[];
}

/** What a test pod's object says besides its name and node. */
export interface PodObjectOptions {
  /** Labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Annotations (e.g. `vpc.amazonaws.com/pod-eni`, written as the controller would). */
  readonly annotations?: Readonly<Record<string, string>>;
  /** `spec.serviceAccountName` (created in the namespace when missing). */
  readonly serviceAccountName?: string;
  /**
   * The first container's `resources.limits` (e.g. `vpc.amazonaws.com/pod-eni: "1"`, what the VPC resource
   * controller's webhook adds to a pod a SecurityGroupPolicy selects).
   */
  readonly limits?: Readonly<Record<string, string>>;
  /**
   * `metadata.ownerReferences`, as the pod's controller writes them (e.g. a Job's pod:
   * `{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }`).
   */
  readonly ownerReferences?: readonly PodOwnerReference[];
}

/** One entry of a pod's `metadata.ownerReferences` (Kubernetes' `OwnerReference`). */
export interface PodOwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  /** This owner is the pod's managing controller (at most one entry). */
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** The name EKS gives the Node of an instance (its private DNS name). */
export function nodeName(instance: DescribedInstance, region: string): string {
  return `ip-${instance.privateIp.replaceAll('.', '-')}.${region}.compute.internal`;
}

/** What a daemon needs to reach the API as aws-node. */
export interface DaemonKubeAccess {
  /** Environment for the daemon. */
  readonly env: Record<string, string>;
  /** The Node's name. */
  readonly nodeName: string;
  /** The aws-node pod's name. */
  readonly podName: string;
}

/** The controller's webhook Service (`kube-system/<name>`, manifests/webhook.yaml). */
export const CONTROLLER_WEBHOOK_SERVICE = 'vpc-resource-controller-webhook';

/** A cluster's API server and its splice into the VPC. */
export class ClusterKubeApi {
  #splice: Server | undefined;
  /** Availability zone by subnet id (the Node's `topology.kubernetes.io/zone`), known once opened in a VPC. */
  #zones = new Map<string, string>();

  private constructor(
    readonly sim: KubeSimulator,
    private readonly region: string,
    readonly address: string,
    private readonly webhook: { address: { host: string; port: number } | undefined },
  ) {}

  /**
   * Points the controller's webhook Service at `address` (its HTTPS server on this machine's loopback), with
   * `caPem` as the configuration's `caBundle` — the MutatingWebhookConfiguration of the controller's manifests,
   * created once. `undefined`: the Service has no endpoint (the controller is down), so the API server skips
   * the webhook (`failurePolicy: Ignore`) and pods are created without the pod-eni resource, as in EKS.
   */
  serveWebhookAt(address: { host: string; port: number } | undefined, caPem?: string): void {
    this.webhook.address = address;
    if (address === undefined || caPem === undefined) return;
    const plural = 'mutatingwebhookconfigurations';
    for (const obj of controllerManifest('webhook.yaml')) {
      if (obj.kind !== 'MutatingWebhookConfiguration') continue;
      const name = String(obj.metadata?.name);
      for (const w of obj.webhooks as { clientConfig: { caBundle?: string } }[])
        w.clientConfig.caBundle = Buffer.from(caPem).toString('base64');
      if (this.sim.objects.get('admissionregistration.k8s.io/v1', plural, name))
        this.sim.objects.delete('admissionregistration.k8s.io/v1', plural, name);
      this.sim.objects.create('admissionregistration.k8s.io/v1', plural, obj);
    }
  }

  /**
   * Starts the simulator (certificate for `address`, CRDs, aws-node's RBAC). Independent of the VPC, so it
   * can come up while the VPC does; {@link openIn} then makes it reachable from the instances.
   */
  static async start(address: string, region: string): Promise<ClusterKubeApi> {
    // The controller's webhook Service is reached wherever the controller serves it (serveWebhookAt).
    const webhook: { address: { host: string; port: number } | undefined } = { address: undefined };
    const sim = await startKubeSimulator({
      tls: await selfSignedCertificate([address]),
      resolveWebhookService: (ref) =>
        ref.namespace === 'kube-system' && ref.name === CONTROLLER_WEBHOOK_SERVICE
          ? webhook.address
          : undefined,
    });
    try {
      for (const obj of [
        ...manifest(ownFile('manifests', 'cninode-crd.yaml')),
        ...awsNodeManifest('eniconfig-crd.yaml'),
        ...awsNodeRbacManifest(),
        // The VPC resource controller's CRDs (SecurityGroupPolicy) and RBAC, as EKS installs them.
        ...controllerManifest('crds.yaml'),
        ...controllerManifest('rbac.yaml'),
      ]) {
        const [apiVersion, plural] = pluralOf(obj);
        sim.objects.create(apiVersion, plural, obj);
      }
    } catch (e) {
      await sim.close();
      throw e;
    }
    return new ClusterKubeApi(sim, region, address, webhook);
  }

  /** Listens on port 443 inside the VPC's internet namespace (which owns `address`), splicing to the simulator. */
  async openIn(vpc: VirtualVpcDescription): Promise<void> {
    this.#zones = new Map(vpc.subnets.map((sub) => [sub.subnetId, sub.availabilityZone]));
    const sockets = new Set<Socket>();
    const sim = this.sim;
    const splice = createServer((socket) => {
      const upstream = connect(sim.port, '127.0.0.1');
      sockets.add(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      socket.once('close', () => {
        sockets.delete(socket);
        upstream.destroy();
      });
      upstream.once('close', () => socket.destroy());
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    splice.on('close', () => {
      for (const s of sockets) s.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      splice.once('error', reject);
      // Bound to a port only: a host would be resolved asynchronously, outside the namespace switch.
      withNetnsSync(vpc.internet.netnsPath, () => splice.listen(KUBE_API_PORT));
      splice.once('listening', () => resolve());
    });
    this.#splice = splice;
  }

  /**
   * Registers an instance as the kubelet and cloud controller would (its Node, then the aws-node Pod on it),
   * writes a ServiceAccount token and CA into `dir` and returns the daemon's environment. In an IPv6 cluster
   * (`ipv6`) the Node's InternalIP is the instance's IPv6 address, as the kubelet reports it there.
   */
  registerNode(instance: DescribedInstance, dir: string, ipv6 = false): DaemonKubeAccess {
    const name = nodeName(instance, this.region);
    this.sim.objects.create('v1', 'nodes', {
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'node.kubernetes.io/instance-type': instance.instanceType,
          'topology.kubernetes.io/region': this.region,
          ...(this.#zones.has(instance.subnetId)
            ? { 'topology.kubernetes.io/zone': this.#zones.get(instance.subnetId)! }
            : {}),
        },
      },
      spec: { providerID: `aws:///${this.region}a/${instance.instanceId}` },
      status: {
        addresses: [
          { type: 'InternalIP', address: ipv6 ? (instance.ipv6 ?? instance.privateIp) : instance.privateIp },
          { type: 'Hostname', address: name },
        ],
      },
    });
    const podName = `aws-node-${instance.instanceId.slice(-5)}`;
    this.sim.objects.create('v1', 'pods', {
      metadata: { name: podName, namespace: 'kube-system', labels: { 'k8s-app': 'aws-node' } },
      spec: {
        nodeName: name,
        serviceAccountName: 'aws-node',
        hostNetwork: true,
        containers: [{ name: 'aws-node', image: 'vpc-cni-kit/aws-node' }],
      },
    });
    const saDir = join(dir, 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    writeFileSync(join(saDir, 'token'), this.sim.mintServiceAccountToken('kube-system', 'aws-node'), {
      mode: 0o600,
    });
    writeFileSync(join(saDir, 'ca.crt'), this.sim.caPem ?? '');
    writeFileSync(join(saDir, 'namespace'), 'kube-system');
    return {
      nodeName: name,
      podName,
      env: {
        KUBERNETES_SERVICE_HOST: this.address,
        KUBERNETES_SERVICE_PORT: String(KUBE_API_PORT),
        AWS_NODE_SERVICE_ACCOUNT_DIR: saDir,
        MY_NODE_NAME: name,
        MY_POD_NAME: podName,
      },
    };
  }

  /** Creates a namespace unless it exists. */
  ensureNamespace(namespace: string): void {
    if (!this.sim.objects.get('v1', 'namespaces', namespace))
      this.sim.objects.create('v1', 'namespaces', { metadata: { name: namespace } });
  }

  /** Creates a ServiceAccount (with labels, which a SecurityGroupPolicy's serviceAccountSelector matches) unless it exists. */
  ensureServiceAccount(namespace: string, name: string, labels: Record<string, string> = {}): void {
    this.ensureNamespace(namespace);
    if (!this.sim.objects.get('v1', 'serviceaccounts', name, namespace))
      this.sim.objects.create('v1', 'serviceaccounts', { metadata: { name, namespace, labels } });
  }

  /** Creates a SecurityGroupPolicy. */
  createSecurityGroupPolicy(policy: SecurityGroupPolicySpec): KubeObject {
    const namespace = policy.namespace ?? 'default';
    this.ensureNamespace(namespace);
    return this.sim.objects.create(SGP_API[0], SGP_API[1], {
      metadata: { name: policy.name, namespace },
      spec: {
        ...(policy.podLabels ? { podSelector: { matchLabels: { ...policy.podLabels } } } : {}),
        ...(policy.serviceAccountLabels
          ? { serviceAccountSelector: { matchLabels: { ...policy.serviceAccountLabels } } }
          : {}),
        securityGroups: { groupIds: [...policy.groupIds] },
      },
    });
  }

  /** The SecurityGroupPolicy objects of a namespace. */
  securityGroupPolicies(namespace: string): KubeObject[] {
    return this.sim.objects.list(SGP_API[0], SGP_API[1], namespace);
  }

  /** A pod object, if it exists. */
  pod(namespace: string, name: string): KubeObject | undefined {
    return this.sim.objects.get('v1', 'pods', name, namespace);
  }

  /** The Events about a pod, oldest first. */
  podEvents(
    namespace: string,
    name: string,
  ): { type: string; reason: string; message: string; source: string }[] {
    return this.sim.objects
      .list('v1', 'events', namespace)
      .filter((e) => {
        const o = (e as { involvedObject?: { kind?: string; name?: string } }).involvedObject;
        return o?.kind === 'Pod' && o.name === name;
      })
      .map((e) => {
        const ev = e as {
          type?: string;
          reason?: string;
          message?: string;
          note?: string;
          source?: { component?: string };
          reportingComponent?: string;
        };
        return {
          type: ev.type ?? '',
          reason: ev.reason ?? '',
          message: ev.message ?? ev.note ?? '',
          source: ev.source?.component ?? ev.reportingComponent ?? '',
        };
      });
  }

  /**
   * Creates a pod object bound to a node (before its CNI ADD, as the scheduler and kubelet do). While the VPC
   * resource controller serves its webhook, through the API server's HTTPS front so admission runs and the webhook
   * adds the pod-eni resource to a pod a SecurityGroupPolicy selects. Resolves with the pod as stored.
   */
  async createPod(
    namespace: string,
    name: string,
    node: string,
    options: PodObjectOptions = {},
  ): Promise<KubeObject> {
    this.ensureNamespace(namespace);
    if (options.serviceAccountName !== undefined)
      this.ensureServiceAccount(namespace, options.serviceAccountName);
    const pod = {
      metadata: {
        name,
        namespace,
        ...(options.labels ? { labels: { ...options.labels } } : {}),
        ...(options.annotations ? { annotations: { ...options.annotations } } : {}),
        ...(options.ownerReferences
          ? { ownerReferences: options.ownerReferences.map((r) => ({ ...r })) }
          : {}),
      },
      spec: {
        nodeName: node,
        ...(options.serviceAccountName !== undefined
          ? { serviceAccountName: options.serviceAccountName }
          : {}),
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.9',
            ...(options.limits
              ? { resources: { limits: { ...options.limits }, requests: { ...options.limits } } }
              : {}),
          },
        ],
      },
    };
    // Through HTTPS (and admission) while the controller's webhook serves; otherwise as the API server would
    // store it with the webhook skipped — directly, which also works while a test holds the API server down.
    if (this.webhook.address === undefined) return this.sim.objects.create('v1', 'pods', pod);
    return this.#post(`/api/v1/namespaces/${namespace}/pods`, pod);
  }

  /** POSTs `body` as the administrator; resolves with the answer, rejects with the API server's message. */
  #post(path: string, body: unknown): Promise<KubeObject> {
    const text = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.sim.url}${path}`,
        {
          method: 'POST',
          ca: this.sim.caPem,
          headers: {
            authorization: `Bearer ${this.sim.adminToken}`,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(text)),
          },
        },
        (res) => {
          let answer = '';
          res.setEncoding('utf8').on('data', (c: string) => {
            answer += c;
          });
          res.on('end', () => {
            const parsed = JSON.parse(answer) as KubeObject & { message?: string };
            if (res.statusCode === 201) resolve(parsed);
            else reject(new Error(`creating ${path}: HTTP ${res.statusCode}: ${parsed.message ?? answer}`));
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }

  /**
   * A kubeconfig (on this machine's loopback) holding a token of the VPC resource controller's ServiceAccount:
   * what the controller runs with here, so its own RBAC manifest decides what it may do.
   */
  controllerKubeconfig(): string {
    const { namespace, name } = CONTROLLER_SERVICE_ACCOUNT;
    return this.sim.kubeconfig({
      token: this.sim.mintServiceAccountToken(namespace, name),
      name: 'controller',
    });
  }

  /** Records a pod as running with its address (what the kubelet reports after a successful CNI ADD). */
  podRunning(namespace: string, name: string, ip: string, hostIp: string): void {
    this.sim.objects.patch(
      'v1',
      'pods',
      name,
      { status: { phase: 'Running', hostIP: hostIp, podIP: ip, podIPs: [{ ip }] } },
      namespace,
      'status',
    );
  }

  /** Deletes a pod object (after its CNI DEL); a missing one is fine. */
  deletePod(namespace: string, name: string): void {
    if (this.sim.objects.get('v1', 'pods', name, namespace))
      this.sim.objects.delete('v1', 'pods', name, namespace);
  }

  /** Stops the splice and the simulator. */
  async close(): Promise<void> {
    const splice = this.#splice;
    if (splice) await new Promise<void>((resolve) => splice.close(() => resolve()));
    await this.sim.close();
  }
}

function pluralOf(obj: KubeObject): [string, string] {
  const kinds: Record<string, string> = {
    CustomResourceDefinition: 'customresourcedefinitions',
    ServiceAccount: 'serviceaccounts',
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
    Role: 'roles',
    RoleBinding: 'rolebindings',
  };
  const plural = kinds[String(obj.kind)];
  if (!plural) throw new Error(`the cluster harness cannot seed a ${String(obj.kind)}`);
  return [String(obj.apiVersion), plural];
}
