import type { CallEvent } from '@vpc-cni-kit/eni-manager';
import { type BranchControllerPort, POD_ENI_ANNOTATION } from '@vpc-cni-kit/sgp-branch';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry, Summary } from 'prom-client';

/**
 * The reference controller's per-action EC2 counters: `[requests, errors]` metric names by EC2 action. Its names
 * are not uniform (`_req_count` for most, `_call_count` for some); they are kept as they are, so dashboards
 * built on the reference read these unchanged. An action missing here gets `ec2_<snake_case>_api_req_count`.
 */
export const EC2_ACTION_METRICS: Readonly<Record<string, readonly [string, string]>> = {
  DescribeInstances: ['ec2_describe_instances_api_req_count', 'ec2_describe_instances_api_err_count'],
  CreateNetworkInterface: [
    'ec2_create_network_interface_api_req_count',
    'ec2_create_network_interface_api_err_count',
  ],
  AttachNetworkInterface: [
    'ec2_attach_network_interface_api_req_count',
    'ec2_attach_network_interface_api_err_count',
  ],
  DetachNetworkInterface: [
    'ec2_detach_network_interface_api_req_count',
    'ec2_detach_network_interface_api_err_count',
  ],
  DeleteNetworkInterface: [
    'ec2_delete_network_interface_api_req_count',
    'ec2_delete_network_interface_api_err_count',
  ],
  DescribeNetworkInterfaces: [
    'ec2_describe_network_interface_api_req_count',
    'ec2_describe_network_interface_api_err_count',
  ],
  CreateTags: ['ec2_tag_network_interface_api_req_count', 'ec2_tag_network_interface_api_err_count'],
  DescribeSubnets: ['ec2_describe_subnets_api_req_count', 'ec2_describe_subnets_api_err_count'],
  DescribeTrunkInterfaceAssociations: [
    'ec2_describe_trunk_network_interface_association_api_call_count',
    'ec2_describe_trunk_network_interface_association_api_err_count',
  ],
  AssociateTrunkInterface: [
    'ec2_associate_trunk_interface_api_req_count',
    'ec2_associate_trunk_interface_api_err_count',
  ],
  DisassociateTrunkInterface: [
    'ec2_disassociate_trunk_interface_api_req_count',
    'ec2_disassociate_trunk_interface_api_err_count',
  ],
  ModifyNetworkInterfaceAttribute: [
    'ec2_modify_network_interface_attribute_api_call_count',
    'ec2_modify_network_interface_attribute_api_err_count',
  ],
};

/** The reference's `operation` values of the branch ENI counters (its spelling, typos included). */
export const BRANCH_OPERATIONS = {
  created: 'created_branch_eni_succeeded',
  createFailed: 'creating_branch_eni_failed',
  deleted: 'deleted_branch_succesfully',
  deleteFailed: 'delete_branch_error',
} as const;

/** The reference's `operation` values of `trunk_eni_operations_err_count` this controller reports. */
export type TrunkOperation = 'describe_instance_nw_interface' | 'find_free_index' | 'create_trunk_eni';

/** The controller's HTTP servers, as the `endpoint` label of `http_connections_dropped_total` names them. */
export type HttpEndpointName = 'webhook' | 'probes' | 'metrics';

const snake = (action: string) => action.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();

/**
 * The controller's Prometheus metrics (text format 0.0.4 through prom-client, as aws-node's): the reference
 * controller's names and labels where it has them (EC2 calls by action, branch and trunk operations, pod
 * annotations, client-go's leader status, controller-runtime's webhook requests), plus the cooldown queue and
 * period and the trunks it knows, which the reference does not export. One instance per process; every replica
 * serves it (a standby shows `leader_election_master_status` 0).
 */
export class ControllerMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  private readonly ec2Req = new Counter({
    name: 'ec2_api_req_count',
    help: 'EC2 requests sent (every attempt)',
    registers: [this.registry],
  });
  private readonly ec2Err = new Counter({
    name: 'ec2_api_err_count',
    help: 'EC2 requests that failed',
    registers: [this.registry],
  });
  private readonly perAction = new Map<string, { req: Counter; err: Counter }>();
  private readonly latency = new Summary({
    name: 'aws_nw_call_latency',
    help: 'EC2 request latency by action, milliseconds',
    labelNames: ['api'],
    registers: [this.registry],
  });
  private readonly branchOk = new Counter({
    name: 'branch_eni_opeartions_success_count',
    help: 'Branch ENI creates and deletes that succeeded, by operation',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  private readonly branchFailed = new Counter({
    name: 'branch_eni_opeartions_failure_count',
    help: 'Branch ENI creates and deletes that failed, by operation',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  private readonly trunkErr = new Counter({
    name: 'trunk_eni_operations_err_count',
    help: 'Trunk ENI steps that failed, by operation',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  private readonly unreconciledTrunks = new Counter({
    name: 'unreconciled_trunk_network_interfaces',
    help: 'Trunks found unlike their node ENIConfig (left as they are), by attribute',
    labelNames: ['attribute'],
    registers: [this.registry],
  });
  private readonly trunks = new Gauge({
    name: 'trunk_eni_count',
    help: 'Nodes whose attached trunk ENI this controller knows',
    registers: [this.registry],
  });
  private readonly annotate = new Counter({
    name: 'annotate_pod_request_call_count',
    help: 'Pod annotation writes, by annotation key',
    labelNames: ['annotate_key'],
    registers: [this.registry],
  });
  private readonly annotateErr = new Counter({
    name: 'annotate_pod_request_err_count',
    help: 'Pod annotation writes that failed, by annotation key',
    labelNames: ['annotate_key'],
    registers: [this.registry],
  });
  private readonly cooling = new Gauge({
    name: 'branch_eni_cooldown_queue_depth',
    help: 'Branch ENIs released and waiting out their cooldown before deletion',
    registers: [this.registry],
  });
  private readonly cooldownPeriod = new Gauge({
    name: 'branch_eni_cooldown_period_seconds',
    help: 'The branch ENI cooldown in force (amazon-vpc-cni ConfigMap branch-eni-cooldown, else the flag)',
    registers: [this.registry],
  });
  private readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help: '1 while this replica holds the Lease named by name, 0 while it stands by',
    labelNames: ['name'],
    registers: [this.registry],
  });
  private readonly credentialRereads = new Counter({
    name: 'kube_credential_file_reread_refused_total',
    help: 'Re-reads of a Kubernetes credential file that found no regular file (the content read before stayed in use), by file role',
    labelNames: ['file'],
    registers: [this.registry],
  });
  private readonly webhookRequests = new Counter({
    name: 'controller_runtime_webhook_requests_total',
    help: 'Admission requests answered, by webhook path and HTTP status',
    labelNames: ['webhook', 'code'],
    registers: [this.registry],
  });
  private readonly webhookInFlight = new Gauge({
    name: 'controller_runtime_webhook_requests_in_flight',
    help: 'Admission requests being answered now, by webhook path',
    labelNames: ['webhook'],
    registers: [this.registry],
  });
  private readonly webhookLatency = new Histogram({
    name: 'controller_runtime_webhook_latency_seconds',
    help: 'Time to answer an admission request, seconds, by webhook path',
    labelNames: ['webhook'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  private readonly httpDropped = new Counter({
    name: 'http_connections_dropped_total',
    help: 'Connections a server closed unread because it already held its cap (HttpLimits.maxConnections), by endpoint (webhook, probes, metrics)',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });

  /**
   * @param options - `processMetrics`: also export prom-client's default process and Node.js metrics (the
   *   program does; tests that build several instances in one process leave them out)
   */
  constructor(options: { readonly processMetrics?: boolean } = {}) {
    new Gauge({
      name: 'sgp_enabled',
      help: '1: this controller serves security groups for pods',
      registers: [this.registry],
    }).set(1);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** eni-manager's per-attempt hook: EC2 requests and errors, total and by action, and their latency. */
  readonly onCall = (e: CallEvent): void => {
    if (e.service !== 'ec2') return;
    let counters = this.perAction.get(e.action);
    if (counters === undefined) {
      const [req, err] = EC2_ACTION_METRICS[e.action] ?? [
        `ec2_${snake(e.action)}_api_req_count`,
        `ec2_${snake(e.action)}_api_err_count`,
      ];
      counters = {
        req: new Counter({
          name: req,
          help: `EC2 ${e.action} requests sent (every attempt)`,
          registers: [this.registry],
        }),
        err: new Counter({
          name: err,
          help: `EC2 ${e.action} requests that failed`,
          registers: [this.registry],
        }),
      };
      this.perAction.set(e.action, counters);
    }
    this.ec2Req.inc();
    counters.req.inc();
    if (e.errorCode !== undefined) {
      this.ec2Err.inc();
      counters.err.inc();
    }
    this.latency.observe({ api: e.action }, e.latencyMs);
  };

  /** A branch ENI operation's outcome. */
  branch(operation: (typeof BRANCH_OPERATIONS)[keyof typeof BRANCH_OPERATIONS]): void {
    if (operation === BRANCH_OPERATIONS.created || operation === BRANCH_OPERATIONS.deleted)
      this.branchOk.inc({ operation });
    else this.branchFailed.inc({ operation });
  }

  /** A failed trunk operation. */
  trunkError(operation: TrunkOperation): void {
    this.trunkErr.inc({ operation });
  }

  /** An existing trunk whose subnet or groups differ from what the node's ENIConfig asks for (not changed). */
  unreconciledTrunk(attribute: 'subnet' | 'security_groups'): void {
    this.unreconciledTrunks.inc({ attribute });
  }

  /** An annotation write on a pod, and whether it failed. */
  annotation(key: string, failed: boolean): void {
    this.annotate.inc({ annotate_key: key });
    if (failed) this.annotateErr.inc({ annotate_key: key });
  }

  /** After a pass: nodes with a known trunk, branches cooling down. */
  ledger(trunks: number, cooling: number): void {
    this.trunks.set(trunks);
    this.cooling.set(cooling);
  }

  /** The cooldown in force. */
  cooldown(ms: number): void {
    this.cooldownPeriod.set(ms / 1000);
  }

  /** Whether this replica holds the Lease `name`. */
  leader(name: string, leading: boolean): void {
    this.leaderStatus.set({ name }, leading ? 1 : 0);
  }

  /** A re-read of a Kubernetes credential file (`token`, `certificate-authority`, …) whose content was not used. */
  credentialFileRefused(file: string): void {
    this.credentialRereads.inc({ file });
  }

  /**
   * The `endpoint` server closed a connection over its cap (`http_connections_dropped_total`); `count` 0 makes the
   * series exist (at 0) before the first drop, so a rate over it is defined.
   */
  httpConnectionsDropped(endpoint: HttpEndpointName, count = 1): void {
    this.httpDropped.inc({ endpoint }, count);
  }

  /**
   * An admission request starts on `webhook` (the path); call the result with the HTTP status when answered, or
   * with `undefined` when the client went away unanswered (not counted as a request, no longer in flight).
   */
  webhookRequest(webhook: string): (code: number | undefined) => void {
    this.webhookInFlight.inc({ webhook });
    const end = this.webhookLatency.startTimer({ webhook });
    return (code) => {
      end();
      this.webhookInFlight.dec({ webhook });
      if (code !== undefined) this.webhookRequests.inc({ webhook, code: String(code) });
    };
  }
}

/**
 * The port with its outcomes counted: branch creates and deletes (`branch_eni_opeartions_*`) and pod annotations
 * (`annotate_pod_request_*`, key `vpc.amazonaws.com/pod-eni`). Results and errors pass through unchanged.
 */
export function observedBranchPort(
  port: BranchControllerPort,
  metrics: ControllerMetrics,
): BranchControllerPort {
  const counted = async <T>(call: () => Promise<T>, ok: () => void, failed: () => void): Promise<T> => {
    try {
      const out = await call();
      ok();
      return out;
    } catch (e) {
      failed();
      throw e;
    }
  };
  return {
    ...port,
    createBranchEni: (request) =>
      counted(
        () => port.createBranchEni(request),
        () => metrics.branch(BRANCH_OPERATIONS.created),
        () => metrics.branch(BRANCH_OPERATIONS.createFailed),
      ),
    deleteBranchEni: (eniId) =>
      counted(
        () => port.deleteBranchEni(eniId),
        () => metrics.branch(BRANCH_OPERATIONS.deleted),
        () => metrics.branch(BRANCH_OPERATIONS.deleteFailed),
      ),
    annotatePod: (pod, value) =>
      counted(
        () => port.annotatePod(pod, value),
        () => metrics.annotation(POD_ENI_ANNOTATION, false),
        () => metrics.annotation(POD_ENI_ANNOTATION, true),
      ),
  };
}
