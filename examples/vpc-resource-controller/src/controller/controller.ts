import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import {
  createEc2Api,
  createInstanceLimitsSource,
  type Ec2Api,
  type Ec2Credentials,
} from '@vpc-cni-kit/eni-manager';
import {
  BranchController,
  type BranchLedger,
  type BranchPodOutcome,
  type SecurityGroupPolicy,
} from '@vpc-cni-kit/sgp-branch';
import { ec2BranchPort } from '../ec2/branch-port.js';
import {
  describeInstance,
  ensureTrunk,
  type InstanceFacts,
  instanceIdFromProviderId,
} from '../ec2/instances.js';
import { describeKubeError, type KubeApis, kubeApis } from '../kube/apis.js';
import { kubeBranchPort } from '../kube/branch-port.js';
import { type ClusterCaches, startCaches } from '../kube/caches.js';
import { createPodEvent, EVENT_REASONS } from '../kube/events.js';
import { type LeaderElectionOptions, LeaderElector } from '../kube/leader.js';
import type { Logger } from './logger.js';
import { clusterView, readPolicy, wantsTrunk } from './view.js';

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
  /** A kubeconfig file; default: in-cluster. */
  readonly kubeconfig?: string | undefined;
  /** How long a released branch waits before it is deleted. The reference's default: 60 s. */
  readonly cooldownMs: number;
  /** Lease leader election; undefined: act at once (one replica only!). */
  readonly leaderElection?: LeaderElectionOptions | undefined;
  /** How often every node's branches are listed to catch ENIs whose create answer was lost. @defaultValue 300000 */
  readonly orphanSweepMs?: number | undefined;
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
  /** The branch ledger (for introspection and tests). */
  readonly ledger: () => BranchLedger | undefined;
  /** Stops: informers, timers, EC2 connections, and hands the Lease over. */
  stop(): Promise<void>;
}

/**
 * Starts the VPC resource controller's branch side: waits for the Lease (when electing), then watches pods, nodes,
 * service accounts, CNINodes and SecurityGroupPolicies, gives each node whose CNINode asks for
 * `SecurityGroupsForPods` a trunk ENI, and runs {@link BranchController} passes — on every change, and every
 * `tickMs` while cooldowns or retries wait. Failures on a pod become Events on it (once per cause).
 */
export async function startController(options: ControllerOptions): Promise<RunningController> {
  const now = options.now ?? (() => Date.now());
  const log = options.log;
  const kube = kubeApis(options.kubeconfig);
  const ec2: Ec2Api = createEc2Api({
    region: options.region,
    ...(options.ec2Endpoint === undefined ? {} : { endpoint: options.ec2Endpoint }),
    ...(options.ec2Credentials === undefined ? {} : { credentials: options.ec2Credentials }),
    rateLimits: CONTROLLER_RATE_LIMITS,
    maxAttempts: 5,
  });
  const limits = createInstanceLimitsSource(ec2, { publishedTable: true });

  let resolveLost: (reason: string) => void = () => undefined;
  const lost = new Promise<string>((r) => {
    resolveLost = r;
  });
  let runtime: Runtime | undefined;
  let stopped = false;

  const activate = async () => {
    if (stopped || runtime !== undefined) return;
    log.log('info', 'acting: watching the cluster');
    runtime = await Runtime.start(kube, ec2, limits, options, now);
  };

  let elector: LeaderElector | undefined;
  if (options.leaderElection === undefined) {
    await activate();
  } else {
    const le = options.leaderElection;
    elector = new LeaderElector(
      kube,
      le,
      {
        onStartedLeading: () => {
          log.log('info', 'became the leader', {
            lease: `${le.namespace}/${le.name}`,
            identity: le.identity,
          });
          activate().catch((e) => resolveLost(`could not start after winning the lease: ${String(e)}`));
        },
        onStoppedLeading: (reason) => {
          log.log('error', 'lost the lease: stopping', { reason });
          void runtime?.stop();
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
    ledger: () => runtime?.controller.ledger(),
    async stop() {
      stopped = true;
      await runtime?.stop();
      runtime = undefined;
      await elector?.release();
      ec2.destroy();
    },
  };
}

/** One acting controller: caches, node facts, the branch controller and its pass loop. */
class Runtime {
  readonly controller: BranchController;
  readonly #caches: ClusterCaches;
  readonly #kube: KubeApis;
  readonly #ec2: Ec2Api;
  readonly #limits: ReturnType<typeof createInstanceLimitsSource>;
  readonly #o: ControllerOptions;
  readonly #now: () => number;
  readonly #facts = new Map<string, InstanceFacts>();
  readonly #instanceOf = new Map<string, string>();
  readonly #nodeRetryAt = new Map<string, number>();
  readonly #reported = new Map<string, string>();
  readonly #policyProblems = new Map<string, string>();
  #lastSweep = 0;
  #running = false;
  #dirty = false;
  #stopped = false;
  #pending = false;
  #timer: NodeJS.Timeout | undefined;
  #idle: Promise<void> = Promise.resolve();

  private constructor(
    caches: ClusterCaches,
    kube: KubeApis,
    ec2: Ec2Api,
    limits: ReturnType<typeof createInstanceLimitsSource>,
    o: ControllerOptions,
    now: () => number,
  ) {
    this.#caches = caches;
    this.#kube = kube;
    this.#ec2 = ec2;
    this.#limits = limits;
    this.#o = o;
    this.#now = now;
    this.controller = new BranchController(
      {
        ...ec2BranchPort(ec2, { clusterName: o.clusterName, instanceIdOf: (n) => this.#instanceOf.get(n) }),
        ...kubeBranchPort(kube, (ns, name) => caches.pods.get(name, ns)),
      },
      { cooldownMs: o.cooldownMs },
    );
    this.#lastSweep = now();
  }

  static async start(
    kube: KubeApis,
    ec2: Ec2Api,
    limits: ReturnType<typeof createInstanceLimitsSource>,
    o: ControllerOptions,
    now: () => number,
  ): Promise<Runtime> {
    let self: Runtime | undefined;
    const caches = await startCaches(kube, {
      onChange: (kind: string, obj: KubernetesObject, verb) => {
        if (kind === 'nodes' && verb === 'delete' && obj.metadata?.name) self?.forgetNode(obj.metadata.name);
        self?.schedule();
      },
      onError: (kind, problem) => o.log.log('warn', 'watch failed; restarting', { kind, problem }),
    });
    self = new Runtime(caches, kube, ec2, limits, o, now);
    self.schedule();
    self.#arm();
    return self;
  }

  forgetNode(name: string): void {
    this.#facts.delete(name);
    this.#instanceOf.delete(name);
    this.#nodeRetryAt.delete(name);
  }

  /** Runs a pass soon; passes never overlap (one more runs after the current one when asked meanwhile). */
  schedule(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#dirty = true;
      return;
    }
    if (this.#pending) return;
    this.#pending = true;
    setImmediate(() => {
      this.#pending = false;
      this.#idle = this.#runPasses();
    });
  }

  #arm(): void {
    this.#timer = setInterval(() => this.schedule(), this.#o.tickMs ?? 1000);
  }

  async #runPasses(): Promise<void> {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    try {
      do {
        this.#dirty = false;
        await this.#pass();
      } while (this.#dirty && !this.#stopped);
    } catch (e) {
      this.#o.log.log('error', 'reconcile pass failed', { problem: String(e) });
    } finally {
      this.#running = false;
    }
  }

  async #pass(): Promise<void> {
    const now = this.#now();
    const nodes = this.#caches.nodes.list();
    for (const node of nodes) await this.#refreshNode(node, now);
    const policies: SecurityGroupPolicy[] = [];
    for (const obj of this.#caches.policies.list()) {
      const p = readPolicy(obj);
      const key = `${obj.metadata?.namespace}/${obj.metadata?.name}`;
      if ('problem' in p) {
        if (this.#policyProblems.get(key) !== p.problem)
          this.#o.log.log('warn', 'SecurityGroupPolicy refused: it selects no pod', {
            policy: key,
            problem: p.problem,
          });
        this.#policyProblems.set(key, p.problem);
      } else {
        this.#policyProblems.delete(key);
        policies.push(p);
      }
    }
    const view = clusterView({
      pods: this.#caches.pods.list(),
      nodes,
      serviceAccounts: this.#caches.serviceAccounts.list(),
      policies,
      facts: this.#facts,
    });
    const outcomes = await this.controller.reconcile(view, now);
    const pods = new Map(view.pods.map((p) => [p.uid, p]));
    for (const o of outcomes) await this.#report(o, pods.get(o.podUid));
    for (const uid of this.#reported.keys()) if (!pods.has(uid)) this.#reported.delete(uid);
    if (this.#stopped) return;
    if (now - this.#lastSweep >= (this.#o.orphanSweepMs ?? 300_000)) {
      this.#lastSweep = now;
      for (const n of view.nodes) {
        const found = await this.controller.sweepOrphans(n.name, now).catch(() => 0);
        if (found > 0)
          this.#o.log.log('warn', 'orphaned branch ENIs found; cooling down', { node: n.name, found });
      }
    }
  }

  /** Reads a node's instance (once), and gives it a trunk when its CNINode asks for one. */
  async #refreshNode(node: V1Node, now: number): Promise<void> {
    const name = node.metadata?.name;
    if (name === undefined) return;
    const instanceId = instanceIdFromProviderId(node.spec?.providerID);
    if (instanceId === undefined) return;
    this.#instanceOf.set(name, instanceId);
    let facts = this.#facts.get(name);
    const wants = wantsTrunk(this.#caches.cniNodes.get(name));
    if (facts !== undefined && (facts.trunkEniId !== undefined || !wants || facts.branchLimit === 0)) return;
    if ((this.#nodeRetryAt.get(name) ?? 0) > now) return;
    try {
      if (facts === undefined) {
        facts = await describeInstance(this.#ec2, instanceId);
        this.#facts.set(name, facts);
      }
      if (wants && facts.trunkEniId === undefined && facts.branchLimit > 0) {
        const trunkEniId = await ensureTrunk(this.#ec2, facts, {
          clusterName: this.#o.clusterName,
          nodeName: name,
          limits: this.#limits,
        });
        this.#facts.set(name, { ...facts, trunkEniId });
        this.#o.log.log('info', 'trunk ENI attached', { node: name, instanceId, trunkEniId });
      }
      this.#nodeRetryAt.delete(name);
    } catch (e) {
      this.#nodeRetryAt.set(name, now + 5000);
      this.#o.log.log('warn', 'node not ready for branches; retrying in 5 s', {
        node: name,
        instanceId,
        problem: e instanceof Error ? e.message : String(e),
      });
    }
  }

  /** Logs an outcome and puts an Event on the pod, once per pod and cause. */
  async #report(
    o: BranchPodOutcome,
    pod: { namespace: string; name: string; uid: string } | undefined,
  ): Promise<void> {
    if (pod === undefined) return;
    const key = o.status === 'annotated' ? 'annotated' : (o.error?.code ?? 'CLOUD');
    if (this.#reported.get(o.podUid) === key) return;
    this.#reported.set(o.podUid, key);
    const where = `${pod.namespace}/${pod.name}`;
    if (o.status === 'annotated') {
      this.#o.log.log('info', 'branch ENI allocated', {
        pod: where,
        eni: o.branch?.eniId,
        vlan: o.branch?.vlanId,
      });
    } else {
      this.#o.log.log('warn', 'branch ENI not allocated', {
        pod: where,
        code: key,
        problem: o.error?.message,
      });
    }
    try {
      await createPodEvent(
        this.#kube,
        o.status === 'annotated'
          ? {
              pod,
              type: 'Normal',
              reason: EVENT_REASONS.allocated,
              message: `allocated branch ENI ${o.branch?.eniId} on VLAN ${o.branch?.vlanId}`,
            }
          : {
              pod,
              type: 'Warning',
              reason: EVENT_REASONS.allocationFailed,
              message: `${key}: ${o.error?.detail ?? ''} (hint: ${o.error?.hint ?? ''})`,
            },
        this.#now(),
      );
    } catch (e) {
      this.#o.log.log('warn', 'event not written', { pod: where, problem: describeKubeError(e) });
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#idle;
    await this.#caches.stop();
  }
}
