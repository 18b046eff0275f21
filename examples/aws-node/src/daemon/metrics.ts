import type { Datastore } from '@vpc-cni-kit/datastore';
import { type CallEvent, isEniErrorCode } from '@vpc-cni-kit/eni-manager';
import type { AdaptiveReason, AdaptiveTargets, PoolDecision } from '@vpc-cni-kit/warm-pool';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry, Summary } from 'prom-client';
import type { BoundCounts } from './bound-pods.js';
import type { BackendObserver } from './ipam-backend.js';
import type { PoolObserver } from './pool-loop.js';
import type { ReconcileReport } from './reconcile.js';

/** The reference's `fn` values of `awscni_ipamd_action_inprogress`: the long actions that may be in flight. */
export type IpamdAction =
  | 'nodeInit'
  | 'increaseDatastorePool'
  | 'decreaseDatastorePool'
  | 'nodeIPPoolReconcile';

/** The reference's `fn` for a pool decision being carried out: growing or shrinking the datastore's pool. */
export function poolActionOf(kind: PoolDecision['kind']): IpamdAction {
  return kind === 'assign' || kind === 'create-eni' ? 'increaseDatastorePool' : 'decreaseDatastorePool';
}

/** Buckets of the start-up and node-initialization histograms, in seconds. */
const START_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/** The daemon's HTTP endpoints, as the `endpoint` label of `awscni_http_connections_dropped_total` names them. */
export type HttpEndpointName = 'metrics' | 'introspection';

/**
 * The daemon's Prometheus metrics: the reference's `awscni_*` names and labels, plus what users have asked
 * for and the reference lacks — latency histograms of AddNetwork and of every EC2/IMDS call by action.
 */
export class DaemonMetrics implements BackendObserver, PoolObserver {
  readonly registry = new Registry();
  private readonly addReq = new Counter({
    name: 'awscni_add_ip_req_count',
    help: 'AddNetwork requests',
    registers: [this.registry],
  });
  private readonly delReq = new Counter({
    name: 'awscni_del_ip_req_count',
    help: 'DelNetwork requests',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  private readonly noIp = new Counter({
    name: 'awscni_no_available_ip_addresses',
    help: 'Assignments that found the pool empty',
    registers: [this.registry],
  });
  private readonly addLatency = new Histogram({
    name: 'awscni_add_network_duration_seconds',
    help: 'AddNetwork latency in the daemon (assignment and pod plumbing), by outcome',
    labelNames: ['outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  private readonly apiLatencySummary = new Summary({
    name: 'awscni_aws_api_latency_ms',
    help: 'AWS API (EC2 and IMDS) latency in milliseconds',
    labelNames: ['api', 'error', 'status'],
    registers: [this.registry],
  });
  private readonly apiLatency = new Histogram({
    name: 'awscni_aws_api_duration_seconds',
    help: 'EC2 and IMDS call latency by service and action',
    labelNames: ['service', 'api', 'error'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly apiErrors = new Counter({
    name: 'awscni_aws_api_error_count',
    help: 'AWS API errors by code',
    labelNames: ['api', 'error'],
    registers: [this.registry],
  });
  private readonly ec2Req = new Counter({
    name: 'awscni_ec2api_req_count',
    help: 'EC2 requests',
    labelNames: ['fn'],
    registers: [this.registry],
  });
  private readonly ec2Err = new Counter({
    name: 'awscni_ec2api_error_count',
    help: 'Failed EC2 requests',
    labelNames: ['fn'],
    registers: [this.registry],
  });
  private readonly ipamdErr = new Counter({
    name: 'awscni_ipamd_error_count',
    help: 'ipamd errors by function',
    labelNames: ['fn'],
    registers: [this.registry],
  });
  private readonly enisAllocated = new Gauge({
    name: 'awscni_eni_allocated',
    help: 'ENIs in the datastore',
    registers: [this.registry],
  });
  private readonly totalIps = new Gauge({
    name: 'awscni_total_ip_addresses',
    help: 'Total IP addresses in the pool',
    registers: [this.registry],
  });
  private readonly assignedIps = new Gauge({
    name: 'awscni_assigned_ip_addresses',
    help: 'Assigned IP addresses',
    registers: [this.registry],
  });
  private readonly prefixes = new Gauge({
    name: 'awscni_total_ipv4_prefixes',
    help: 'IPv4 prefixes',
    registers: [this.registry],
  });
  private readonly perEni = new Gauge({
    name: 'awscni_assigned_ip_per_eni',
    help: 'Assigned IPs per ENI',
    labelNames: ['eni'],
    registers: [this.registry],
  });
  private readonly perCidr = new Gauge({
    name: 'awscni_assigned_ip_per_cidr',
    help: 'Assigned IPs per CIDR',
    labelNames: ['cidr'],
    registers: [this.registry],
  });
  private readonly eniMax = new Gauge({
    name: 'awscni_eni_max',
    help: 'Maximum ENIs minus unmanaged ones',
    registers: [this.registry],
  });
  private readonly ipMax = new Gauge({
    name: 'awscni_ip_max',
    help: 'Maximum IPs',
    registers: [this.registry],
  });
  private readonly unmanaged = new Gauge({
    name: 'awscni_eni_unmanaged',
    help: 'Attached ENIs this node leaves alone, by reason',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'awscni_build_info',
    help: 'Build information',
    labelNames: ['version', 'goversion'],
    registers: [this.registry],
  });
  private readonly startup = new Histogram({
    name: 'awscni_ipamd_startup_duration_seconds',
    help: 'Start to healthy (serving, conflist written), as the reference records it',
    labelNames: ['success', 'with_api_server', 'failure_reason'],
    buckets: START_BUCKETS,
    registers: [this.registry],
  });
  private readonly nodeInit = new Histogram({
    name: 'awscni_ipamd_node_initialization_duration_seconds',
    help: 'Node initialization: IMDS discovery, limits, host network, ENIs and checkpoint restore',
    labelNames: ['success'],
    buckets: START_BUCKETS,
    registers: [this.registry],
  });
  private readonly connmarkBackend = new Gauge({
    name: 'awscni_connmark_backend',
    help: '1 for the connmark backend in use (iptables or nftables)',
    labelNames: ['backend'],
    registers: [this.registry],
  });
  private readonly connmarkReconciles = new Counter({
    name: 'awscni_connmark_reconcile_total',
    help: 'SNAT and connmark rule reconciles by result',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly inProgress = new Gauge({
    name: 'awscni_ipamd_action_inprogress',
    help: 'ipamd actions in progress',
    labelNames: ['fn'],
    registers: [this.registry],
  });
  private readonly reconcileCount = new Counter({
    name: 'awscni_reconcile_count',
    help: 'Changes the reconcile with IMDS made, by kind',
    labelNames: ['fn'],
    registers: [this.registry],
  });
  private readonly forceRemovedEnis = new Counter({
    name: 'awscni_force_removed_enis',
    help: 'ENIs removed by the reconcile while pods held addresses on them',
    registers: [this.registry],
  });
  private readonly forceRemovedIps = new Counter({
    name: 'awscni_force_removed_ips',
    help: 'Addresses removed by the reconcile while assigned to a pod',
    registers: [this.registry],
  });
  private readonly awsUtilsErrors = new Counter({
    name: 'awscni_aws_utils_error_count',
    help: 'EC2/IMDS (eni-manager) errors the daemon acted on, by function and error code',
    labelNames: ['fn', 'error'],
    registers: [this.registry],
  });
  private readonly decisions = new Counter({
    name: 'awscni_pool_decision_count',
    help: 'Warm-pool decisions by kind and reason',
    labelNames: ['kind', 'reason'],
    registers: [this.registry],
  });

  private readonly adaptiveTarget = new Gauge({
    name: 'awscni_warm_pool_adaptive_target',
    help: 'WARM_POOL_POLICY=adaptive: the targets of the last decision (warm, aim, high, batch, cooling, minimum, peak, surge_floor, surge; pressured 1 while EC2 throttles or grows are slow; draining 1 while no pod has arrived for 2 min and pods are leaving)',
    labelNames: ['target'],
    registers: [this.registry],
  });
  private readonly boundPodsGauge = new Gauge({
    name: 'awscni_warm_pool_adaptive_bound_pods',
    help: 'WARM_POOL_POLICY=adaptive with the pod watch: pods bound to this node that have not asked for an address yet (0 while the Kubernetes API cannot be watched)',
    registers: [this.registry],
  });
  private readonly boundJobPodsGauge = new Gauge({
    name: 'awscni_warm_pool_adaptive_bound_job_pods',
    help: 'WARM_POOL_POLICY=adaptive with the pod watch: of awscni_warm_pool_adaptive_bound_pods, the pods whose controller is a batch/v1 Job (a fan-out: the pool grows for the rest of it)',
    registers: [this.registry],
  });
  private readonly prefixFallbackGauge = new Gauge({
    name: 'awscni_prefix_fallback',
    help: 'Prefix delegation grows in /32 secondary addresses (1) because the subnet has no free /28, or in prefixes (0)',
    registers: [this.registry],
  });
  private readonly prefixFallbackCount = new Counter({
    name: 'awscni_prefix_fallback_count',
    help: 'Times prefix delegation fell back to /32 secondary addresses (EC2 answered InsufficientCidrBlocks)',
    registers: [this.registry],
  });
  private readonly adaptiveReason = new Counter({
    name: 'awscni_warm_pool_adaptive_reason_count',
    help: 'WARM_POOL_POLICY=adaptive: why the warm target was what it was, per decision',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  /** Security groups for pods: branch-pod failures by where they happened (the reference's `fn` label). */
  readonly podEniErrors = new Counter({
    name: 'awscni_pod_eni_error_count',
    help: 'Security-groups-for-pods (branch ENI) errors, by function',
    labelNames: ['fn'],
    registers: [this.registry],
  });

  private readonly httpDropped = new Counter({
    name: 'awscni_http_connections_dropped_total',
    help: 'Connections the metrics or introspection endpoint closed unread because it already held its cap (HTTP_LIMITS.maxConnections), by endpoint',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });

  constructor() {
    // The reference pre-initializes both results, so a rate is defined before the first failure.
    for (const result of ['success', 'error']) this.connmarkReconciles.inc({ result }, 0);
    // Process metrics: RSS, heap, event-loop lag, GC pauses, open handles (prom-client's `process_*` and
    // `nodejs_*` series).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Node initialization took `seconds` (recorded once, at start). */
  nodeInitialized(seconds: number): void {
    this.nodeInit.observe({ success: 'true' }, seconds);
  }
  /** The daemon became healthy `seconds` after it started (without the Kubernetes API: this daemon uses none). */
  started(seconds: number): void {
    this.startup.observe({ success: 'true', with_api_server: 'false', failure_reason: '' }, seconds);
  }
  /** The connmark backend detected at start (`iptables` or `nftables`). */
  setConnmarkBackend(backend: string): void {
    this.connmarkBackend.reset();
    this.connmarkBackend.set({ backend }, 1);
  }
  /** One SNAT/connmark reconcile and its result. */
  connmarkReconciled(result: 'success' | 'error'): void {
    this.connmarkReconciles.inc({ result });
  }

  addNetwork(durationMs: number, outcome: string): void {
    this.addReq.inc();
    this.addLatency.observe({ outcome }, durationMs / 1000);
  }
  delNetwork(reason: string): void {
    this.delReq.inc({ reason });
  }
  noAvailableAddress(): void {
    this.noIp.inc();
  }
  decision(d: PoolDecision): void {
    this.decisions.inc({ kind: d.kind, reason: d.reason.code });
  }
  adaptive(targets: AdaptiveTargets, why: AdaptiveReason): void {
    for (const k of ['warm', 'aim', 'high', 'batch', 'cooling', 'minimum', 'peak'] as const)
      this.adaptiveTarget.set({ target: k }, targets[k]);
    this.adaptiveTarget.set({ target: 'surge_floor' }, targets.surgeFloor);
    this.adaptiveTarget.set({ target: 'surge' }, targets.surge);
    this.adaptiveTarget.set({ target: 'pressured' }, targets.pressured ? 1 : 0);
    this.adaptiveTarget.set({ target: 'draining' }, targets.draining ? 1 : 0);
    this.adaptiveReason.inc({ reason: why.code });
  }
  /**
   * Pods bound to this node that have not asked for an address yet (`awscni_warm_pool_adaptive_bound_pods`), and
   * those of them a Job controls (`awscni_warm_pool_adaptive_bound_job_pods`).
   */
  boundPods(counts: BoundCounts): void {
    this.boundPodsGauge.set(counts.pods);
    this.boundJobPodsGauge.set(counts.jobPods);
  }
  prefixFallback(active: boolean): void {
    this.prefixFallbackGauge.set(active ? 1 : 0);
    if (active) this.prefixFallbackCount.inc();
  }
  actionFailed(kind: PoolDecision['kind'], code: string): void {
    this.ipamdErr.inc({ fn: kind });
    if (isEniErrorCode(code)) this.awsUtilsErrors.inc({ fn: poolActionOf(kind), error: code });
  }
  /** A branch-pod failure at `fn` (`awscni_pod_eni_error_count`). */
  podEniError(fn: string): void {
    this.podEniErrors.inc({ fn });
  }

  /**
   * The `endpoint` HTTP server closed a connection over its cap (`awscni_http_connections_dropped_total`);
   * `count` 0 makes the series exist (at 0) before the first drop, so a rate over it is defined.
   */
  httpConnectionsDropped(endpoint: HttpEndpointName, count = 1): void {
    this.httpDropped.inc({ endpoint }, count);
  }

  /** An ipamd error outside the pool loop (`awscni_ipamd_error_count{fn}`), e.g. `nodeInit`. */
  ipamdError(fn: string): void {
    this.ipamdErr.inc({ fn });
  }
  /** A pool decision is being carried out (`awscni_ipamd_action_inprogress`). */
  actionStarted(kind: PoolDecision['kind']): void {
    this.inProgress.inc({ fn: poolActionOf(kind) });
  }
  /** The pool decision carried out ended (done or failed). */
  actionEnded(kind: PoolDecision['kind']): void {
    this.inProgress.dec({ fn: poolActionOf(kind) });
  }
  /** Runs `work` counted as the in-progress action `fn`. */
  async during<T>(fn: IpamdAction, work: () => Promise<T>): Promise<T> {
    this.inProgress.inc({ fn });
    try {
      return await work();
    } finally {
      this.inProgress.dec({ fn });
    }
  }
  /**
   * One reconcile with IMDS: its changes under the reference's `fn` names, and its force removals (ENIs that
   * left with pods on them, addresses taken from pods).
   */
  reconciled(report: ReconcileReport): void {
    const counts: [string, number][] = [
      ['eniReconcileAdd', report.adoptedEnis.length],
      ['eniReconcileDel', report.removedEnis.length],
      ['eniDataStorePoolReconcileAdd', report.addedCidrs.length],
      ['eniIPPoolReconcileDel', report.removedCidrs.length],
    ];
    for (const [fn, n] of counts) if (n > 0) this.reconcileCount.inc({ fn }, n);
    if (report.forceRemovedEnis.length > 0) this.forceRemovedEnis.inc(report.forceRemovedEnis.length);
    if (report.droppedPods.length > 0) this.forceRemovedIps.inc(report.droppedPods.length);
  }
  /** The reconcile with IMDS failed with `code` (an eni-manager code counts as an AWS utils error). */
  reconcileFailed(code: string): void {
    this.ipamdErr.inc({ fn: 'nodeIPPoolReconcile' });
    if (isEniErrorCode(code)) this.awsUtilsErrors.inc({ fn: 'nodeIPPoolReconcile', error: code });
  }
  /** The eni-manager hook: every EC2/IMDS attempt. */
  readonly onCall = (e: CallEvent): void => {
    const error = e.errorCode ?? '';
    this.apiLatency.observe({ service: e.service, api: e.action, error }, e.latencyMs / 1000);
    this.apiLatencySummary.observe(
      { api: e.action, error: error === '' ? 'false' : 'true', status: error || '200' },
      e.latencyMs,
    );
    if (error !== '') this.apiErrors.inc({ api: e.action, error });
    if (e.service === 'ec2') {
      this.ec2Req.inc({ fn: e.action });
      if (error !== '') this.ec2Err.inc({ fn: e.action });
    }
  };
  /** Limits, set once at start. */
  setLimits(maxEnis: number, maxIps: number): void {
    this.eniMax.set(maxEnis);
    this.ipMax.set(maxIps);
  }
  /**
   * The ENIs left alone (after each classification): counted by reason, and taken off the limits as the
   * reference's `awscni_eni_max` and `awscni_ip_max` are.
   */
  setUnmanaged(
    enis: readonly { reason: string }[],
    maxEnis: number,
    ipv4PerEni: number,
    prefixDelegation: boolean,
  ): void {
    this.unmanaged.reset();
    for (const e of enis) this.unmanaged.inc({ reason: e.reason });
    const usable = Math.max(0, maxEnis - enis.length);
    this.setLimits(usable, usable * (ipv4PerEni - 1) * (prefixDelegation ? 16 : 1));
  }
  /** Refreshes the pool gauges from the datastore. */
  updateFromDatastore(ds: Datastore): void {
    const s = ds.stats();
    this.enisAllocated.set(s.enis.length);
    this.totalIps.set(s.totalIPs);
    this.assignedIps.set(s.assignedIPs);
    this.prefixes.set(s.totalPrefixes);
    this.perEni.reset();
    this.perCidr.reset();
    for (const eni of s.enis) {
      this.perEni.set({ eni: eni.id }, eni.assignedIPs);
      for (const c of eni.cidrs) this.perCidr.set({ cidr: c.cidr }, c.assigned);
    }
  }
}
