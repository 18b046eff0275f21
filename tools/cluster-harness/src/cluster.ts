/**
 * A test and demo cluster on the virtual VPC: instances are network namespaces, each running `aws-node`
 * (and `aws-vpc-cni-init`) inside it; pods are namespaces created through a real libcni runtime running in the
 * instance's namespace, so our plugin is chained with Debian's portmap (and bandwidth) as on a real node.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { daemonClient, ServingStatus } from '@vpc-cni-kit/aws-node';
import {
  type DescribedInstance,
  type InstanceTypeSpec,
  startVirtualVpc,
  type VirtualVpc,
  VPC_ADDRESSES,
} from '@vpc-cni-kit/ec2-simulator';
import { parseIp } from '@vpc-cni-kit/ip-address';
import { netnsAdd, netnsDel } from '@vpc-cni-kit/netlink';
import { POD_ENI_ANNOTATION, POD_ENI_RESOURCE, parsePodEniAnnotation } from '@vpc-cni-kit/sgp-branch';
import {
  BRANCH_DESCRIPTION,
  EVENT_COMPONENT as CONTROLLER_COMPONENT,
  POD_UID_TAG,
} from '@vpc-cni-kit/vpc-resource-controller';
import { type ClusterDatabase, type DatabaseOptions, startDatabase } from './database.js';
import { inNetns } from './exec.js';
import { ClusterKubeApi, type PodOwnerReference } from './kube-api.js';
import { type NodeLauncher, processLauncher } from './launcher.js';
import { ResourceController, type ResourceControllerOptions } from './resource-controller.js';

const REGION = 'us-west-2';

/** Options for {@link Cluster.start}. */
export interface ClusterOptions {
  /** Number of nodes (default 2). */
  nodes?: number;
  /** Instance type (default m5.large: 3 ENIs × 10 IPv4, 29 pods). */
  instanceType?: string;
  /** Extra environment for every daemon (the reference's variables: WARM_IP_TARGET, …). */
  env?: Record<string, string>;
  /**
   * Per node (by index), what differs from the rest: its instance type, environment added to `env` (e.g. one
   * node in strict and one in standard `POD_SECURITY_GROUP_ENFORCING_MODE`).
   */
  perNode?: readonly ({ instanceType?: string; env?: Record<string, string> } | undefined)[];
  /**
   * Instance types added to the simulator's table (the scenario's `instanceTypes`), e.g. a small
   * trunking-compatible type whose branch limit a test can reach.
   */
  instanceTypes?: readonly InstanceTypeSpec[];
  /**
   * Security groups for pods: every daemon runs with `ENABLE_POD_ENI=true` (and this branch-link kind: the
   * virtual VPC's `macvlan`, ADR 0006) and the enforcing mode (`perNode` env may override it); start the VPC
   * resource controller with {@link Cluster.startController}.
   */
  podEni?: { mode?: 'strict' | 'standard' };
  /** A database instance in the first node subnet (not a node): see {@link ClusterDatabase}. */
  database?: DatabaseOptions;
  /** Directory holding `aws-node.cjs`, `aws-vpc-cni-init.cjs` and `aws-cni.cjs` (the package's dist/bin: `awsNodeBinDir()`). */
  binDir: string;
  /** Path of the libcni runner binary (tools/libcni-runner). */
  libcniRunner: string;
  /** Chain the bandwidth plugin too. */
  bandwidth?: boolean;
  /**
   * An IPv6 cluster: a dual-stack VPC ({@link DUAL_STACK_NETWORK} unless `network` is given), one IPv6 address
   * on each node, and every daemon in IPv6 mode (`ENABLE_IPv6=true`, `ENABLE_IPv4=false`,
   * `ENABLE_PREFIX_DELEGATION=true`; `env` may add to or override them).
   */
  ipv6?: boolean;
  /**
   * The VPC layout (default: 10.0.0.0/16 with one /20 in us-west-2a holding every node). Nodes go round-robin
   * over `nodeSubnets`; the other subnets (e.g. per-zone pod subnets in a secondary block) are only created.
   */
  network?: ClusterNetwork;
  /**
   * More subnets in the VPC, in the first subnet's zone, besides those of `network` (e.g. one tagged
   * `kubernetes.io/role/cni=0`).
   */
  extraSubnets?: { id: string; cidrBlock: string; tags?: Record<string, string> }[];
  /** Simulator options (rate limits, faults). */
  simulator?: Parameters<typeof startVirtualVpc>[0]['simulator'];
  /** Where node directories go (default: /tmp/vck-cluster-<run>). */
  workDir?: string;
  /**
   * A directory for every node's run directory (gRPC socket and checkpoint: what `/var/run/aws-node` holds on
   * a node), e.g. `/dev/shm` to run on a tmpfs as nodes do. Default: `run/` inside each node directory.
   */
  runDir?: string;
  /**
   * How each node's `aws-vpc-cni-init` and `aws-node` are started. Default: processes of this machine's Node
   * running `binDir` ({@link processLauncher}); `containerdLauncher` runs the container image instead.
   */
  launcher?: NodeLauncher;
}

/** A VPC layout for {@link ClusterOptions.network}. */
export interface ClusterNetwork {
  /** The VPC's IPv4 blocks, primary first. */
  vpcCidrs: readonly string[];
  /** The VPC's IPv6 /56, for a dual-stack VPC. */
  vpcIpv6Cidr?: string;
  /**
   * Every subnet (ids look like `subnet-0123456789abcdef0`); one with an IPv6 /64 gives the nodes launched in
   * it an IPv6 address.
   */
  subnets: readonly { id: string; cidrBlock: string; ipv6CidrBlock?: string; availabilityZone: string }[];
  /** The subnets nodes are launched in, round-robin. */
  nodeSubnets: readonly string[];
  /**
   * Security groups to create (`sg-…` ids), e.g. the pods' groups of an ENIConfig; a group named `default`
   * replaces the VPC's default group (the nodes' group).
   */
  securityGroups?: readonly {
    id: string;
    name: string;
    ingress?: readonly SecurityGroupRule[];
    egress?: readonly SecurityGroupRule[];
  }[];
}

/** A security-group rule of a {@link ClusterNetwork} group (the ec2-simulator scenario's). */
export interface SecurityGroupRule {
  /** `tcp`, `udp`, `icmp`, `-1` or a number. */
  ipProtocol: string;
  fromPort?: number;
  toPort?: number;
  /** The peer: a CIDR, or … */
  cidrIpv4?: string;
  /** … every address of every interface in this group. */
  referencedGroupId?: string;
}

const DEFAULT_NETWORK: ClusterNetwork = {
  vpcCidrs: ['10.0.0.0/16'],
  subnets: [{ id: 'subnet-0c000000000000001', cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' }],
  nodeSubnets: ['subnet-0c000000000000001'],
};

/** The dual-stack layout of IPv6 clusters: the default layout plus a /56 and a /64 from the documentation range. */
export const DUAL_STACK_NETWORK: ClusterNetwork = {
  vpcCidrs: ['10.0.0.0/16'],
  vpcIpv6Cidr: '2001:db8:c00::/56',
  subnets: [
    {
      id: 'subnet-0c000000000000001',
      cidrBlock: '10.0.0.0/20',
      ipv6CidrBlock: '2001:db8:c00:1::/64',
      availabilityZone: 'us-west-2a',
    },
  ],
  nodeSubnets: ['subnet-0c000000000000001'],
};

/** The daemon settings of IPv6 mode. */
const IPV6_ENV = { ENABLE_IPv6: 'true', ENABLE_IPv4: 'false', ENABLE_PREFIX_DELEGATION: 'true' };

/** One node: its instance and everything its daemon uses. */
export interface ClusterNode {
  index: number;
  instance: DescribedInstance;
  dir: string;
  socket: string;
  checkpoint: string;
  confDir: string;
  cniBinDir: string;
  cacheDir: string;
  logFile: string;
  daemon: ChildProcess | undefined;
  env: Record<string, string>;
  /** The instance's Node object name (`ip-10-0-0-5.us-west-2.compute.internal`). */
  nodeName: string;
  /** The aws-node pod's name (in kube-system). */
  awsNodePod: string;
}

/** A pod created through libcni. */
export interface ClusterPod {
  name: string;
  namespace: string;
  netns: string;
  netnsPath: string;
  node: number;
  containerId: string;
  address: string;
  result: unknown;
  /** Security groups for pods: the pod's branch ENI (from its `vpc.amazonaws.com/pod-eni` annotation), if it has one. */
  branch?: { eniId: string; vlanId: number; mac: string };
}

/** What a test pod is created with (its object, then the CNI ADD). */
export interface AddPodOptions {
  name?: string;
  namespace?: string;
  /** How long to retry ADD while the plugin answers code 11 ("try again later"), as kubelet does (ms, default 30 000). */
  retryForMs?: number;
  capabilityArgs?: unknown;
  /** The pod's labels (a SecurityGroupPolicy's podSelector matches them). */
  labels?: Record<string, string>;
  /** The pod's ServiceAccount (created when missing; a policy's serviceAccountSelector matches its labels). */
  serviceAccountName?: string;
  /** Annotations of the Pod object (e.g. `vpc.amazonaws.com/pod-eni`, written as a controller would). */
  annotations?: Record<string, string>;
  /**
   * Limits of its container (e.g. `vpc.amazonaws.com/pod-eni: "1"` for a branch-ENI pod); given, they replace
   * what the webhook would add, and the ADD does not wait for the controller.
   */
  limits?: Record<string, string>;
  /**
   * A pod that a SecurityGroupPolicy selects gets `vpc.amazonaws.com/pod-eni` in its limits (the webhook), and
   * its ADD waits until the controller decided (annotated it, or put a Warning Event on it; at most
   * `retryForMs`), as its sandbox waits for the scheduler in EKS. `false`: ADD at once.
   */
  awaitBranch?: boolean;
  /**
   * The Pod object already exists, bound to the node by {@link Cluster.bindPod} (`name` and `namespace` name
   * it): only the sandbox and the ADD are left, as when kubelet starts a pod the scheduler bound a while ago.
   */
  bound?: boolean;
}

/** A libcni failure (the plugin's CNI error, or libcni's own). */
export class PodError extends Error {
  constructor(
    readonly cniCode: number,
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = 'PodError';
  }
}

/** A running cluster. */
export class Cluster {
  readonly pods: ClusterPod[] = [];
  private podSeq = 0;
  /** The VPC resource controller, while one runs ({@link startController}). */
  controller: ResourceController | undefined;
  /** The database instance, with `ClusterOptions.database`. */
  database: ClusterDatabase | undefined;

  private constructor(
    readonly vpc: VirtualVpc,
    /** The cluster's Kubernetes API (kube-simulator) with its Nodes, pods and aws-node's RBAC. */
    readonly kube: ClusterKubeApi,
    readonly nodes: ClusterNode[],
    private readonly options: ClusterOptions,
    readonly workDir: string,
    private readonly runBase: string | undefined,
  ) {}

  /** Brings up the VPC, installs the plugin and starts a daemon on every node; resolves when all are healthy. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const count = options.nodes ?? 2;
    const net = options.network ?? (options.ipv6 ? DUAL_STACK_NETWORK : DEFAULT_NETWORK);
    const hasIpv6 = new Set(net.subnets.filter((s) => s.ipv6CidrBlock !== undefined).map((s) => s.id));
    const vpcUp = startVirtualVpc({
      scenario: {
        region: REGION,
        vpcs: [
          {
            id: 'vpc-0c000000000000001',
            cidrBlocks: net.vpcCidrs,
            ...(net.vpcIpv6Cidr ? { ipv6CidrBlock: net.vpcIpv6Cidr } : {}),
          },
        ],
        subnets: [
          ...net.subnets,
          ...(options.extraSubnets ?? []).map((s) => ({
            ...s,
            availabilityZone: net.subnets[0]?.availabilityZone ?? 'us-west-2a',
          })),
        ],
        ...(net.securityGroups ? { securityGroups: net.securityGroups } : {}),
        ...(options.instanceTypes ? { instanceTypes: options.instanceTypes } : {}),
        instances: [
          ...Array.from({ length: count }, (_, i) => {
            const subnetId = net.nodeSubnets[i % net.nodeSubnets.length]!;
            return {
              instanceType: options.perNode?.[i]?.instanceType ?? options.instanceType ?? 'm5.large',
              subnetId,
              ...(hasIpv6.has(subnetId) ? { ipv6AddressCount: 1 } : {}),
            };
          }),
          ...(options.database
            ? [
                {
                  instanceType: options.database.instanceType ?? 'm5.large',
                  subnetId: net.nodeSubnets[0]!,
                  securityGroupIds: [options.database.securityGroupId],
                  tags: { Name: 'database' },
                },
              ]
            : []),
        ],
      },
      ...(options.simulator ? { simulator: options.simulator } : {}),
    });
    // The API server comes up while the VPC does; it is opened inside the VPC once that exists.
    const kubeUp = ClusterKubeApi.start(VPC_ADDRESSES.ec2, REGION);
    const [vpcResult, kubeResult] = await Promise.allSettled([vpcUp, kubeUp]);
    if (vpcResult.status === 'rejected' || kubeResult.status === 'rejected') {
      if (vpcResult.status === 'fulfilled') await vpcResult.value.close();
      if (kubeResult.status === 'fulfilled') await kubeResult.value.close();
      throw vpcResult.status === 'rejected' ? vpcResult.reason : (kubeResult as PromiseRejectedResult).reason;
    }
    const vpc = vpcResult.value;
    const kube = kubeResult.value;
    const workDir = options.workDir ?? join('/tmp', `vck-cluster-${vpc.runId}`);
    const runBase =
      options.runDir === undefined ? undefined : join(options.runDir, `vck-cluster-${vpc.runId}`);
    const described = vpc.describe();
    try {
      await kube.openIn(described);
    } catch (e) {
      await kube.close();
      await vpc.close();
      throw e;
    }
    const nodeInstances = described.instances.slice(0, count);
    const nodes: ClusterNode[] = nodeInstances.map((instance, index) => {
      const dir = join(workDir, `node${index}`);
      const run = runBase === undefined ? join(dir, 'run') : join(runBase, `node${index}`);
      const node: ClusterNode = {
        index,
        instance,
        dir,
        socket: join(run, 'ipamd.sock'),
        checkpoint: join(run, 'ipam.json'),
        confDir: join(dir, 'net.d'),
        cniBinDir: join(dir, 'bin'),
        cacheDir: join(dir, 'cache'),
        logFile: join(dir, 'ipamd.log'),
        daemon: undefined,
        env: {},
        nodeName: '',
        awsNodePod: '',
      };
      const access = kube.registerNode(instance, dir, options.ipv6 === true);
      node.nodeName = access.nodeName;
      node.awsNodePod = access.podName;
      node.env = {
        PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        AWS_EC2_ENDPOINT: instance.ec2Endpoint,
        AWS_EC2_METADATA_SERVICE_ENDPOINT: instance.imdsEndpoint,
        AWS_ACCESS_KEY_ID: 'AKIDSIMULATOR',
        AWS_SECRET_ACCESS_KEY: 'simulator-secret',
        AWS_REGION: described.region,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_NODE_IPAMD_SOCKET: node.socket,
        AWS_VPC_K8S_CNI_BACKING_STORE: node.checkpoint,
        HOST_CNI_CONFDIR_PATH: node.confDir,
        HOST_CNI_BIN_PATH: node.cniBinDir,
        AWS_VPC_K8S_CNI_LOG_FILE: node.logFile,
        AWS_VPC_K8S_PLUGIN_LOG_FILE: join(dir, 'plugin.log'),
        AWS_VPC_K8S_CNI_LOGLEVEL: 'info',
        ...access.env,
        ...(options.ipv6 ? IPV6_ENV : {}),
        ...(options.podEni
          ? {
              ENABLE_POD_ENI: 'true',
              POD_SECURITY_GROUP_ENFORCING_MODE: options.podEni.mode ?? 'strict',
              AWS_NODE_BRANCH_LINK_KIND: 'macvlan',
            }
          : {}),
        ...options.env,
        ...options.perNode?.[index]?.env,
      };
      mkdirSync(run, { recursive: true });
      return node;
    });
    const cluster = new Cluster(vpc, kube, nodes, options, workDir, runBase);
    try {
      const db = described.instances[count];
      if (options.database && db !== undefined)
        cluster.database = await startDatabase(db, db.enis[0]!.eniId, options.database.port ?? 5432);
      await Promise.all(nodes.map((n) => cluster.initNode(n)));
      await Promise.all(nodes.map((n) => cluster.startDaemon(n.index)));
    } catch (e) {
      await cluster.close();
      throw e;
    }
    return cluster;
  }

  private get launcher(): NodeLauncher {
    this.#launcher ??= this.options.launcher ?? processLauncher(this.options.binDir);
    return this.#launcher;
  }
  #launcher: NodeLauncher | undefined;

  private async initNode(node: ClusterNode): Promise<void> {
    const r = await this.launcher.init(node);
    if (r.code !== 0)
      throw new Error(`aws-vpc-cni-init on node ${node.index} failed: ${r.stderr || r.stdout}`);
  }

  /**
   * Starts (or restarts) node `i`'s daemon and waits until it is healthy: its gRPC health check answers
   * SERVING and its conflist exists. A restart keeps the old conflist, as a runtime would.
   */
  async startDaemon(i: number, timeoutMs = 30_000): Promise<void> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const child = this.launcher.daemon(node);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    node.daemon = child;
    const deadline = Date.now() + timeoutMs;
    const healthy = async () => {
      if (!existsSync(join(node.confDir, '10-aws.conflist'))) return false;
      try {
        return (await daemonClient(node.socket, 1000).health()) === ServingStatus.SERVING;
      } catch {
        return false;
      }
    };
    while (!(await healthy())) {
      if (child.exitCode !== null)
        throw new Error(`aws-node on node ${i} exited (${child.exitCode}): ${stderr}\n${this.logTail(i)}`);
      if (Date.now() > deadline)
        throw new Error(`aws-node on node ${i} not healthy after ${timeoutMs} ms\n${this.logTail(i)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops node `i`'s daemon with `signal` (SIGTERM: graceful; SIGKILL: a crash) and waits for it to exit. */
  async stopDaemon(i: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.nodes[i]?.daemon;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    await exited;
  }

  /** The last lines of node `i`'s daemon log. */
  logTail(i: number, lines = 20): string {
    const file = this.nodes[i]?.logFile;
    if (file === undefined || !existsSync(file)) return '(no log)';
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  }

  private libcni(
    node: ClusterNode,
    command: string,
    pod: { netnsPath: string; containerId: string; name: string; namespace: string },
    capabilityArgs?: unknown,
  ) {
    const conflist = join(node.confDir, '10-aws.conflist');
    const args = `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_INFRA_CONTAINER_ID=${pod.containerId}`;
    return inNetns(
      node.instance.netnsPath,
      [
        this.options.libcniRunner,
        command,
        '-conflist',
        conflist,
        '-bin-dir',
        `${node.cniBinDir}:/usr/lib/cni`,
        '-cache-dir',
        node.cacheDir,
        '-netns',
        pod.netnsPath,
        '-id',
        pod.containerId,
        '-ifname',
        'eth0',
        '-args',
        args,
        '-cap-args',
        capabilityArgs === undefined ? '' : JSON.stringify(capabilityArgs),
      ],
      { env: node.env },
    );
  }

  /**
   * Creates a pod on node `i`: its object (labels, ServiceAccount; what a SecurityGroupPolicy selects gets the
   * pod-eni limit, as from the webhook), then ADD through libcni (the whole conflist). Retries while the plugin
   * answers code 11 ("try again later"), as kubelet does, up to `retryForMs`. A failed ADD is followed by DEL,
   * the pod's namespace and object go, and the plugin's error is thrown as a {@link PodError}.
   */
  async addPod(i: number, options: AddPodOptions = {}): Promise<ClusterPod> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const seq = this.podSeq++;
    const name = options.name ?? `pod-${i}-${seq}`;
    const netns = `vckpod-${this.vpc.runId}-${seq}`;
    const netnsPath = netnsAdd(netns);
    // Whatever fails from here on (the API server refusing the Pod, the controller never deciding, libcni itself)
    // takes the pod's namespace with it.
    try {
      const pod = {
        name,
        namespace: options.namespace ?? 'default',
        netns,
        netnsPath,
        containerId: `c${this.vpc.runId}${seq.toString().padStart(4, '0')}`,
      };
      // As the scheduler and kubelet would: the Pod object exists, bound to the node, before its CNI ADD.
      const labels = options.labels ?? {};
      if (options.serviceAccountName !== undefined)
        this.kube.ensureServiceAccount(pod.namespace, options.serviceAccountName);
      // The controller's webhook (when it runs) adds the pod-eni resource to a pod a policy selects.
      const existing = options.bound ? this.kube.pod(pod.namespace, pod.name) : undefined;
      if (options.bound && existing === undefined)
        throw new Error(`pod ${pod.namespace}/${pod.name} was not bound (bindPod) before its ADD`);
      const stored =
        existing ??
        (await this.kube.createPod(pod.namespace, pod.name, node.nodeName, {
          labels,
          ...(options.serviceAccountName !== undefined
            ? { serviceAccountName: options.serviceAccountName }
            : {}),
          ...(options.annotations ? { annotations: options.annotations } : {}),
          ...(options.limits ? { limits: options.limits } : {}),
        }));
      const firstContainer = (
        stored.spec as { containers?: { resources?: { limits?: Record<string, string> } }[] }
      )?.containers?.[0];
      const selected =
        options.limits === undefined ? firstContainer?.resources?.limits?.[POD_ENI_RESOURCE] : undefined;
      const deadline = Date.now() + (options.retryForMs ?? 30_000);
      if (selected !== undefined && options.awaitBranch !== false) {
        // Until the controller decided: annotated, or a Warning Event of its own on the pod (e.g. the trunk's
        // branch limit reached), after which the ADD shows what the node answers for such a pod.
        while (
          this.podEniAnnotation(pod.namespace, pod.name) === undefined &&
          !this.kube
            .podEvents(pod.namespace, pod.name)
            .some((e) => e.type === 'Warning' && e.source === CONTROLLER_COMPONENT)
        ) {
          if (Date.now() > deadline) {
            netnsDel(netns);
            this.kube.deletePod(pod.namespace, pod.name);
            throw new Error(
              `pod ${pod.namespace}/${pod.name} was not given a branch ENI within ${options.retryForMs ?? 30_000} ms (is the VPC resource controller running? ${this.controller?.running ? 'yes' : 'no'})`,
            );
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      for (;;) {
        const r = await this.libcni(node, 'add', pod, options.capabilityArgs);
        const out = parseRunner(r.stdout, r.stderr);
        if (out.ok) {
          const result = out.result as { ips?: { address: string }[] };
          const address = result.ips?.[0]?.address.split('/')[0] ?? '';
          const annotation = this.podEniAnnotation(pod.namespace, pod.name);
          const branch = annotation === undefined ? undefined : parseBranch(annotation);
          const created: ClusterPod = {
            ...pod,
            node: i,
            address,
            result: out.result,
            ...(branch ? { branch } : {}),
          };
          const hostIp = this.options.ipv6
            ? (node.instance.ipv6 ?? node.instance.privateIp)
            : node.instance.privateIp;
          this.kube.podRunning(pod.namespace, pod.name, address, hostIp);
          this.pods.push(created);
          return created;
        }
        if (out.error.code !== 11 || Date.now() > deadline) {
          // A failed ADD is followed by DEL, as a runtime does; then the namespace goes.
          await this.libcni(node, 'del', pod);
          netnsDel(netns);
          this.kube.deletePod(pod.namespace, pod.name);
          throw new PodError(out.error.code, out.error.msg, out.error.details);
        }
        await new Promise((r2) => setTimeout(r2, 500));
      }
    } catch (e) {
      if (existsSync(netnsPath)) netnsDel(netns);
      throw e;
    }
  }

  /**
   * Binds a pod to node `i` as the scheduler does: its Pod object (phase Pending, `spec.nodeName` set), and
   * nothing on the node yet — no sandbox, no CNI ADD. {@link addPod} with `bound: true` and the returned name
   * starts it later. `ownerReferences` as its controller (a Job, a ReplicaSet) would set them.
   */
  async bindPod(
    i: number,
    options: { namespace?: string; ownerReferences?: readonly PodOwnerReference[] } = {},
  ): Promise<{ namespace: string; name: string }> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const namespace = options.namespace ?? 'default';
    const name = `bound-${i}-${this.podSeq++}`;
    await this.kube.createPod(
      namespace,
      name,
      node.nodeName,
      options.ownerReferences ? { ownerReferences: options.ownerReferences } : {},
    );
    return { namespace, name };
  }

  /** A pod's `vpc.amazonaws.com/pod-eni` annotation, if it has one. */
  podEniAnnotation(namespace: string, name: string): string | undefined {
    const pod = this.kube.pod(namespace, name) as
      | { metadata?: { annotations?: Record<string, string> } }
      | undefined;
    return pod?.metadata?.annotations?.[POD_ENI_ANNOTATION];
  }

  /**
   * Starts the VPC resource controller (the built program, a process of this machine, stopped by its pid) and
   * waits until it acts. One at a time: a running one is stopped first.
   */
  async startController(
    options: Omit<ResourceControllerOptions, 'kubeconfigPath' | 'ec2Endpoint' | 'region'> = {},
  ): Promise<ResourceController> {
    await this.stopController();
    const d = this.vpc.describe();
    mkdirSync(this.workDir, { recursive: true });
    this.controller = await ResourceController.start(this.kube, {
      ...options,
      kubeconfigPath: join(this.workDir, 'controller.kubeconfig'),
      ec2Endpoint: d.ec2EndpointLocal,
      region: d.region,
    });
    return this.controller;
  }

  /** Stops the controller with `signal` (SIGTERM: graceful; SIGKILL: a crash); none running is fine. */
  async stopController(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.controller?.stop(signal);
  }

  /** Node `i`'s trunk ENI (attached), once the controller gave it one. */
  trunkOf(i: number): { eniId: string; mac: string; routerLink: string | undefined } | undefined {
    const instanceId = this.nodes[i]?.instance.instanceId;
    const eni = this.vpc.simulator.state
      .enis()
      .find((e) => e.interfaceType === 'trunk' && e.attachment?.instanceId === instanceId);
    if (eni === undefined) return undefined;
    const described = this.vpc
      .describe()
      .instances.find((x) => x.instanceId === instanceId)
      ?.enis.find((e) => e.eniId === eni.id);
    return { eniId: eni.id, mac: eni.mac, routerLink: described?.routerLink };
  }

  /** Waits until every node has its trunk ENI attached and plugged (the daemons asked through their CNINodes). */
  async waitForTrunks(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.nodes.every((n) => this.trunkOf(n.index)?.routerLink !== undefined)) {
      if (Date.now() > deadline)
        throw new Error(
          `not every node has a trunk ENI after ${timeoutMs} ms (nodes without: ${this.nodes
            .filter((n) => this.trunkOf(n.index) === undefined)
            .map((n) => n.index)
            .join(', ')}; controller ${this.controller?.running ? 'running' : 'not running'})`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The branch ENIs EC2 holds now (associated or not), with the pod UID they were made for. */
  branchEnis(): {
    eniId: string;
    subnetId: string;
    groups: string[];
    podUid: string | undefined;
    address: string;
  }[] {
    return this.vpc.simulator.state
      .enis()
      .filter((e) => e.description === BRANCH_DESCRIPTION)
      .map((e) => ({
        eniId: e.id,
        subnetId: e.subnetId,
        groups: [...e.groups],
        podUid: e.tags.get(POD_UID_TAG),
        address: e.privateIps[0]?.value ?? '',
      }));
  }

  /**
   * Runs `run` while counting the IPv4 packets the VPC router forwards between addresses `a` and `b` (either
   * way; counted before the security-group checks, so refused ones count too): what crossed the VPC between
   * them. The counter is a table of its own in the router namespace, removed afterwards.
   */
  async routerPackets<T>(
    a: string,
    b: string,
    run: () => Promise<T>,
  ): Promise<{ result: T; packets: number }> {
    for (const x of [a, b])
      if (parseIp(x)?.family !== 4) throw new Error(`not an IPv4 address: ${JSON.stringify(x)}`);
    const router = this.vpc.describe().router.netnsPath;
    const table = `vckcount${this.#counters++}`;
    const nft = async (...args: string[]) => {
      const r = await inNetns(router, ['nft', ...args]);
      if (r.code !== 0) throw new Error(`nft in the router namespace: ${r.stderr.trim()}`);
      return r.stdout;
    };
    await nft('add', 'table', 'ip', table);
    try {
      await nft(
        'add',
        'chain',
        'ip',
        table,
        'forwarded',
        '{ type filter hook forward priority -300; policy accept; }',
      );
      for (const [from, to] of [
        [a, b],
        [b, a],
      ] as const)
        await nft('add', 'rule', 'ip', table, 'forwarded', 'ip', 'saddr', from, 'ip', 'daddr', to, 'counter');
      const result = await run();
      const listed = JSON.parse(await nft('-j', 'list', 'table', 'ip', table)) as {
        nftables: { rule?: { expr: { counter?: { packets: number } }[] } }[];
      };
      const packets = listed.nftables
        .flatMap((o) => o.rule?.expr ?? [])
        .reduce((n, e) => n + (e.counter?.packets ?? 0), 0);
      return { result, packets };
    } finally {
      await nft('delete', 'table', 'ip', table);
    }
  }
  #counters = 0;

  /** Deletes a pod: libcni DEL (twice, the second without a netns, as containerd does), then its namespace. */
  async delPod(pod: ClusterPod): Promise<void> {
    const node = this.nodes[pod.node];
    if (node === undefined) return;
    const first = parseRunner((await this.libcni(node, 'del', pod)).stdout, '');
    if (!first.ok)
      throw new PodError(first.error.code, `DEL failed: ${first.error.msg}`, first.error.details);
    const second = parseRunner((await this.libcni(node, 'del', { ...pod, netnsPath: '' })).stdout, '');
    if (!second.ok)
      throw new PodError(second.error.code, `second DEL failed: ${second.error.msg}`, second.error.details);
    netnsDel(pod.netns);
    this.kube.deletePod(pod.namespace, pod.name);
    this.pods.splice(this.pods.indexOf(pod), 1);
  }

  /**
   * CNI CHECK of a pod through libcni with the node's conflist (the cached ADD result as prevResult): `ok`, or
   * the plugin's error.
   */
  async checkPod(
    pod: ClusterPod,
  ): Promise<{ ok: true } | { ok: false; error: { code: number; msg: string; details?: string } }> {
    const node = this.nodes[pod.node];
    if (node === undefined) throw new Error(`no node ${pod.node}`);
    const r = await this.libcni(node, 'check', pod);
    const out = parseRunner(r.stdout, r.stderr);
    return out.ok ? { ok: true } : { ok: false, error: out.error };
  }

  /** GET a path of node `i`'s introspection endpoint (from inside its namespace). */
  async introspect(i: number, path: string): Promise<unknown> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const r = await inNetns(node.instance.netnsPath, ['curl', '-sf', `http://127.0.0.1:61679${path}`]);
    if (r.code !== 0) throw new Error(`introspection ${path} on node ${i} failed (${r.code})`);
    return JSON.parse(r.stdout);
  }

  /** GET node `i`'s Prometheus metrics text. */
  async metrics(i: number): Promise<string> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    return (await inNetns(node.instance.netnsPath, ['curl', '-sf', 'http://127.0.0.1:61678/metrics'])).stdout;
  }

  /** Pings `target` from inside pod (or any namespace file) `fromNetnsPath`; true when a reply came back. */
  async ping(fromNetnsPath: string, target: string): Promise<boolean> {
    return (
      (await inNetns(fromNetnsPath, ['ping', '-c', '1', '-W', '2', target], { timeoutMs: 10_000 })).code === 0
    );
  }

  /** Stops every daemon, deletes every pod namespace, removes the VPC and the work and run directories. Idempotent. */
  async close(): Promise<void> {
    for (const pod of [...this.pods]) {
      try {
        netnsDel(pod.netns);
      } catch {
        // already gone
      }
    }
    this.pods.length = 0;
    await this.stopController('SIGTERM');
    await this.database?.stop();
    await Promise.all(this.nodes.map((n) => this.stopDaemon(n.index, 'SIGTERM')));
    for (const n of this.nodes) await this.launcher.cleanup?.(n);
    await this.kube.close();
    await this.vpc.close();
    rmSync(this.workDir, { recursive: true, force: true });
    if (this.runBase !== undefined) rmSync(this.runBase, { recursive: true, force: true });
  }
}

function parseBranch(annotation: string): ClusterPod['branch'] {
  try {
    const b = parsePodEniAnnotation(annotation, { family: 4 });
    return { eniId: b.eniId, vlanId: b.vlanId, mac: b.mac };
  } catch {
    return undefined;
  }
}

function parseRunner(
  stdout: string,
  stderr: string,
): { ok: true; result: unknown } | { ok: false; error: { code: number; msg: string; details?: string } } {
  try {
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    return { ok: false, error: { code: -1, msg: `libcni runner produced no result: ${stderr || stdout}` } };
  }
}
