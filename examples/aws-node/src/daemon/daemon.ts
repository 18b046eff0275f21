import { createGroupCommitFileCheckpointer, Datastore, systemClock } from '@vpc-cni-kit/datastore';
import {
  allocationNodeOf,
  createEc2Api,
  createEniManager,
  createImdsNodeMetadata,
  createInstanceLimitsSource,
  type EniManager,
  ImdsClient,
  type ImdsEni,
  isEniManagerError,
  maxPods,
  type NodeInfo,
  publishedBranchLimit,
} from '@vpc-cni-kit/eni-manager';
import {
  detectBackend,
  ensureEgressRangeBlock,
  planSnat,
  processRunner,
  reconcileSnat,
} from '@vpc-cni-kit/iptables-snat';
import { planNodeRouting, type RoutingPlan, routeTableId } from '@vpc-cni-kit/routing-table';
import { planBranchNode } from '@vpc-cni-kit/sgp-branch';
import { type AwsNodeConfig, poolTargets } from '../config/config.js';
import { createKubeSide, createPodWatch, readPodView, reportPodsTo } from '../kube/daemon-kube.js';
import type { KubeSide } from '../kube/kube-side.js';
import type { PodWatch } from '../kube/pod-watch.js';
import { BRANCH_FAILURES } from '../rpc/branch-failures.js';
import type { RpcServer } from '../rpc/grpc-server.js';
import { BoundPods, noteAdds } from './bound-pods.js';
import { branchLedgerFile, heldBranchesOf } from './branch-pod-sources.js';
import { BranchPods } from './branch-pods.js';
import { checkingClientVersion } from './client-version.js';
import { checkConflistDir, egressConflistEntry, renderConflist, writeConflist } from './conflist.js';
import { connectionDrops } from './connection-drops.js';
import { customNetworking } from './custom-networking.js';
import { listenEarlyRpc } from './early-rpc.js';
import { guardEniManager, managedEniTags, NodeEnis } from './eni-classes.js';
import { FailureRing } from './failures.js';
import { collectStaleAttachments, gcInputOf, podReadiness } from './gc.js';
import { type Host, openHost } from './host.js';
import { type HttpEndpoint, introspectionServer, listenEarly, metricsServer } from './http-servers.js';
import { ipamBackend } from './ipam-backend.js';
import { adoptPrimaryIpv6, primaryIpv6Prefix, requireIpv6Subnet } from './ipv6-node.js';
import type { Logger } from './logger.js';
import { DaemonMetrics, type HttpEndpointName } from './metrics.js';
import { netnsGuard } from './netns-guard.js';
import { PoolLoop } from './pool-loop.js';
import { reconcileWithImds } from './reconcile.js';
import { restoreNode } from './restore.js';
import { readSavedState } from './saved-state.js';
import { checkSocketPath } from './socket-path.js';
import { StartError } from './start-error.js';
import { startVpcCidrRefresh } from './vpc-cidr-refresh.js';

/** A running daemon. */
export interface RunningDaemon {
  node: NodeInfo;
  datastore: Datastore;
  pool: PoolLoop;
  metrics: DaemonMetrics;
  rpc: RpcServer;
  introspection: HttpEndpoint | undefined;
  metricsEndpoint: HttpEndpoint | undefined;
  conflistPath: string;
  /**
   * The Kubernetes side (CNINode, Events, pod annotations); on the pod path only with security groups for pods
   * (a GET of the pod per ADD, ADR 0016).
   */
  kube: KubeSide;
  /** Security groups for pods (`ENABLE_POD_ENI`): the branch pods plumbed; `undefined` when off. */
  branchPods: BranchPods | undefined;
  /**
   * `WARM_POOL_POLICY=adaptive` with the Kubernetes API (`AWS_NODE_ADAPTIVE_POD_WATCH`): the watch of the pods
   * bound to this node and their count; `undefined` when off.
   */
  boundPods: { watch: PodWatch; pods: BoundPods } | undefined;
  /** Milliseconds from start to healthy (serving and conflist written). */
  startupMs: number;
  /** Graceful stop: no new EC2 mutations, in-flight work finishes, sockets closed. */
  stop(): Promise<void>;
}

/** Options for {@link startDaemon}. */
export interface StartOptions {
  log: Logger;
  /** The daemon's version (compared with the plugin's ClientVersion). */
  version: string;
  /** Pool loop period (the reference: about 5 s). */
  poolIntervalMs?: number;
  /** With prefix delegation, how long growth stays in /32s after EC2 had no free /28 (default 120 s). */
  prefixFallbackMs?: number;
  /** Period of the reconcile with IMDS (the reference: 60 s). */
  reconcileIntervalMs?: number;
  /** Period of the VPC CIDR refresh that re-applies SNAT when the VPC's blocks change (the reference: 30 s). */
  vpcCidrRefreshIntervalMs?: number;
  /**
   * How long start may wait for IMDS/EC2 to list the address of a pod that still runs before it decides
   * (see {@link restoreNode}). Default 10 s.
   */
  restoreConfirmMs?: number;
}

/**
 * Starts aws-node: what could stop the start is checked before the node is changed (the checkpoint read and
 * checked once, the gRPC socket and the HTTP ports bound early and answering UNAVAILABLE or 503 until the restore
 * is done, the CNI configuration directory; ADR 0034, 0035) → IMDS discovery → limits → host
 * network (primary ENI MTU, SNAT and connmark, fwmark rule) → existing ENIs set up → checkpoint restored and
 * validated against host veths → gRPC, metrics and introspection answer → pool loop → conflist written once
 * healthy. In IPv6 mode (`config.ipv6`): no SNAT or connmark (the IPv4 FORWARD block of the egress range
 * instead), one /80 on the primary ENI (assigned when missing), an IPv6 fwmark rule, and no pool loop,
 * reconcile, CIDR refresh or leaked-ENI cleanup, as the reference.
 */
export async function startDaemon(config: AwsNodeConfig, options: StartOptions): Promise<RunningDaemon> {
  // What start has opened so far, released newest first if a later step fails: a daemon that failed to
  // start holds no socket, server, timer or netlink handle, so its process exits.
  const opened: (() => unknown)[] = [];
  try {
    return await start(config, options, (release) => void opened.push(release));
  } catch (e) {
    for (const release of opened.reverse()) {
      try {
        await release();
      } catch {
        // releasing what is left matters more than why one release failed
      }
    }
    throw e;
  }
}

async function start(
  config: AwsNodeConfig,
  options: StartOptions,
  onFailure: (release: () => unknown) => void,
): Promise<RunningDaemon> {
  const started = performance.now();
  const { log } = options;
  const metrics = new DaemonMetrics();
  metrics.buildInfo.set({ version: options.version, goversion: process.version }, 1);
  // The last failures with their reasons, for `/v1/failures` and `aws-node status`.
  const failures = new FailureRing();
  // Kubernetes side (src/kube): created now so EC2's UnauthorizedOperation reaches it, started once serving.
  const kube = await createKubeSide(config.kube, log);
  // Started below (before the conflist with custom networking): a failed start stops its reconnect loop.
  onFailure(() => kube.stop());
  // Settings that cannot work without the API: refused with the reason the API cannot be used (the configuration
  // already refused them without an API server, so here it is the ServiceAccount's files).
  const kubeRequired = (setting: string, what: string) => {
    const t = kube.target;
    const why = 'reason' in t ? t.reason : 'not connected';
    return new StartError(
      'KubeRequired',
      `${setting} needs the Kubernetes API (${what}), which cannot be used: ${why}; ${
        config.kube.apiServer === undefined
          ? 'run in a cluster or set KUBERNETES_SERVICE_HOST/PORT'
          : 'mount the ServiceAccount token and ca.crt there (automountServiceAccountToken) or set AWS_NODE_SERVICE_ACCOUNT_DIR'
      }`,
    );
  };
  if (config.podEni.enabled && kube.status().state === 'off')
    throw kubeRequired('ENABLE_POD_ENI=true', "each pod's vpc.amazonaws.com/pod-eni annotation");
  if (config.customNetworking && kube.status().state === 'off')
    throw kubeRequired('AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG=true', 'ENIConfigs');
  const custom = config.customNetworking
    ? customNetworking({
        kube,
        nodeName: config.kube.nodeName,
        keys: { annotationKey: config.eniConfigAnnotationKey, labelKey: config.eniConfigLabelKey },
        log,
        now: () => Date.now(),
      })
    : undefined;
  // 0. Before anything on the node changes (ADR 0034, 0035): what the previous daemon left (the checkpoint, checked
  // for restore, and the branch-pod ledger beside it), the gRPC socket and the HTTP ports, taken now, and the CNI
  // configuration directory. A corrupt checkpoint, a file or a live server where the socket goes, a socket that
  // cannot be created, a port in use or a configuration directory that cannot be written then stops the start with
  // the node as it was. Until the restore is done, every gRPC call is answered UNAVAILABLE and the HTTP endpoints
  // answer 503.
  //
  // Group commit: one checkpoint write is shared by the concurrent ADDs/DELs it covers, each of which replies
  // only once its change is durable (see ipam-backend.ts). The write runs on the thread pool on a disk, and in
  // the call on tmpfs (the reference's /var/run/aws-node on most nodes), where nothing is flushed; pod plumbing
  // then need not give the event loop turns for the write to advance.
  const checkpointer = createGroupCommitFileCheckpointer(config.backingStorePath);
  const ledger = config.podEni.enabled ? branchLedgerFile(config.backingStorePath) : undefined;
  const saved = readSavedState(checkpointer, config.backingStorePath, ledger);
  await checkSocketPath(config.socketPath);
  const rpc = await listenEarlyRpc(config.socketPath);
  onFailure(() => rpc.close(0));
  checkConflistDir(config.hostCniConfDirPath);
  // Each endpoint holds at most HTTP_LIMITS.maxConnections; one over is closed, counted and (once a minute) warned.
  const drops = (endpoint: HttpEndpointName) => {
    metrics.httpConnectionsDropped(endpoint, 0);
    return connectionDrops(endpoint, log, () => metrics.httpConnectionsDropped(endpoint));
  };
  const introspection = config.introspection.enabled
    ? await listenEarly(
        config.introspection.bindAddress,
        'INTROSPECTION_BIND_ADDRESS',
        drops('introspection'),
      )
    : undefined;
  onFailure(() => introspection?.close());
  const metricsEndpoint = config.metrics.enabled
    ? await listenEarly(config.metrics.bindAddress, 'AWS_NODE_METRICS_BIND_ADDRESS', drops('metrics'))
    : undefined;
  onFailure(() => metricsEndpoint?.close());

  const hooks = {
    onCall: (e: Parameters<typeof metrics.onCall>[0]) => {
      metrics.onCall(e);
      kube.onEc2Call(e);
    },
  };

  // 1. Who am I.
  const imds = new ImdsClient({ ...(config.imdsEndpoint ? { endpoint: config.imdsEndpoint } : {}), hooks });
  const metadata = createImdsNodeMetadata(imds);
  const node = await metadata.discoverNode();
  log.info('node discovered', {
    instanceId: node.instanceId,
    instanceType: node.instanceType,
    localIpv4: node.localIpv4,
    ...(node.localIpv6 === undefined ? {} : { localIpv6: node.localIpv6 }),
    enis: node.enis.length,
  });
  if (config.ipv6) requireIpv6Subnet(node.primaryEni);

  // 2. Limits.
  const ec2 = createEc2Api({
    region: node.region,
    ...(config.ec2Endpoint ? { endpoint: config.ec2Endpoint } : {}),
    requestTimeoutMs: config.httpTimeoutSeconds * 1000,
    hooks,
    userAgent: `vpc-cni-kit-aws-node/${options.version}`,
  });
  onFailure(() => ec2.destroy());
  // The reference's published table first; DescribeInstanceTypes only for a type it does not list, and never
  // in IMDS-only mode, which makes no EC2 call at all.
  const limits = await createInstanceLimitsSource(config.imdsOnlyMode ? undefined : ec2, {
    publishedTable: true,
  })
    .limits(node.instanceType)
    .catch((e: unknown) => {
      if (!isEniManagerError(e, 'UnknownInstanceType')) throw e;
      throw new StartError(
        'UnknownInstanceType',
        `${e.message}; set ENABLE_IMDS_ONLY_MODE=false so DescribeInstanceTypes can be asked`,
      );
    });
  if (config.prefixDelegation && !limits.prefixDelegationSupported) {
    throw new StartError(
      'PrefixDelegationUnsupported',
      config.ipv6
        ? `ENABLE_IPv6=true needs prefix delegation, but ${node.instanceType} (hypervisor ${limits.hypervisor}) is neither Nitro nor bare metal: run IPv6 pods on Nitro instances`
        : `ENABLE_PREFIX_DELEGATION=true, but ${node.instanceType} (hypervisor ${limits.hypervisor}) is neither Nitro nor bare metal: EC2 delegates prefixes only there; unset it on this node`,
    );
  }
  if (config.podEni.enabled && !(limits.hypervisor === 'nitro' || limits.bareMetal)) {
    throw new StartError(
      'InstanceNotTrunkable',
      `ENABLE_POD_ENI=true, but ${node.instanceType} (hypervisor ${limits.hypervisor}) cannot carry a trunk ENI: security groups for pods need a Nitro or bare-metal type; unset ENABLE_POD_ENI on this node`,
    );
  }
  const family = config.ipv6 ? 6 : 4;
  const maxEnis = Math.min(limits.maxEnis, config.maxEni ?? limits.maxEnis);
  const podsMax = maxPods(limits, {
    prefixDelegation: config.prefixDelegation,
    customNetworking: config.customNetworking,
  });
  // IPv6 mode uses the primary ENI alone, and kubelet's max pods bounds its /80.
  if (config.ipv6) metrics.setLimits(1, podsMax);
  else metrics.setLimits(maxEnis, maxEnis * (limits.ipv4PerEni - 1) * (config.prefixDelegation ? 16 : 1));

  // 3. Host network.
  const host: Host = await openHost({ yieldDuringPlumbing: !checkpointer.inline });
  onFailure(() => host.close());
  const primaryIf = await host.linkByMac(node.primaryMac);
  await host.setMtu(primaryIf, config.eniMtu);
  let vpcCidrs: readonly string[] = [...node.primaryEni.vpcIpv4Cidrs];
  const runner = processRunner();
  // IPv6 mode has no SNAT or connmark: pods' /128s are routable VPC addresses.
  const backend = config.ipv6 ? undefined : await detectBackend(runner);
  if (backend) metrics.setConnmarkBackend(backend.connmarkBackend);
  const applySnat = async (cidrs: readonly string[]) => {
    if (backend === undefined) return;
    await reconcileSnat(
      { runner },
      planSnat({
        nodeIp: node.localIpv4,
        primaryInterface: primaryIf,
        vpcCidrs: cidrs,
        excludeSnatCidrs: config.excludeSnatCidrs,
        externalSnat: config.externalSnat,
        randomizeSnat: config.randomizeSnat,
        randomFullySupported: backend.randomFullySupported,
        nodePortSupport: config.nodePortSupport,
        vethPrefix: config.vethPrefix,
        connmark: config.connmark,
        connmarkBackend: backend.connmarkBackend,
      }),
    ).then(
      () => metrics.connmarkReconciled('success'),
      (e: unknown) => {
        metrics.connmarkReconciled('error');
        throw e;
      },
    );
  };
  await applySnat(vpcCidrs);
  // Pods' egress-cni addresses (169.254.172.0/22 in IPv6 mode, fd00::ac:00/118 with ENABLE_V6_EGRESS) must not
  // be reachable through the node, as the reference's SetupHostNetwork ensures.
  if (config.ipv6) await ensureEgressRangeBlock(runner, 4);
  else if (config.enableV6Egress) await ensureEgressRangeBlock(runner, 6);

  // 4. ENIs and the datastore.
  const datastore = new Datastore({
    clock: systemClock,
    checkpointer,
    prefixDelegation: config.prefixDelegation,
    family,
    cooldownMs: config.ipCooldownSeconds * 1000,
  });
  const eniPlans = new Map<string, RoutingPlan>();
  // Which attached ENIs are ours (the reference's classification, at start and at every reconcile): the
  // others never reach the datastore, host routing or the pool, and the guard refuses any EC2 change to them.
  const nodeEnis = new NodeEnis({
    policy: {
      instanceId: node.instanceId,
      primaryEniId: node.primaryEni.eniId,
      manageUntaggedEnis: config.manageUntaggedEni,
      clusterName: config.clusterName,
    },
    ...(config.imdsOnlyMode
      ? {}
      : {
          describeEnis: () => eni.describeEnis(),
          subnetTags: async (ids: readonly string[]) => {
            const out = await ec2.call('DescribeSubnets', { SubnetIds: [...ids] });
            return new Map(
              (out.Subnets ?? []).map((sn) => [
                sn.SubnetId ?? '',
                Object.fromEntries((sn.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
              ]),
            );
          },
        }),
    ...(config.disableNetworkResourceProvisioning
      ? {}
      : { tagEni: (id: string, tags: Readonly<Record<string, string>>) => eni.tagEni(id, tags) }),
    desiredTags: managedEniTags(node.instanceId, config.clusterName, config.additionalEniTags),
    log,
  });
  const eni: EniManager = guardEniManager(
    createEniManager({
      ec2,
      metadata,
      node: allocationNodeOf(node),
      ...(config.clusterName !== '' ? { clusterName: config.clusterName } : {}),
      additionalTags: config.additionalEniTags,
      subnetDiscovery: config.subnetDiscovery,
    }),
    nodeEnis,
  );
  // The adaptive pool's view of pods bound to this node that have not asked yet (ADR 0027): each change of
  // the count wakes the pool loop.
  const boundPods = config.adaptivePodWatch
    ? new BoundPods({
        nodeName: config.kube.nodeName,
        holding: () => {
          const keys = new Set<string>();
          for (const a of datastore.assignments())
            if (a.metadata.namespace && a.metadata.name)
              keys.add(`${a.metadata.namespace}/${a.metadata.name}`);
          return keys;
        },
        onChange: (counts) => {
          metrics.boundPods(counts);
          pool.wake();
        },
        log,
      })
    : undefined;
  const podWatch = boundPods ? createPodWatch(config.kube, kube, boundPods, log) : undefined;
  onFailure(() => podWatch?.stop());
  const pool = new PoolLoop({
    datastore,
    eni,
    targets: poolTargets(config),
    policy: config.warmPoolPolicy,
    ...(boundPods
      ? {
          bound: () => {
            const counts = boundPods.counts();
            metrics.boundPods(counts);
            return counts;
          },
        }
      : {}),
    limits: {
      maxEnis: limits.maxEnis,
      ipv4PerEni: limits.ipv4PerEni,
      maxPods: podsMax,
      ...(config.maxEni ? { maxEniSetting: config.maxEni } : {}),
      customNetworking: config.customNetworking,
      get unmanagedEnis() {
        return nodeEnis.unmanagedCount();
      },
      // Security groups for pods: the trunk's slot stays free until the trunk is attached (then it counts
      // among the unmanaged ENIs).
      get trunkReserve() {
        return config.podEni.enabled && nodeEnis.trunk() === undefined ? 1 : 0;
      },
    },
    ...(custom ? { eniTarget: () => custom.nextEniTarget() } : {}),
    now: () => Date.now(),
    log,
    observer: {
      decision: (d) => metrics.decision(d),
      adaptive: (targets, why) => metrics.adaptive(targets, why),
      prefixFallback: (active) => metrics.prefixFallback(active),
      actionStarted: (kind) => metrics.actionStarted(kind),
      actionEnded: (kind) => metrics.actionEnded(kind),
      actionFailed: (kind, code, reason) => {
        metrics.actionFailed(kind, code);
        failures.record({ source: 'pool', action: kind, code, reason });
      },
    },
    setupEni: async (e: ImdsEni) => {
      eniPlans.set(e.eniId, await host.setupEni(e, config.eniMtu));
    },
    teardownEni: async (eniId) => {
      const plan = eniPlans.get(eniId);
      if (plan !== undefined) await host.teardownEni(plan);
      eniPlans.delete(eniId);
    },
    routeTableId,
    prefixFallbackMs: options.prefixFallbackMs ?? config.prefixFallbackSeconds * 1000,
  });
  // 5. ENIs (IMDS, with EC2's addresses: IMDS lags EC2) and the checkpoint, validated against host veths: a
  // pod whose veth is gone was deleted while we were down; a live pod's address is never given to another.
  const links = await host.linkNames();
  // IPv6 mode: the primary ENI's one /80 (assigned now when missing) is the whole pool.
  const ipv6Prefix = config.ipv6
    ? await primaryIpv6Prefix({
        primary: node.primaryEni,
        ...(config.imdsOnlyMode
          ? {}
          : {
              describePrefixes: async () =>
                (await eni.describeEnis([node.primaryEni.eniId]))[0]?.ipv6Prefixes ?? [],
            }),
        ...(config.disableNetworkResourceProvisioning
          ? {}
          : { assignPrefix: () => eni.assignIpv6Prefixes(node.primaryEni.eniId, 1) }),
        log,
      })
    : undefined;
  const { report, enis: startEnis } = await restoreNode({
    datastore,
    checkpoint: saved.checkpoint,
    listImdsEnis: () => metadata.listEnis(),
    ...(config.imdsOnlyMode ? {} : { describeEnis: () => eni.describeEnis() }),
    selectManaged:
      ipv6Prefix === undefined
        ? (imds, seen) => nodeEnis.select(imds, seen)
        : async (imds) => imds.filter((e) => e.eniId === node.primaryEni.eniId),
    adoptEni: (e) =>
      ipv6Prefix === undefined
        ? pool.adoptEni(e)
        : Promise.resolve(adoptPrimaryIpv6(datastore, e, ipv6Prefix)),
    podExists: (entry) => {
      const { k8sPodNamespace: ns, k8sPodName: name } = entry.metadata;
      if (!ns || !name) return true; // the reference keeps entries without pod names (back-compat)
      return links.has(host.plumber.hostVethName(config.vethPrefix, ns, name));
    },
    confirmWaitMs: options.restoreConfirmMs ?? 10_000,
    retryMs: 500,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => performance.now(),
    log,
  });
  if (!config.ipv6)
    metrics.setUnmanaged(nodeEnis.unmanaged(), maxEnis, limits.ipv4PerEni, config.prefixDelegation);
  for (const d of report.dropped)
    log.warn('checkpoint entry dropped', {
      reason: d.reason,
      address: d.entry.ipv4 ?? d.entry.ipv6,
      containerID: d.entry.containerID,
    });
  // The restore rewrites the checkpoint; make that durable before serving.
  await datastore.flush().catch((e: unknown) => log.warn('checkpoint rewrite failed', { error: String(e) }));
  metrics.nodeInitialized((performance.now() - started) / 1000);
  log.info('checkpoint restored', {
    path: config.backingStorePath,
    found: report.found,
    restored: report.restored,
    dropped: report.dropped.length,
    writes: checkpointer.inline ? 'inline (memory-backed file system)' : 'thread pool',
  });

  // Node-level routing as one desired state: ENIs, every restored pod, the fwmark rule and external service
  // CIDRs. Its scope lets the reconcile delete rules and routes of pods dropped above. A daemon killed while
  // plumbing a pod can leave its host veth down: bring kept pods' veths up first (the runtime's retried ADD
  // re-plumbs the pod). A failure here is logged, never fatal: serving the other pods matters more.
  const enisByDevice = new Map(startEnis.map((e) => [e.eniId, e]));
  const restoredPods = datastore.assignments().flatMap((a) => {
    const e = enisByDevice.get(a.eniId);
    const table = e === undefined ? 254 : routeTableId(e.deviceNumber, e.networkCard);
    const { namespace, name } = a.metadata;
    return namespace && name
      ? [{ podIp: a.address, hostVeth: host.plumber.hostVethName(config.vethPrefix, namespace, name), table }]
      : [];
  });
  for (const pod of restoredPods) {
    await host
      .setUp(pod.hostVeth)
      .catch((e: unknown) =>
        log.warn('cannot bring a pod veth up', { veth: pod.hostVeth, error: String(e) }),
      );
  }
  // Security groups for pods: the node-wide settings (tcp_early_demux, the local rule in strict mode), and the
  // standard-mode branch pods already on the node, whose 512/1536 rules the reconcile below would otherwise own.
  const branchPodsOnNode = config.podEni.enabled ? await host.standardBranchPods() : [];
  if (config.podEni.enabled) {
    const plan = planBranchNode({
      disableTcpEarlyDemux: config.podEni.disableTcpEarlyDemux,
      mode: config.podEni.mode,
    });
    // tcp_early_demux belongs to aws-vpc-cni-init (the reference sets DISABLE_TCP_EARLY_DEMUX there): the daemon
    // only turns it off when told to as well, never back on over the init container's choice.
    await host.applyBranchNode(config.podEni.disableTcpEarlyDemux ? plan : { ...plan, sysctls: [] });
  }
  const nodePlan = planNodeRouting({
    family,
    enis: [],
    pods: [...restoredPods, ...branchPodsOnNode],
    ...(config.nodePortSupport || !config.externalSnat ? { fwmark: config.connmark } : {}),
    // IPv4 CIDRs: no rule for them in IPv6 mode.
    externalServiceCidrs: config.ipv6 ? [] : config.externalServiceCidrs,
    vethPrefix: config.vethPrefix,
  });
  await host.reconcile(nodePlan).catch((e: unknown) => {
    metrics.ipamdError('nodeInit');
    log.error('node routing reconcile at start failed; serving anyway', {
      error: e instanceof Error ? e.message : String(e),
    });
  });

  // Security groups for pods: the trunk (classified by every reconcile; looked for at once, at most every
  // second, when a branch pod arrives before the reconcile has seen it) and the branch pods.
  let trunkLookedAt = Number.NEGATIVE_INFINITY;
  // Concurrent ADDs share the lookup in flight (a burst right after the trunk attached must not fail NO_TRUNK).
  let trunkLookup: Promise<ReturnType<typeof nodeEnis.trunk>> | undefined;
  const findTrunk = async () => {
    const known = nodeEnis.trunk();
    if (known !== undefined) return known;
    if (trunkLookup !== undefined) return trunkLookup;
    if (performance.now() - trunkLookedAt < 1000) return undefined;
    trunkLookedAt = performance.now();
    trunkLookup = pool
      .exclusive(async () => nodeEnis.select(await metadata.listEnis()))
      .then(() => nodeEnis.trunk())
      .finally(() => {
        trunkLookup = undefined;
      });
    return trunkLookup;
  };
  const branchPods = config.podEni.enabled
    ? new BranchPods({
        mode: config.podEni.mode,
        linkKind: config.podEni.linkKind,
        readPod: (namespace, name) => readPodView(kube, namespace, name),
        trunk: findTrunk,
        hostLinks: () => host.links(),
        plumber: host.branchPlumber,
        prepareTrunk: (link) => host.setMtu(link.name, config.eniMtu),
        branchLimit: publishedBranchLimit(node.instanceType),
        ...(config.imdsOnlyMode
          ? {}
          : { heldBranches: heldBranchesOf(ec2, node.instanceId, { now: () => performance.now(), log }) }),
        ...(ledger === undefined ? {} : { ledger }),
        now: () => Date.now(),
        log,
      })
    : undefined;
  if (branchPods !== undefined) {
    // The records of the branch pods plumbed before a restart, kept where their branch link still is (ADR 0030).
    const t = performance.now();
    const r = await branchPods.restore(saved.branchLedger);
    for (const problem of r.problems) log.warn('branch pod ledger: entry not read', { problem });
    for (const d of r.dropped)
      log.info('branch pod record dropped', {
        why: d.why,
        pod: `${d.record.namespace}/${d.record.name}`,
        vlanId: d.record.vlanId,
      });
    log.info('branch pods restored', {
      found: r.found,
      restored: r.restored.length,
      dropped: r.dropped.length,
      ...(r.unrecorded.length > 0 ? { unrecordedBranchLinks: r.unrecorded } : {}),
      ms: Math.round((performance.now() - t) * 1000) / 1000,
    });
  }
  // The reference's tryEnableSecurityGroupsForPods: ask for a trunk (CNINode feature SecurityGroupsForPods)
  // once there is a free ENI slot for it; re-checked after every reconcile.
  let trunkSlotWarned = false;
  const requestTrunk = () => {
    if (!config.podEni.enabled) return;
    const attached = datastore.stats().enis.length + nodeEnis.unmanagedCount();
    if (nodeEnis.trunk() !== undefined || attached < maxEnis) {
      kube.setFeature({ name: 'SecurityGroupsForPods' });
    } else if (!trunkSlotWarned) {
      trunkSlotWarned = true;
      log.warn(
        'security groups for pods: no free ENI slot for the trunk yet; the pool keeps one free once it can',
        {
          attached,
          maxEnis,
        },
      );
    }
  };
  requestTrunk();

  // 6. Serve.
  let terminating = false;
  const gcDeps = {
    datastore,
    plumber: host.plumber,
    vethPrefix: config.vethPrefix,
    hostLinks: () => host.linkNames(),
    log,
    branchPods,
  };
  rpc.serve(
    checkingClientVersion(options.version, {
      gc: async (req) => {
        const outcome = await collectStaleAttachments(gcDeps, gcInputOf(req));
        if (outcome.released.length > 0) pool.wake();
        return { Released: outcome.released };
      },
      status: async () => {
        const s = datastore.stats();
        const condition = pool.condition();
        return podReadiness({
          free: s.totalIPs - s.assignedIPs,
          canProvision: !config.disableNetworkResourceProvisioning,
          ...condition,
        });
      },
      ...reportPodsTo(
        kube,
        noteAdds(
          boundPods,
          ipamBackend({
            datastore,
            plumber: host.plumber,
            log,
            observer: pool.observing(metrics),
            version: options.version,
            vethPrefix: config.vethPrefix,
            podMtu: config.podMtu,
            vpcCidrs: () => (config.externalSnat ? vpcCidrs : [...vpcCidrs, ...config.excludeSnatCidrs]),
            family,
            vpcIpv6Cidrs: () => node.primaryEni.vpcIpv6Cidrs,
            externalSnat: config.externalSnat,
            shuttingDown: () => terminating,
            poolCondition: () => pool.condition(),
            wakePool: () => pool.wake(),
            now: () => performance.now(),
            checkNetns: netnsGuard(),
            ...(branchPods !== undefined
              ? {
                  branchPods,
                  onBranchFailure: (f) => {
                    const row = BRANCH_FAILURES[f.cause];
                    kube.podEvent(f.pod, row.eventReason, `${row.message}: ${f.message}`);
                  },
                }
              : {}),
            onAddFailure: (f) =>
              failures.record({
                source: 'add-network',
                action: 'AddNetwork',
                code: f.code,
                reason: f.message,
                pod: f.pod,
              }),
          }),
        ),
      ),
    }),
  );
  // The HTTP endpoints have listened since start (answering 503); from now on they answer.
  introspection?.serve(
    introspectionServer(datastore, config, log, {
      eniConfigs: () => custom?.status(),
      unmanagedEnis: () => nodeEnis.unmanaged(),
      warmPool: () => {
        const bound = boundPods?.counts();
        return {
          lastDecision: pool.last(),
          prefixFallback: pool.prefixFallback(),
          ...(config.warmPoolPolicy === 'adaptive' ? { adaptive: pool.lastAdaptive() ?? null } : {}),
          ...(boundPods && bound && podWatch
            ? {
                boundPods: {
                  count: bound.pods,
                  jobCount: bound.jobPods,
                  pods: boundPods.pods(),
                  watch: podWatch.status(),
                },
              }
            : {}),
        };
      },
      failures: () => failures.list(),
      ...(branchPods !== undefined
        ? {
            branchPods: async () => {
              // Pods deleted through the plugin's prevResult path (the daemon had restarted) leave the list here.
              await branchPods.prune(await host.linkNames());
              return branchPods.list();
            },
          }
        : {}),
    }),
  );
  metricsEndpoint?.serve(metricsServer(metrics, datastore));
  onFailure(() => pool.stop());
  if (custom || branchPods) {
    // Custom networking reads ENIConfigs before every new ENI: connect now, and give the API a few seconds
    // before pre-scaling (a slow API only delays the first ENI; the pool loop retries).
    kube.start();
    for (let i = 0; i < 50 && kube.status().state !== 'connected'; i++)
      await new Promise((r) => setTimeout(r, 100));
  }
  // Pods bound to this node (adaptive policy): watched from now on; the first LIST wakes the pool loop.
  podWatch?.start();
  // IPv6 mode: the /80 serves every pod; no pool loop (the reference returns from it at once).
  if (!config.disableNetworkResourceProvisioning && !config.ipv6) {
    // Pre-scale before declaring the node ready, as the reference's node init does, so the first pods find
    // addresses waiting.
    for (let i = 0; i < 5; i++) if ((await pool.tick()).kind === 'none') break;
    pool.start(options.poolIntervalMs ?? 5000);
  }

  // The reference's 60 s reconcile with IMDS, serialized with the pool loop.
  let reconcileTimer: NodeJS.Timeout | undefined;
  const reconcile = () => {
    pool
      .exclusive(() =>
        metrics.during('nodeIPPoolReconcile', () =>
          reconcileWithImds({
            datastore,
            metadata,
            ...(config.imdsOnlyMode ? {} : { describeEnis: (ids) => eni.describeEnis(ids) }),
            selectManaged: async (imds) => {
              const managed = await nodeEnis.select(imds);
              metrics.setUnmanaged(nodeEnis.unmanaged(), maxEnis, limits.ipv4PerEni, config.prefixDelegation);
              return managed;
            },
            log,
            now: () => Date.now(),
            adoptEni: (e) => pool.adoptEni(e),
            teardownEni: async (eniId) => {
              const plan = eniPlans.get(eniId);
              if (plan !== undefined) await host.teardownEni(plan);
              eniPlans.delete(eniId);
            },
            recentlyReleased: pool.recentlyReleased,
          }),
        ),
      )
      .then((report) => {
        metrics.reconciled(report);
        requestTrunk();
      })
      .catch((e: unknown) => {
        const code = isEniManagerError(e) ? e.code : 'Internal';
        const reason = e instanceof Error ? e.message : String(e);
        metrics.reconcileFailed(code);
        failures.record({ source: 'reconcile', action: 'nodeIPPoolReconcile', code, reason });
        log.warn('reconcile with IMDS failed', { code, error: reason });
      })
      .finally(() => {
        if (!terminating)
          reconcileTimer = setTimeout(
            reconcile,
            options.reconcileIntervalMs ?? config.reconcileIntervalSeconds * 1000,
          );
      });
  };
  // The reference runs its reconcile from the pool manager, which IPv6 mode never starts.
  if (!config.ipv6)
    reconcileTimer = setTimeout(
      reconcile,
      options.reconcileIntervalMs ?? config.reconcileIntervalSeconds * 1000,
    );

  // The reference's 30 s VPC CIDR refresh: a block associated while the node runs stops being SNATed.
  // IPv4 SNAT only: nothing to refresh in IPv6 mode.
  const cidrRefresh = config.ipv6
    ? undefined
    : startVpcCidrRefresh({
        initial: vpcCidrs,
        read: async () => (await metadata.readEni(node.primaryMac))?.vpcIpv4Cidrs ?? [],
        apply: async (cidrs) => {
          await applySnat(cidrs);
          vpcCidrs = cidrs;
        },
        intervalMs: options.vpcCidrRefreshIntervalMs ?? 30_000,
        log,
      });

  let gcTimer: NodeJS.Timeout | undefined;
  // Off in IPv6 mode, as the reference (no ENIs are created there).
  if (!config.disableLeakedEniCleanup && !config.disableNetworkResourceProvisioning && !config.ipv6) {
    const gc = () => {
      eni.collectLeakedEnis().then(
        (r) => log.info('leaked-ENI cleanup', { ...r }),
        (e: unknown) => log.warn('leaked-ENI cleanup failed', { error: String(e) }),
      );
      gcTimer = setTimeout(gc, 3_600_000);
    };
    gcTimer = setTimeout(gc, Math.floor(Math.random() * 300_000));
  }

  onFailure(() => {
    terminating = true;
    if (gcTimer !== undefined) clearTimeout(gcTimer);
    if (reconcileTimer !== undefined) clearTimeout(reconcileTimer);
    cidrRefresh?.stop();
  });

  // 7. Healthy: tell the runtime.
  const egress = egressConflistEntry(config, {
    ipv6Cluster: config.ipv6,
    nodeIpv4: node.localIpv4,
    nodeIpv6: node.localIpv6 ?? node.primaryEni.ipv6Addresses[0],
  });
  if (egress.warning !== undefined) log.warn(egress.warning);
  const conflistPath = await writeConflist(
    config.hostCniConfDirPath,
    renderConflist(config, { bandwidth: config.bandwidthPlugin, egress: egress.entry }),
  );
  if (!custom && !branchPods) kube.start();
  const startupMs = performance.now() - started;
  metrics.started(startupMs / 1000);
  log.info('aws-node ready', {
    socket: config.socketPath,
    conflist: conflistPath,
    startupMs: Math.round(startupMs),
  });

  return {
    node,
    datastore,
    pool,
    metrics,
    rpc,
    introspection,
    metricsEndpoint,
    conflistPath,
    kube,
    branchPods,
    boundPods: boundPods && podWatch ? { watch: podWatch, pods: boundPods } : undefined,
    startupMs,
    async stop() {
      terminating = true;
      if (gcTimer !== undefined) clearTimeout(gcTimer);
      if (reconcileTimer !== undefined) clearTimeout(reconcileTimer);
      cidrRefresh?.stop();
      await pool.stop();
      await rpc.close(5000);
      await podWatch?.stop();
      await kube.stop();
      await datastore
        .flush()
        .catch((e: unknown) => log.warn('final checkpoint write failed', { error: String(e) }));
      await introspection?.close();
      await metricsEndpoint?.close();
      host.close();
      log.info('aws-node stopped');
    },
  };
}
