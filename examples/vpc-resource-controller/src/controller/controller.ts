import {
  createEc2Api,
  createInstanceLimitsSource,
  type Ec2Api,
  type Ec2Credentials,
} from '@vpc-cni-kit/eni-manager';
import type { BranchLedger } from '@vpc-cni-kit/sgp-branch';
import { type InClusterSource, type KubeApis, kubeApis } from '../kube/apis.js';
import { type LeaderElectionOptions, LeaderElector } from '../kube/leader.js';
import { reportCredentialFiles } from './credential-report.js';
import type { Logger } from './logger.js';
import type { ControllerMetrics } from './metrics.js';
import { Runtime } from './runtime.js';

/**
 * EC2 rate limits for the controller: the account-wide numbers AWS publishes (the controller is the one caller
 * of these actions for branches in the cluster), not eni-manager's per-node tenth.
 */
export const CONTROLLER_RATE_LIMITS = {
  describe: { capacity: 100, refillPerSecond: 20 },
  attachDetach: { capacity: 50, refillPerSecond: 5 },
  createDelete: { capacity: 100, refillPerSecond: 5 },
  assignUnassign: { capacity: 100, refillPerSecond: 5 },
  modify: { capacity: 100, refillPerSecond: 5 },
  tags: { capacity: 100, refillPerSecond: 10 },
} as const;

/** Options of {@link startController}. */
export interface ControllerOptions {
  /** Cluster name: the `kubernetes.io/cluster/<name>` tag of every ENI it creates and looks for. */
  readonly clusterName: string;
  /** AWS region. */
  readonly region: string;
  /** EC2 endpoint override (e.g. an ec2-simulator). */
  readonly ec2Endpoint?: string | undefined;
  /** Static EC2 credentials; default: the SDK's provider chain. */
  readonly ec2Credentials?: Ec2Credentials | undefined;
  /**
   * Kubeconfig files: one path, or a list merged as kubectl merges a `KUBECONFIG` list (the first file to name a
   * cluster, user or context wins; `kubeconfigList` splits the variable). Default (or an empty list): in-cluster.
   */
  readonly kubeconfig?: string | readonly string[] | undefined;
  /** Where the in-cluster configuration is read without a kubeconfig. @defaultValue this process's environment */
  readonly inCluster?: InClusterSource | undefined;
  /**
   * How long a released branch waits before it is deleted while the `kube-system/amazon-vpc-cni` ConfigMap sets
   * no `branch-eni-cooldown` (which then wins, watched: a change applies without a restart). The reference's
   * default: 60 s.
   */
  readonly cooldownMs: number;
  /** Where EC2 calls, branch and trunk operations, annotations, the cooldown and the Lease are counted. */
  readonly metrics?: ControllerMetrics | undefined;
  /** Lease leader election; undefined: act at once (one replica only!). */
  readonly leaderElection?: LeaderElectionOptions | undefined;
  /** How often every node's branches are listed to catch ENIs whose create answer was lost. @defaultValue 300000 */
  readonly orphanSweepMs?: number | undefined;
  /** Pods whose branches are created at once in a pass (each has its own VLAN id). @defaultValue 8 */
  readonly concurrency?: number | undefined;
  /** Pause before a node whose instance or trunk could not be set up is tried again. @defaultValue 5000 */
  readonly nodeRetryMs?: number | undefined;
  /** How often a pass runs while something waits (cooldowns, retries). @defaultValue 1000 */
  readonly tickMs?: number | undefined;
  /** Where it reports. */
  readonly log: Logger;
  /** The wall clock (ms). @defaultValue `Date.now` */
  readonly now?: (() => number) | undefined;
}

/** A running controller. */
export interface RunningController {
  /** Resolves when the controller stopped by itself (it lost its Lease): the reason. */
  readonly lost: Promise<string>;
  /** Whether it is acting (holds the Lease, or runs without election). */
  readonly active: () => boolean;
  /**
   * Ready: a standby (waiting for the Lease) is ready to take over; an acting controller once every watched kind
   * has listed (what `/readyz` answers).
   */
  readonly ready: () => boolean;
  /** The branch ledger (for introspection and tests). */
  readonly ledger: () => BranchLedger | undefined;
  /** Stops: informers, timers, EC2 connections, and hands the Lease over. */
  stop(): Promise<void>;
}

/**
 * Starts the VPC resource controller's branch side: waits for the Lease (when electing), then watches pods, nodes,
 * service accounts, CNINodes and SecurityGroupPolicies, gives each node whose CNINode asks for
 * `SecurityGroupsForPods` a trunk ENI, and runs `BranchController` passes — on every change, and every
 * `tickMs` while cooldowns or retries wait. Failures on a pod become Events on it (once per cause).
 */
export async function startController(options: ControllerOptions): Promise<RunningController> {
  const onEvent = reportCredentialFiles(options.log, options.metrics);
  return runController(kubeApis(options.kubeconfig, options.inCluster, { onEvent }), options);
}

/**
 * {@link startController} on Kubernetes clients already loaded (`options.kubeconfig` and `options.inCluster` are
 * not read): the program loads its configuration once, for its start-up probe, its webhook and the controller.
 */
export async function runController(kube: KubeApis, options: ControllerOptions): Promise<RunningController> {
  const now = options.now ?? (() => Date.now());
  const log = options.log;
  const ec2: Ec2Api = createEc2Api({
    region: options.region,
    ...(options.ec2Endpoint === undefined ? {} : { endpoint: options.ec2Endpoint }),
    ...(options.ec2Credentials === undefined ? {} : { credentials: options.ec2Credentials }),
    rateLimits: CONTROLLER_RATE_LIMITS,
    maxAttempts: 5,
    ...(options.metrics ? { hooks: { onCall: options.metrics.onCall } } : {}),
  });
  const limits = createInstanceLimitsSource(ec2, { publishedTable: true });

  let resolveLost: (reason: string) => void = () => undefined;
  const lost = new Promise<string>((r) => {
    resolveLost = r;
  });
  let runtime: Runtime | undefined;
  let stopped = false;
  /** Set when the lease is lost: a runtime still starting then must not act. */
  let leaseLost = false;

  const activate = async () => {
    if (stopped || runtime !== undefined) return;
    log.log('info', 'acting: watching the cluster');
    const started = await Runtime.start(kube, ec2, limits, options, now);
    // The lease may have been lost, or stop() called, while the runtime was starting: it never acts then.
    if (stopped || leaseLost) {
      await started.stop();
      return;
    }
    runtime = started;
  };

  let elector: LeaderElector | undefined;
  if (options.leaderElection === undefined) {
    await activate();
  } else {
    const le = options.leaderElection;
    options.metrics?.leader(le.name, false);
    elector = new LeaderElector(
      kube,
      le,
      {
        onStartedLeading: () => {
          options.metrics?.leader(le.name, true);
          log.log('info', 'became the leader', {
            lease: `${le.namespace}/${le.name}`,
            identity: le.identity,
          });
          activate().catch((e) => resolveLost(`could not start after winning the lease: ${String(e)}`));
        },
        onStoppedLeading: (reason) => {
          options.metrics?.leader(le.name, false);
          log.log('error', 'lost the lease: stopping', { reason });
          leaseLost = true;
          runtime
            ?.stop()
            .catch((e: unknown) =>
              log.log('error', 'stopping after the lost lease failed', { error: String(e) }),
            );
          runtime = undefined;
          resolveLost(reason);
        },
        onProblem: (problem) => log.log('warn', 'leader election', { problem }),
      },
      now,
    );
    log.log('info', 'waiting for the lease', { lease: `${le.namespace}/${le.name}`, identity: le.identity });
    elector.start();
  }

  return {
    lost,
    active: () => runtime !== undefined,
    ready: () =>
      runtime === undefined ? options.leaderElection !== undefined && !stopped : runtime.synced(),
    ledger: () => runtime?.controller.ledger(),
    async stop() {
      stopped = true;
      await runtime?.stop();
      runtime = undefined;
      await elector?.release();
      if (options.leaderElection !== undefined) options.metrics?.leader(options.leaderElection.name, false);
      ec2.destroy();
    },
  };
}
