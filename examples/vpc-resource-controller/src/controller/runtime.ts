import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import { type Ec2Api, type InstanceLimitsSource, isEniManagerError } from '@vpc-cni-kit/eni-manager';
import { formatGoDuration } from '@vpc-cni-kit/go-duration';
import {
  BranchController,
  type BranchPodOutcome,
  POD_ENI_RESOURCE,
  type SecurityGroupPolicy,
} from '@vpc-cni-kit/sgp-branch';
import { ec2BranchPort } from '../ec2/branch-port.js';
import {
  describeInstance,
  ensureTrunk,
  type InstanceFacts,
  instanceIdFromProviderId,
  trunkMismatch,
  withEniConfig,
} from '../ec2/instances.js';
import { describeKubeError, type KubeApis } from '../kube/apis.js';
import { kubeBranchPort } from '../kube/branch-port.js';
import { type ClusterCaches, startCaches, VPC_RESOURCES_GROUP } from '../kube/caches.js';
import { ENI_CONFIG_NODE_LABEL, eniConfigChoice, readEniConfig } from '../kube/eni-config.js';
import { createNodeEvent, createPodEvent, EVENT_REASONS, type PodEvent } from '../kube/events.js';
import {
  BRANCH_ENI_COOLDOWN_KEY,
  readBranchEniCooldown,
  VPC_CNI_CONFIG_NAME,
  VPC_CNI_CONFIG_NAMESPACE,
} from '../kube/vpc-cni-config.js';
import type { ControllerOptions } from './controller.js';
import { observedBranchPort } from './metrics.js';
import { clusterView, readPolicy, wantsTrunk } from './view.js';

/** First wait before a pod whose branch failed in EC2 or the API is tried again; it doubles up to a minute. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

/** Where each CRD the controller watches is defined in this repository. */
const CRD_MANIFESTS: Readonly<Record<string, string>> = {
  [`securitygrouppolicies.${VPC_RESOURCES_GROUP}`]: 'examples/vpc-resource-controller/manifests/crds.yaml',
  [`cninodes.${VPC_RESOURCES_GROUP}`]: 'deploy/kustomize/base/crds.yaml, with aws-node',
};

/** One acting controller: caches, node facts, the branch controller and its pass loop. */
export class Runtime {
  readonly controller: BranchController;
  readonly #caches: ClusterCaches;
  readonly #kube: KubeApis;
  readonly #ec2: Ec2Api;
  readonly #limits: InstanceLimitsSource;
  readonly #o: ControllerOptions;
  readonly #now: () => number;
  readonly #facts = new Map<string, InstanceFacts>();
  readonly #instanceOf = new Map<string, string>();
  readonly #nodeRetryAt = new Map<string, number>();
  readonly #reported = new Map<string, string>();
  /** Pods told once that their branch gets the instance's groups (no policy selects them). */
  readonly #instanceGroupsReported = new Set<string>();
  /** Pods whose last create failed in EC2 or the API (`CLOUD`): not retried before `until`, doubling to a minute. */
  readonly #backoff = new Map<string, { until: number; delayMs: number }>();
  readonly #policyProblems = new Map<string, string>();
  /** Nodes asking for a trunk whose providerID names no instance, with the providerID last warned about. */
  readonly #noInstance = new Map<string, string>();
  /** The last `branch-eni-cooldown` reading acted on (a repeat of it logs nothing). */
  #cooldownSeen: string | undefined;
  #lastSweep = 0;
  #waitLogged = false;
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
    limits: InstanceLimitsSource,
    o: ControllerOptions,
    now: () => number,
  ) {
    this.#caches = caches;
    this.#kube = kube;
    this.#ec2 = ec2;
    this.#limits = limits;
    this.#o = o;
    this.#now = now;
    const port = {
      ...ec2BranchPort(ec2, { clusterName: o.clusterName, instanceIdOf: (n) => this.#instanceOf.get(n) }),
      ...kubeBranchPort(kube, (ns, name) => caches.pods.get(name, ns)),
    };
    this.controller = new BranchController(o.metrics ? observedBranchPort(port, o.metrics) : port, {
      cooldownMs: o.cooldownMs,
      concurrency: o.concurrency ?? 8,
    });
    this.#lastSweep = now();
  }

  static async start(
    kube: KubeApis,
    ec2: Ec2Api,
    limits: InstanceLimitsSource,
    o: ControllerOptions,
    now: () => number,
  ): Promise<Runtime> {
    let self: Runtime | undefined;
    let configMapProblem: string | undefined;
    const missingCrds = new Set<string>();
    const caches = await startCaches(kube, {
      onChange: (kind: string, obj: KubernetesObject, verb) => {
        if (kind === 'nodes' && verb === 'delete' && obj.metadata?.name) self?.forgetNode(obj.metadata.name);
        if (kind === 'configmaps') self?.applyCooldown(false);
        self?.schedule();
      },
      onError: (kind, problem, failure) => {
        // A CRD that is not installed lasts until someone applies it: say so once, with where to find it, and let
        // the informer back off quietly.
        if (failure.status === 404 && failure.crd !== undefined) {
          if (missingCrds.has(failure.crd)) return;
          missingCrds.add(failure.crd);
          o.log.log('warn', `CRD ${failure.crd} is not installed`, {
            kind,
            problem,
            hint: `apply the CRDs (${CRD_MANIFESTS[failure.crd] ?? 'the manifests'}); the controller waits for them`,
          });
          return;
        }
        // The ConfigMap is optional (the flag's cooldown applies without it), and an RBAC without it is likely
        // after an upgrade: once per cause, not once a second.
        if (kind === 'configmaps') {
          if (problem === configMapProblem) return;
          configMapProblem = problem;
          o.log.log('warn', 'cannot watch the amazon-vpc-cni ConfigMap; the cooldown in force stays', {
            problem,
            hint: 'grant get, list and watch on configmaps/amazon-vpc-cni in kube-system (manifests/rbac.yaml)',
          });
          return;
        }
        o.log.log('warn', 'watch failed; restarting', { kind, problem, retryInMs: failure.retryInMs });
      },
    });
    self = new Runtime(caches, kube, ec2, limits, o, now);
    self.applyCooldown(true);
    self.schedule();
    self.#arm();
    return self;
  }

  /** Whether every watched kind has listed once (passes run only then). */
  synced(): boolean {
    return this.#caches.synced();
  }

  /**
   * Applies `branch-eni-cooldown` from the `amazon-vpc-cni` ConfigMap (the flag's value when it sets none): to
   * branches already cooling too, as the reference does. A value that cannot be applied is one warning and changes
   * nothing; a change after the start is logged and put as a `BranchENICoolDownPeriodUpdated` Event on every node,
   * the reference's way of showing it.
   */
  applyCooldown(initial: boolean): void {
    const cm = this.#caches.vpcCniConfig.get(VPC_CNI_CONFIG_NAME, VPC_CNI_CONFIG_NAMESPACE);
    const setting = readBranchEniCooldown(cm?.data);
    const seen = JSON.stringify(setting);
    if (seen === this.#cooldownSeen) return;
    this.#cooldownSeen = seen;
    const log = this.#o.log;
    const previousMs = this.controller.cooldownMs;
    const source = `${VPC_CNI_CONFIG_NAMESPACE}/${VPC_CNI_CONFIG_NAME} ${BRANCH_ENI_COOLDOWN_KEY}`;
    if (setting.kind === 'refused') {
      log.log('warn', `${BRANCH_ENI_COOLDOWN_KEY} refused; the cooldown in force stays`, {
        value: setting.text,
        problem: setting.problem,
        cooldownMs: previousMs,
        hint: `set ${source} to a whole number of seconds from 30 to 86400`,
      });
      return;
    }
    const ms = setting.kind === 'set' ? setting.ms : this.#o.cooldownMs;
    this.#o.metrics?.cooldown(ms);
    if (setting.kind === 'set' && setting.raisedFrom !== undefined)
      log.log('warn', `${BRANCH_ENI_COOLDOWN_KEY} below the minimum: raised to 30 s`, {
        value: setting.raisedFrom / 1000,
        cooldownMs: ms,
        previousMs,
      });
    if (ms === previousMs) return;
    this.controller.setCooldownMs(ms);
    if (setting.kind !== 'set' || setting.raisedFrom === undefined)
      log.log('info', 'branch ENI cooldown updated', {
        cooldownMs: ms,
        previousMs,
        source: setting.kind === 'set' ? source : 'flag (the ConfigMap sets none)',
      });
    if (initial) return;
    const message = `Branch ENI cool down period has been updated to ${formatGoDuration(ms)}`;
    for (const n of this.#caches.nodes.list()) {
      const name = n.metadata?.name;
      if (name === undefined) continue;
      const event = { type: 'Normal', reason: EVENT_REASONS.cooldownUpdated, message } as const;
      createNodeEvent(this.#kube, { name, uid: n.metadata?.uid }, event, this.#now()).catch((e: unknown) =>
        log.log('warn', 'event not written', { node: name, problem: describeKubeError(e) }),
      );
    }
  }

  forgetNode(name: string): void {
    this.#noInstance.delete(name);
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
    // Not before every watched kind has listed once: an empty pod cache after a failed list would cool down
    // (and, after the cooldown, delete) every branch in use.
    if (!this.#caches.synced()) {
      if (!this.#waitLogged) this.#o.log.log('warn', 'waiting for every watched kind to list once');
      this.#waitLogged = true;
      return;
    }
    const now = this.#now();
    const nodes = this.#caches.nodes.list();
    for (const node of nodes) await this.#refreshNode(node, now);
    const policies: SecurityGroupPolicy[] = [];
    const listedPolicies = new Set<string>();
    for (const obj of this.#caches.policies.list()) {
      const p = readPolicy(obj);
      const key = `${obj.metadata?.namespace}/${obj.metadata?.name}`;
      listedPolicies.add(key);
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
    // A refused policy deleted, then made again just as wrong, is warned about again.
    for (const key of this.#policyProblems.keys())
      if (!listedPolicies.has(key)) this.#policyProblems.delete(key);
    // A pod backing off is left out of this pass — unless it owns a branch, which leaving out would release.
    const owned = this.controller.ledger().owned;
    const waiting = (uid: string | undefined) =>
      uid !== undefined && !owned.has(uid) && (this.#backoff.get(uid)?.until ?? 0) > now;
    const view = clusterView({
      pods: this.#caches.pods.list().filter((p) => !waiting(p.metadata?.uid)),
      nodes,
      serviceAccounts: this.#caches.serviceAccounts.list(),
      policies,
      facts: this.#facts,
    });
    const outcomes = await this.controller.reconcile(view, now);
    const pods = new Map(view.pods.map((p) => [p.uid, p]));
    for (const o of outcomes) {
      if (o.status === 'failed' && o.error?.code === 'CLOUD') {
        const delayMs = Math.min(
          MAX_BACKOFF_MS,
          (this.#backoff.get(o.podUid)?.delayMs ?? FIRST_BACKOFF_MS / 2) * 2,
        );
        this.#backoff.set(o.podUid, { until: now + delayMs, delayMs });
      } else this.#backoff.delete(o.podUid);
    }
    await Promise.all(outcomes.map((o) => this.#report(o, pods.get(o.podUid))));
    this.#o.metrics?.ledger(
      [...this.#facts.values()].filter((f) => f.trunkEniId !== undefined).length,
      this.controller.ledger().cooling.size,
    );
    const present = new Set(this.#caches.pods.list().map((p) => p.metadata?.uid));
    for (const uid of this.#reported.keys()) if (!present.has(uid)) this.#reported.delete(uid);
    for (const uid of this.#instanceGroupsReported)
      if (!present.has(uid)) this.#instanceGroupsReported.delete(uid);
    for (const uid of this.#backoff.keys()) if (!present.has(uid)) this.#backoff.delete(uid);
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

  /**
   * For a node whose CNINode asks for `SecurityGroupsForPods`: reads its instance (once) and gives it a trunk.
   * Nodes that do not ask are left alone (no EC2 call, no capacity written), as the reference manages only those.
   * A failure forgets what was read, so the next try (after `nodeRetryMs`) reads the instance again: a trunk
   * attach whose answer was lost is then seen attached instead of being made twice.
   */
  async #refreshNode(node: V1Node, now: number): Promise<void> {
    const name = node.metadata?.name;
    if (name === undefined) return;
    const instanceId = instanceIdFromProviderId(node.spec?.providerID);
    const cniNode = this.#caches.cniNodes.get(name);
    if (!wantsTrunk(cniNode)) return;
    if (instanceId === undefined) {
      // Asked for a trunk, but no EC2 instance to give it to: say so once per providerID, not once a pass.
      const providerId = String(node.spec?.providerID ?? '').slice(0, 120);
      if (this.#noInstance.get(name) !== providerId)
        this.#o.log.log('warn', 'node asks for security groups for pods but names no EC2 instance; skipped', {
          node: name,
          providerID: providerId,
          hint: 'spec.providerID must be aws:///<zone>/i-<8 or 17 hex> (set by the kubelet on EC2)',
        });
      this.#noInstance.set(name, providerId);
      return;
    }
    this.#noInstance.delete(name);
    this.#instanceOf.set(name, instanceId);
    const choice = eniConfigChoice(node, cniNode);
    const eniConfig = choice.kind === 'named' ? choice.name : undefined;
    let facts = this.#facts.get(name);
    // Another ENIConfig (or none any more): the node's facts are read again, so new branches go where it says.
    if (facts !== undefined && facts.eniConfig !== eniConfig) {
      this.#facts.delete(name);
      facts = undefined;
    }
    if (facts !== undefined && (facts.trunkEniId !== undefined || facts.branchLimit === 0)) return;
    if ((this.#nodeRetryAt.get(name) ?? 0) > now) return;
    const metrics = this.#o.metrics;
    let step: 'describe_instance_nw_interface' | 'create_trunk_eni' | undefined;
    try {
      if (facts === undefined) {
        if (choice.kind === 'unnamed')
          throw new Error(
            `its CNINode lists CustomNetworking without an ENIConfig name (hint: label the node ${ENI_CONFIG_NODE_LABEL}=<ENIConfig>, or let aws-node write the name)`,
          );
        // The ENIConfig first: while it is missing, each retry costs one GET, not a DescribeInstances too.
        const spec = eniConfig !== undefined ? await readEniConfig(this.#kube, eniConfig) : undefined;
        step = 'describe_instance_nw_interface';
        facts = await describeInstance(this.#ec2, instanceId);
        step = undefined;
        if (eniConfig !== undefined && spec !== undefined) facts = withEniConfig(facts, eniConfig, spec);
        this.#facts.set(name, facts);
        if (eniConfig !== undefined) {
          const mismatch = trunkMismatch(facts);
          for (const attribute of mismatch) metrics?.unreconciledTrunk(attribute);
          if (mismatch.length > 0)
            this.#o.log.log('warn', 'the trunk ENI differs from the node ENIConfig; left as it is', {
              node: name,
              trunkEniId: facts.trunkEniId,
              eniConfig,
              differs: mismatch,
              trunkSubnet: facts.trunkSubnetId,
              wantedSubnet: facts.subnetId,
              hint: 'new branch ENIs go to the ENIConfig subnet; replace the node to move its trunk',
            });
        }
      }
      if (facts.trunkEniId === undefined && facts.branchLimit > 0) {
        step = 'create_trunk_eni';
        const trunkEniId = await ensureTrunk(this.#ec2, facts, {
          clusterName: this.#o.clusterName,
          nodeName: name,
          limits: this.#limits,
        });
        step = undefined;
        this.#facts.set(name, {
          ...facts,
          trunkEniId,
          trunkSubnetId: facts.subnetId,
          trunkGroupIds: facts.groupIds,
        });
        this.#o.log.log('info', 'trunk ENI attached', {
          node: name,
          instanceId,
          trunkEniId,
          subnet: facts.subnetId,
          ...(eniConfig !== undefined ? { eniConfig } : {}),
        });
      }
      this.#nodeRetryAt.delete(name);
    } catch (e) {
      if (step !== undefined)
        metrics?.trunkError(
          isEniManagerError(e) && e.code === 'NoFreeDeviceIndex' ? 'find_free_index' : step,
        );
      this.#facts.delete(name);
      const retryMs = this.#o.nodeRetryMs ?? 5000;
      this.#nodeRetryAt.set(name, now + retryMs);
      this.#o.log.log('warn', 'node not ready for branches; retrying', {
        node: name,
        instanceId,
        retryMs,
        problem: e instanceof Error ? e.message : String(e),
      });
    }
  }

  /**
   * Logs an outcome and puts an Event on the pod, once per pod and cause; before it, once per pod, the Warning
   * that its branch gets the instance's groups when no policy selects it.
   */
  async #report(
    o: BranchPodOutcome,
    pod: { namespace: string; name: string; uid: string } | undefined,
  ): Promise<void> {
    if (pod === undefined) return;
    if (o.groupSource === 'instance' && !this.#instanceGroupsReported.has(o.podUid)) {
      this.#instanceGroupsReported.add(o.podUid);
      await this.#reportInstanceGroups(pod, o.groupIds ?? []);
    }
    const key = o.status === 'failed' ? (o.error?.code ?? 'CLOUD') : o.status;
    if (this.#reported.get(o.podUid) === key) return;
    this.#reported.set(o.podUid, key);
    const where = `${pod.namespace}/${pod.name}`;
    let event: PodEvent;
    if (o.status === 'annotated') {
      this.#o.log.log('info', 'branch ENI allocated', {
        pod: where,
        eni: o.branch?.eniId,
        vlan: o.branch?.vlanId,
      });
      event = {
        pod,
        type: 'Normal',
        reason: EVENT_REASONS.allocated,
        message: `allocated branch ENI ${o.branch?.eniId} on VLAN ${o.branch?.vlanId}`,
      };
    } else if (o.status === 'unrequested') {
      const groups = (o.groupIds ?? []).join(', ');
      this.#o.log.log('warn', 'branch ENI not allocated: the pod does not request it', {
        pod: where,
        groups,
      });
      event = {
        pod,
        type: 'Warning',
        reason: EVENT_REASONS.notRequested,
        message:
          `a SecurityGroupPolicy selects this pod (groups ${groups}) but it does not request ${POD_ENI_RESOURCE}: ` +
          "no branch ENI, it runs with its node's security groups (hint: it was admitted while the pod webhook " +
          'was unavailable; recreate it once the webhook answers)',
      };
    } else {
      this.#o.log.log('warn', 'branch ENI not allocated', {
        pod: where,
        code: key,
        problem: o.error?.message,
      });
      event = {
        pod,
        type: 'Warning',
        reason: EVENT_REASONS.allocationFailed,
        message: `${key}: ${o.error?.detail ?? ''} (hint: ${o.error?.hint ?? ''})`,
      };
    }
    await this.#event(event);
  }

  /**
   * The reference's `SecurityGroupRequested` Warning for a pod that requests a branch but that no policy selects:
   * its branch gets the instance's groups (the primary ENI's, or the node's ENIConfig's).
   */
  async #reportInstanceGroups(
    pod: { namespace: string; name: string; uid: string },
    groupIds: readonly string[],
  ): Promise<void> {
    const groups = groupIds.join(', ');
    this.#o.log.log(
      'warn',
      "no SecurityGroupPolicy selects the pod; its branch ENI gets the instance's groups",
      {
        pod: `${pod.namespace}/${pod.name}`,
        groups,
      },
    );
    await this.#event({
      pod,
      type: 'Warning',
      reason: EVENT_REASONS.instanceGroups,
      message:
        `no SecurityGroupPolicy selects this pod: its branch ENI gets the instance's security groups (${groups}) ` +
        '(hint: a policy that selected it at admission was deleted or changed; to get other groups, make a ' +
        'policy select it and recreate the pod)',
    });
  }

  async #event(event: PodEvent): Promise<void> {
    try {
      await createPodEvent(this.#kube, event, this.#now());
    } catch (e) {
      this.#o.log.log('warn', 'event not written', {
        pod: `${event.pod.namespace}/${event.pod.name}`,
        problem: describeKubeError(e),
      });
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#idle;
    await this.#caches.stop();
  }
}
