import { type BranchEni, formatPodEniAnnotation, parsePodEniAnnotation } from './annotation.js';
import { isSgpError, SgpError, type SgpErrorCode } from './errors.js';
import type { BranchControllerPort, BranchEniRecord, CreatedBranchEni, PodRef } from './port.js';
import { podSecurityGroups, type SecurityGroupPolicy } from './selector.js';
import { lowestFreeVlan } from './vlan.js';

/** A node as the branch controller sees it. */
export interface BranchNodeView {
  /** Node name. */
  readonly name: string;
  /** The subnet new branch ENIs go into (the node's, or its ENIConfig's). */
  readonly subnetId: string;
  /** The trunk ENI, once attached. */
  readonly trunkEniId?: string | undefined;
  /** Branches the instance type allows on its trunk; `0` = the type cannot trunk. */
  readonly branchLimit: number;
  /**
   * The instance's security groups, as the reference's `CurrentInstanceSecurityGroups`: its primary ENI's, or with
   * custom networking its ENIConfig's (the primary ENI's when the ENIConfig lists none). A pod that requests a
   * branch but that no policy selects gets a branch with these groups.
   */
  readonly instanceGroupIds: readonly string[];
}

/** A pod as the branch controller sees it. */
export interface BranchPodView extends PodRef {
  /** The node it is scheduled on (none yet: nothing to do). */
  readonly nodeName?: string | undefined;
  /** Pod labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** Labels of its service account. */
  readonly serviceAccountLabels: Readonly<Record<string, string>>;
  /**
   * Its ServiceAccount is not known (yet): {@link BranchPodView.serviceAccountLabels} are a guess. Such a pod
   * that no policy selects waits instead of getting its node's groups (a policy may select it by its
   * ServiceAccount's labels), as the reference waits when it cannot read the ServiceAccount.
   */
  readonly serviceAccountMissing?: boolean | undefined;
  /**
   * It requests the `vpc.amazonaws.com/pod-eni` resource (the pod webhook adds it to a pod a policy selects).
   * Only such a pod gets a branch, as in the reference: a pod a policy selects that was admitted without it (the
   * webhook was down, `failurePolicy: Ignore`) would get a branch ENI and an annotation its node ignores.
   */
  readonly requestsBranch: boolean;
  /** Its current `vpc.amazonaws.com/pod-eni` annotation. */
  readonly annotation?: string | undefined;
  /** Being deleted (or terminal): its branch goes to cooldown. */
  readonly terminating?: boolean | undefined;
}

/** The cluster state one reconcile works from. */
export interface BranchClusterView {
  /** Nodes. */
  readonly nodes: readonly BranchNodeView[];
  /** Pods (all namespaces). */
  readonly pods: readonly BranchPodView[];
  /** SecurityGroupPolicies (validated). */
  readonly policies: readonly SecurityGroupPolicy[];
}

/** A branch the controller owns for a live pod. */
export interface OwnedBranch {
  /** Pod UID. */
  readonly podUid: string;
  /** Node. */
  readonly nodeName: string;
  /** Trunk ENI it is associated to. */
  readonly trunkEniId: string;
  /** VLAN id on that trunk. */
  readonly vlanId: number;
  /** The branch ENI. */
  readonly eni: CreatedBranchEni;
  /** Association id. */
  readonly associationId: string;
  /** The annotation was written. */
  readonly annotated: boolean;
}

/** A branch on its way out: disassociated and deleted once its cooldown has passed. */
export interface CoolingBranch {
  /** The branch ENI. */
  readonly eniId: string;
  /** Node (its VLAN stays reserved on that node's trunk until the ENI is gone). */
  readonly nodeName: string;
  /** VLAN id it may still hold. */
  readonly vlanId?: number | undefined;
  /** Known association id. */
  readonly associationId?: string | undefined;
  /** When it was released (ms, the injected clock). */
  readonly since: number;
}

/**
 * Where a branch's groups come from: `policy`, the union of the policies that select the pod; `instance`, its
 * node's {@link BranchNodeView.instanceGroupIds}, for a pod that requests a branch but that no policy selects.
 */
export type BranchGroupSource = 'policy' | 'instance';

/** One step the controller decided (pure output of {@link decideBranchActions}). */
export type BranchAction =
  | {
      readonly kind: 'create';
      readonly pod: BranchPodView;
      readonly node: BranchNodeView;
      readonly groupIds: readonly string[];
      readonly groupSource: BranchGroupSource;
      readonly vlanId: number;
    }
  | { readonly kind: 'annotate'; readonly pod: BranchPodView; readonly branch: OwnedBranch }
  | {
      /** A policy selects the pod, but it does not request the resource: it gets no branch. */
      readonly kind: 'unrequested';
      readonly pod: BranchPodView;
      readonly groupIds: readonly string[];
    }
  | { readonly kind: 'release'; readonly branch: OwnedBranch }
  | { readonly kind: 'delete'; readonly branch: CoolingBranch }
  | { readonly kind: 'capacity'; readonly nodeName: string; readonly capacity: number }
  | {
      readonly kind: 'fail';
      readonly pod: BranchPodView;
      readonly code: SgpErrorCode;
      readonly detail: string;
    };

/** What the controller holds (the input of {@link decideBranchActions}). */
export interface BranchLedger {
  /** Owned branches by pod UID. */
  readonly owned: ReadonlyMap<string, OwnedBranch>;
  /** Cooling branches by ENI id. */
  readonly cooling: ReadonlyMap<string, CoolingBranch>;
  /** Capacity last written per node. */
  readonly capacity: ReadonlyMap<string, number>;
}

/** The VLAN ids held on a node's trunk: owned branches and cooling ones that may still be associated. */
export function usedVlans(ledger: BranchLedger, nodeName: string): Set<number> {
  const used = new Set<number>();
  for (const b of ledger.owned.values()) if (b.nodeName === nodeName) used.add(b.vlanId);
  for (const c of ledger.cooling.values())
    if (c.nodeName === nodeName && c.vlanId !== undefined) used.add(c.vlanId);
  return used;
}

/**
 * Decides what to do (pure): a branch for every scheduled, live pod that requests `vpc.amazonaws.com/pod-eni`
 * and has none (`create` with the lowest free VLAN id of its node's trunk, or `fail` with `NO_TRUNK`, `INSTANCE_NOT_TRUNKABLE`
 * or `BRANCH_LIMIT_REACHED`), with the groups of the policies that select it, or, when none does, with its node's
 * instance groups (`groupSource: 'instance'`, as the reference; a pod whose ServiceAccount is not known yet waits);
 * `annotate` for owned branches not yet written; `unrequested` for a
 * pod a policy selects that does not request the resource (it gets no branch); `release` for branches whose pod is
 * gone, terminating or moved, or not yet annotated for a pod that does not request the resource; `delete` for cooling branches past `cooldownMs`; `capacity` where a node's
 * `vpc.amazonaws.com/pod-eni` capacity (its branch limit once it has a trunk, else 0) changed. With `readyNodes`,
 * creates happen only on those nodes (whose ledger was checked against the cloud), others `fail` with `CLOUD`.
 */
export function decideBranchActions(
  view: BranchClusterView,
  ledger: BranchLedger,
  now: number,
  cooldownMs: number,
  readyNodes?: ReadonlySet<string>,
): BranchAction[] {
  const actions: BranchAction[] = [];
  const nodes = new Map(view.nodes.map((n) => [n.name, n]));
  const live = new Map<string, BranchPodView>();
  for (const p of view.pods) if (!p.terminating && p.nodeName !== undefined) live.set(p.uid, p);
  const taken = new Map<string, Set<number>>();
  const vlansOf = (node: string) => {
    let s = taken.get(node);
    if (s === undefined) taken.set(node, (s = usedVlans(ledger, node)));
    return s;
  };

  for (const branch of ledger.owned.values()) {
    const pod = live.get(branch.podUid);
    // An unannotated branch of a pod that does not request one (made before the request was required) serves no
    // one: its node gives the pod a pool address. An annotated one stays with its pod (it may be plumbed).
    if (pod === undefined || pod.nodeName !== branch.nodeName || (!branch.annotated && !pod.requestsBranch))
      actions.push({ kind: 'release', branch });
    else if (!branch.annotated) actions.push({ kind: 'annotate', pod, branch });
  }
  for (const pod of live.values()) {
    if (ledger.owned.has(pod.uid)) continue;
    const selected = podSecurityGroups(pod, view.policies);
    if (!pod.requestsBranch) {
      if (selected.length > 0) actions.push({ kind: 'unrequested', pod, groupIds: selected });
      continue;
    }
    // Selected by no policy (deleted or changed after admission, or none ever): the instance's groups, as the
    // reference. Not while the ServiceAccount is unknown: a policy may select the pod by its labels.
    if (selected.length === 0 && pod.serviceAccountMissing) continue;
    const node = nodes.get(pod.nodeName!);
    if (node === undefined) continue;
    const groupSource: BranchGroupSource = selected.length > 0 ? 'policy' : 'instance';
    // A view from plain JavaScript may leave the field out: that is the refusal below, not a TypeError.
    const groupIds = groupSource === 'policy' ? selected : (node.instanceGroupIds ?? []);
    if (node.branchLimit === 0) {
      actions.push({ kind: 'fail', pod, code: 'INSTANCE_NOT_TRUNKABLE', detail: `node ${node.name}` });
      continue;
    }
    if (node.trunkEniId === undefined) {
      actions.push({ kind: 'fail', pod, code: 'NO_TRUNK', detail: `node ${node.name} has no trunk ENI yet` });
      continue;
    }
    if (readyNodes !== undefined && !readyNodes.has(node.name)) {
      actions.push({
        kind: 'fail',
        pod,
        code: 'CLOUD',
        detail: `the branches of node ${node.name} could not be listed yet`,
      });
      continue;
    }
    const used = vlansOf(node.name);
    const vlanId = lowestFreeVlan(used, node.branchLimit);
    if (vlanId === undefined) {
      actions.push({
        kind: 'fail',
        pod,
        code: 'BRANCH_LIMIT_REACHED',
        detail: `node ${node.name}: ${node.branchLimit} of ${node.branchLimit} branches in use or cooling down`,
      });
      continue;
    }
    if (groupIds.length === 0) {
      // EC2 would put the branch in the VPC's default group: refuse instead.
      actions.push({
        kind: 'fail',
        pod,
        code: 'INVALID_ARGUMENT',
        detail: `no SecurityGroupPolicy selects the pod and node ${node.name} has no instance security groups`,
      });
      continue;
    }
    used.add(vlanId);
    actions.push({ kind: 'create', pod, node, groupIds, groupSource, vlanId });
  }
  for (const c of ledger.cooling.values())
    if (now - c.since >= cooldownMs) actions.push({ kind: 'delete', branch: c });
  for (const node of view.nodes) {
    const capacity = node.trunkEniId === undefined ? 0 : node.branchLimit;
    if (ledger.capacity.get(node.name) !== capacity)
      actions.push({ kind: 'capacity', nodeName: node.name, capacity });
  }
  return actions;
}

/** The actions that concern one pod. */
type PodAction = Extract<BranchAction, { kind: 'fail' | 'create' | 'annotate' | 'unrequested' }>;

/** Outcome of one pod in a reconcile. */
export interface BranchPodOutcome {
  /** Pod UID. */
  readonly podUid: string;
  /**
   * `annotated`: the pod has its branch and annotation; `failed`: see `error` (retried next reconcile);
   * `unrequested`: a policy selects the pod but it does not request `vpc.amazonaws.com/pod-eni`, so it gets no
   * branch (it runs with its node's security groups until it is recreated with the request).
   */
  readonly status: 'annotated' | 'failed' | 'unrequested';
  /**
   * The groups the policies select for the pod (`unrequested`), or those its branch was created with (a create
   * in this reconcile, `annotated` or `failed`).
   */
  readonly groupIds?: readonly string[] | undefined;
  /**
   * Where the groups of a create in this reconcile came from: `instance` means no policy selects the pod and its
   * branch gets its node's instance groups (the reference warns about it on the pod).
   */
  readonly groupSource?: BranchGroupSource | undefined;
  /** The branch (annotated). */
  readonly branch?: BranchEni | undefined;
  /** The cause (failed): a typed error for an Event on the pod. */
  readonly error?: SgpError | undefined;
}

/** Options of {@link BranchController}. */
export interface BranchControllerOptions {
  /** Time a released branch waits before it is deleted (lets the node tear down first). @defaultValue `60000` */
  readonly cooldownMs?: number | undefined;
  /**
   * Pods served at once in a reconcile (creates and annotations of different pods never share a VLAN id or an
   * ENI). @defaultValue `1`
   */
  readonly concurrency?: number | undefined;
}

function checkedCooldown(cooldownMs: number, op: string): number {
  if (!Number.isFinite(cooldownMs) || cooldownMs < 0)
    throw new SgpError({ code: 'INVALID_ARGUMENT', op, detail: `bad cooldownMs: ${cooldownMs}` });
  return cooldownMs;
}

function cloud(op: string, error: unknown): SgpError {
  if (isSgpError(error)) return error;
  return new SgpError({
    code: 'CLOUD',
    op,
    detail: error instanceof Error ? error.message : String(error),
    cause: error,
  });
}

/**
 * The branch-ENI side of security groups for pods, over a {@link BranchControllerPort}: each {@link reconcile}
 * runs {@link decideBranchActions} against its ledger and carries the actions out one at a time. A create is
 * undone on any fault before the annotation (a branch that cannot be deleted right away cools down instead), a
 * VLAN id stays reserved until its ENI is gone, and {@link recover} rebuilds the ledger from the cloud after a
 * restart, so nothing leaks. Not re-entrant: run one reconcile at a time.
 */
export class BranchController {
  readonly #port: BranchControllerPort;
  #cooldownMs: number;
  readonly #concurrency: number;
  readonly #owned = new Map<string, OwnedBranch>();
  readonly #cooling = new Map<string, CoolingBranch>();
  readonly #capacity = new Map<string, number>();
  readonly #recovered = new Set<string>();

  constructor(port: BranchControllerPort, options: BranchControllerOptions = {}) {
    const cooldown = checkedCooldown(options.cooldownMs ?? 60_000, 'BranchController');
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new SgpError({
        code: 'INVALID_ARGUMENT',
        op: 'BranchController',
        detail: `bad concurrency: ${concurrency}`,
      });
    this.#port = port;
    this.#cooldownMs = cooldown;
    this.#concurrency = concurrency;
  }

  /** The cooldown in force (ms). */
  get cooldownMs(): number {
    return this.#cooldownMs;
  }

  /**
   * Changes the cooldown from the next {@link reconcile} on. It applies to branches already cooling as well (their
   * release time is kept, the wait is measured against the new value), as the reference applies a new
   * `branch-eni-cooldown`. Throws `INVALID_ARGUMENT` (and keeps the old value) for a negative or non-finite value.
   */
  setCooldownMs(cooldownMs: number): void {
    this.#cooldownMs = checkedCooldown(cooldownMs, 'setCooldownMs');
  }

  /** The ledger (a snapshot). */
  ledger(): BranchLedger {
    return {
      owned: new Map(this.#owned),
      cooling: new Map(this.#cooling),
      capacity: new Map(this.#capacity),
    };
  }

  /**
   * Rebuilds the ledger from the cloud (after a start; {@link reconcile} does it by itself for every node it has
   * not recovered yet, and creates nothing on a node until then): lists each node's branch ENIs; an associated one
   * whose pod is live and annotated with it (or not yet annotated) is adopted, every other one cools down from
   * `now`. Throws `CLOUD` when a node's list fails (the nodes listed before it stay recovered).
   */
  async recover(view: BranchClusterView, now: number): Promise<void> {
    for (const node of view.nodes)
      if (!this.#recovered.has(node.name)) await this.#recoverNode(view, node, now);
  }

  async #recoverNode(view: BranchClusterView, node: BranchNodeView, now: number): Promise<void> {
    let records: BranchEniRecord[];
    try {
      records = await this.#port.listBranchEnis(node.name);
    } catch (error) {
      throw cloud('recover', error);
    }
    const pods = new Map(
      view.pods.filter((p) => !p.terminating && p.nodeName !== undefined).map((p) => [p.uid, p]),
    );
    const known = new Set([...this.#owned.values()].map((b) => b.eni.eniId));
    for (const r of records) {
      if (this.#cooling.has(r.eniId) || known.has(r.eniId)) continue;
      const pod = pods.get(r.podUid);
      const annotated = pod?.annotation ? safeParse(pod.annotation)?.eniId === r.eniId : false;
      const adoptable =
        pod !== undefined &&
        pod.nodeName === node.name &&
        !this.#owned.has(pod.uid) &&
        r.associationId !== undefined &&
        r.vlanId !== undefined &&
        node.trunkEniId !== undefined &&
        (annotated || !pod.annotation);
      if (adoptable) {
        this.#owned.set(pod.uid, {
          podUid: pod.uid,
          nodeName: node.name,
          trunkEniId: node.trunkEniId!,
          vlanId: r.vlanId!,
          eni: r,
          associationId: r.associationId!,
          annotated,
        });
      } else {
        this.#cooling.set(r.eniId, {
          eniId: r.eniId,
          nodeName: node.name,
          vlanId: r.vlanId,
          associationId: r.associationId,
          since: now,
        });
      }
    }
    this.#recovered.add(node.name);
  }

  /**
   * Cools down every listed branch ENI of the node the ledger does not know (one whose create answer was lost),
   * from `now`. Run it now and then (the reference sweeps for orphans periodically).
   */
  async sweepOrphans(nodeName: string, now: number): Promise<number> {
    let records: BranchEniRecord[];
    try {
      records = await this.#port.listBranchEnis(nodeName);
    } catch (error) {
      throw cloud('sweepOrphans', error);
    }
    const known = new Set([...this.#owned.values()].map((b) => b.eni.eniId));
    let found = 0;
    for (const r of records) {
      if (known.has(r.eniId) || this.#cooling.has(r.eniId)) continue;
      this.#cooling.set(r.eniId, {
        eniId: r.eniId,
        nodeName,
        vlanId: r.vlanId,
        associationId: r.associationId,
        since: now,
      });
      found++;
    }
    return found;
  }

  /**
   * One pass: recovers nodes not recovered yet, releases and deletes first (so VLAN ids whose ENIs are gone can be
   * given again in the same pass), then decides again and creates, annotates, reports failures and capacity.
   * Returns the outcome of every pod acted on, failed (retried next pass), or selected by a policy without requesting
   * the resource (`unrequested`, decided again each pass).
   */
  async reconcile(view: BranchClusterView, now: number): Promise<BranchPodOutcome[]> {
    for (const node of view.nodes) {
      if (!this.#recovered.has(node.name)) await this.#recoverNode(view, node, now).catch(() => undefined);
    }
    for (const action of decideBranchActions(view, this.ledger(), now, this.#cooldownMs, this.#recovered)) {
      if (action.kind === 'release') this.#release(action.branch, now);
    }
    for (const action of decideBranchActions(view, this.ledger(), now, this.#cooldownMs, this.#recovered)) {
      if (action.kind === 'delete') await this.#delete(action.branch);
    }
    const actions = decideBranchActions(view, this.ledger(), now, this.#cooldownMs, this.#recovered);
    // Creates and annotations of different pods are independent (each has its own VLAN id, decided above), so
    // they run `concurrency` at a time; outcomes keep the order of the actions.
    const perPod = actions.filter(
      (a): a is PodAction =>
        a.kind === 'fail' || a.kind === 'create' || a.kind === 'annotate' || a.kind === 'unrequested',
    );
    const serve = async (action: PodAction): Promise<BranchPodOutcome> => {
      switch (action.kind) {
        case 'fail':
          return {
            podUid: action.pod.uid,
            status: 'failed',
            error: new SgpError({ code: action.code, op: 'reconcile', detail: action.detail }),
          };
        case 'unrequested':
          return { podUid: action.pod.uid, status: 'unrequested', groupIds: action.groupIds };
        case 'create':
          return this.#create(action, now);
        case 'annotate':
          return this.#annotate(action.pod, action.branch, now);
      }
    };
    const outcomes: BranchPodOutcome[] = new Array(perPod.length);
    let next = 0;
    const worker = async () => {
      while (next < perPod.length) {
        const i = next++;
        outcomes[i] = await serve(perPod[i]!);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.#concurrency, Math.max(1, perPod.length)) }, worker),
    );
    for (const action of actions) {
      if (action.kind !== 'capacity') continue;
      try {
        await this.#port.setPodEniCapacity(action.nodeName, action.capacity);
        this.#capacity.set(action.nodeName, action.capacity);
      } catch {
        // retried next reconcile: the ledger still holds the old value
      }
    }
    return outcomes;
  }

  async #create(action: Extract<BranchAction, { kind: 'create' }>, now: number): Promise<BranchPodOutcome> {
    const { pod, node, groupIds, groupSource, vlanId } = action;
    const groups = { groupIds, groupSource };
    const ref: PodRef = { namespace: pod.namespace, name: pod.name, uid: pod.uid };
    let eni: CreatedBranchEni;
    try {
      eni = await this.#port.createBranchEni({
        nodeName: node.name,
        pod: ref,
        subnetId: node.subnetId,
        groupIds,
      });
    } catch (error) {
      return { podUid: pod.uid, status: 'failed', error: cloud('createBranchEni', error), ...groups };
    }
    let associationId: string;
    try {
      ({ associationId } = await this.#port.associateBranch({
        trunkEniId: node.trunkEniId!,
        branchEniId: eni.eniId,
        vlanId,
      }));
    } catch (error) {
      // The association may have happened (lost answer): the VLAN stays reserved until the ENI is gone.
      const cooling: CoolingBranch = {
        eniId: eni.eniId,
        nodeName: node.name,
        vlanId,
        since: now - this.#cooldownMs,
      };
      this.#cooling.set(eni.eniId, cooling);
      await this.#delete(cooling);
      return { podUid: pod.uid, status: 'failed', error: cloud('associateBranch', error), ...groups };
    }
    const owned: OwnedBranch = {
      podUid: pod.uid,
      nodeName: node.name,
      trunkEniId: node.trunkEniId!,
      vlanId,
      eni,
      associationId,
      annotated: false,
    };
    this.#owned.set(pod.uid, owned);
    return { ...(await this.#annotate(pod, owned, now)), ...groups };
  }

  async #annotate(pod: BranchPodView, branch: OwnedBranch, now: number): Promise<BranchPodOutcome> {
    const eni = toBranchEni(branch);
    try {
      await this.#port.annotatePod(
        { namespace: pod.namespace, name: pod.name, uid: pod.uid },
        formatPodEniAnnotation(eni),
      );
    } catch (error) {
      const e = cloud('annotatePod', error);
      if (e.code === 'POD_NOT_FOUND') this.#release(branch, now);
      return { podUid: pod.uid, status: 'failed', error: e };
    }
    this.#owned.set(pod.uid, { ...branch, annotated: true });
    return { podUid: pod.uid, status: 'annotated', branch: eni };
  }

  #release(branch: OwnedBranch, now: number): void {
    this.#owned.delete(branch.podUid);
    this.#cooling.set(branch.eni.eniId, {
      eniId: branch.eni.eniId,
      nodeName: branch.nodeName,
      vlanId: branch.vlanId,
      associationId: branch.associationId,
      since: now,
    });
  }

  /** Disassociates (finding the association when unknown) and deletes; on any fault it stays cooling for the next pass. */
  async #delete(c: CoolingBranch): Promise<void> {
    try {
      let associationId = c.associationId;
      if (associationId === undefined && c.vlanId !== undefined) {
        const records = await this.#port.listBranchEnis(c.nodeName);
        associationId = records.find((r) => r.eniId === c.eniId)?.associationId;
      }
      if (associationId !== undefined) {
        await this.#port.disassociateBranch(associationId);
        this.#cooling.set(c.eniId, { ...c, associationId: undefined, vlanId: undefined });
      }
      await this.#port.deleteBranchEni(c.eniId);
      this.#cooling.delete(c.eniId);
    } catch {
      // stays cooling (its VLAN reserved while it may be associated); retried next pass
    }
  }
}

function safeParse(text: string): BranchEni | undefined {
  for (const family of [4, 6] as const) {
    try {
      return parsePodEniAnnotation(text, { family });
    } catch {
      // try the other family
    }
  }
  return undefined;
}

function toBranchEni(b: OwnedBranch): BranchEni {
  return {
    eniId: b.eni.eniId,
    mac: b.eni.mac.toLowerCase(),
    vlanId: b.vlanId,
    associationId: b.associationId,
    ...(b.eni.ipv4 !== undefined ? { ipv4: b.eni.ipv4, subnetCidr: b.eni.subnetCidr } : {}),
    ...(b.eni.ipv6 !== undefined ? { ipv6: b.eni.ipv6, subnetV6Cidr: b.eni.subnetV6Cidr } : {}),
  };
}
