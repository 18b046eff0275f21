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
  startVirtualVpc,
  type VirtualVpc,
  VPC_ADDRESSES,
} from '@vpc-cni-kit/ec2-simulator';
import { netnsAdd, netnsDel } from '@vpc-cni-kit/netlink';
import { inNetns } from './exec.js';
import { ClusterKubeApi } from './kube-api.js';
import { type NodeLauncher, processLauncher } from './launcher.js';

const REGION = 'us-west-2';

/** Options for {@link Cluster.start}. */
export interface ClusterOptions {
  /** Number of nodes (default 2). */
  nodes?: number;
  /** Instance type (default m5.large: 3 ENIs × 10 IPv4, 29 pods). */
  instanceType?: string;
  /** Extra environment for every daemon (the reference's variables: WARM_IP_TARGET, …). */
  env?: Record<string, string>;
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
    ingress?: readonly { ipProtocol: string; cidrIpv4: string }[];
  }[];
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
        instances: Array.from({ length: count }, (_, i) => {
          const subnetId = net.nodeSubnets[i % net.nodeSubnets.length]!;
          return {
            instanceType: options.instanceType ?? 'm5.large',
            subnetId,
            ...(hasIpv6.has(subnetId) ? { ipv6AddressCount: 1 } : {}),
          };
        }),
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
    const nodes: ClusterNode[] = described.instances.map((instance, index) => {
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
        ...options.env,
      };
      mkdirSync(run, { recursive: true });
      return node;
    });
    const cluster = new Cluster(vpc, kube, nodes, options, workDir, runBase);
    try {
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
   * Creates a pod on node `i` through libcni (ADD of the whole conflist). Retries while the plugin answers
   * code 11 ("try again later"), as kubelet does, up to `retryForMs`.
   */
  async addPod(
    i: number,
    options: {
      name?: string;
      namespace?: string;
      retryForMs?: number;
      capabilityArgs?: unknown;
      /** Annotations of the Pod object (e.g. `vpc.amazonaws.com/pod-eni`, written as a controller would). */
      annotations?: Record<string, string>;
      /** Limits of its container (e.g. `vpc.amazonaws.com/pod-eni: "1"` for a branch-ENI pod). */
      limits?: Record<string, string>;
    } = {},
  ): Promise<ClusterPod> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const seq = this.podSeq++;
    const name = options.name ?? `pod-${i}-${seq}`;
    const netns = `vckpod-${this.vpc.runId}-${seq}`;
    const netnsPath = netnsAdd(netns);
    const pod = {
      name,
      namespace: options.namespace ?? 'default',
      netns,
      netnsPath,
      containerId: `c${this.vpc.runId}${seq.toString().padStart(4, '0')}`,
    };
    // As the scheduler and kubelet would: the Pod object exists, bound to the node, before its CNI ADD.
    this.kube.createPod(pod.namespace, pod.name, node.nodeName, {
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
    });
    const deadline = Date.now() + (options.retryForMs ?? 30_000);
    for (;;) {
      const r = await this.libcni(node, 'add', pod, options.capabilityArgs);
      const out = parseRunner(r.stdout, r.stderr);
      if (out.ok) {
        const result = out.result as { ips?: { address: string }[] };
        const address = result.ips?.[0]?.address.split('/')[0] ?? '';
        const created: ClusterPod = { ...pod, node: i, address, result: out.result };
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
  }

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
    await Promise.all(this.nodes.map((n) => this.stopDaemon(n.index, 'SIGTERM')));
    for (const n of this.nodes) await this.launcher.cleanup?.(n);
    await this.kube.close();
    await this.vpc.close();
    rmSync(this.workDir, { recursive: true, force: true });
    if (this.runBase !== undefined) rmSync(this.runBase, { recursive: true, force: true });
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
