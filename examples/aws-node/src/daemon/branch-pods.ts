/**
 * Security groups for pods on the node: which pods get a branch ENI, what the daemon replies for them, and the
 * record of the branch pods it plumbed. The warm pool and the datastore never see a branch pod: its address is the
 * branch ENI's, owned by the VPC resource controller.
 */
import { cidrNetwork, formatIp, parseCidr } from '@vpc-cni-kit/ip-address';
import {
  type BranchEni,
  type BranchLinkKind,
  type BranchNetworkPlan,
  type BranchTeardownPlan,
  type EnforcingMode,
  type HostLink,
  isSgpError,
  POD_ENI_ANNOTATION,
  POD_ENI_RESOURCE,
  parsePodEniAnnotation,
  planBranchNetwork,
  planBranchTeardown,
  podRequestsBranch,
  type ResourceLimits,
  SgpError,
  trunkLinkOf,
} from '@vpc-cni-kit/sgp-branch';
import {
  type BranchLedgerRead,
  type BranchLedgerStore,
  type BranchPodRecord,
  parseBranchLedger,
  readBranchLedger,
  serializeBranchLedger,
} from './branch-pod-ledger.js';
import type { Logger } from './logger.js';

export type { BranchPodRecord } from './branch-pod-ledger.js';

/** A pod as the daemon reads it from the API: its annotations and its containers' limits, in spec order. */
export interface PodView {
  readonly annotations: Readonly<Record<string, string>>;
  readonly containerLimits: readonly (ResourceLimits | undefined)[];
}

/** A branch ENI EC2 holds for this node. */
export interface HeldBranch {
  /** `<namespace>/<name>` of the pod it was made for, when the controller tagged it so (`BRANCH_POD_TAG`). */
  readonly pod?: string | undefined;
}

/** The trunk ENI of this node, once EC2 lists it. */
export interface TrunkEni {
  readonly eniId: string;
  readonly mac: string;
}

/** Host-side plumbing of a branch pod (sgp-branch's setup/teardown over netlink in production). */
export interface BranchPlumber {
  /** Veth, pod side, branch link, table and rules; rolls back on failure. */
  setup(
    plan: BranchNetworkPlan,
    pod: { containerIf: string; netnsPath: string; mtu: number },
  ): Promise<{ hostMac: string }>;
  /** Removes what setup made (idempotent). */
  teardown(plan: BranchTeardownPlan): Promise<void>;
}

/** What {@link BranchPods} depends on. */
export interface BranchPodsDeps {
  readonly mode: EnforcingMode;
  readonly linkKind: BranchLinkKind;
  /** Reads the pod; throws {@link SgpError} `POD_NOT_FOUND` when the API does not know it or cannot be reached. */
  readonly readPod: (namespace: string, name: string) => Promise<PodView>;
  /** The node's trunk ENI, or `undefined` while it has none. */
  readonly trunk: () => Promise<TrunkEni | undefined>;
  /** The host's links (to find the trunk's by MAC). */
  readonly hostLinks: () => Promise<readonly HostLink[]>;
  readonly plumber: BranchPlumber;
  /**
   * Readies the trunk's host link once (up, with the ENI MTU), as the node does for any attached ENI; a
   * hot-plugged interface arrives down.
   */
  readonly prepareTrunk?: (link: HostLink) => Promise<void>;
  /**
   * Branches one trunk of this instance type carries (the published table). A branch pod without its annotation
   * on a node whose branch links already number this many fails with `BRANCH_LIMIT_REACHED`, not
   * `ANNOTATION_MISSING`: the controller cannot give it one.
   */
  readonly branchLimit?: number | undefined;
  /**
   * The branch ENIs EC2 holds for this node (created for its pods: live, made and not yet annotated or plumbed,
   * or released and waiting out the controller's cooldown). Asked only for a branch pod without its annotation on a
   * node below {@link BranchPodsDeps.branchLimit} by its links: a trunk whose slots are all held, some by branches
   * in cooldown the node no longer carries, fails the pod with `BRANCH_LIMIT_REACHED` rather than
   * `ANNOTATION_MISSING`. Absent (IMDS-only mode), or rejecting: the node answers from its links alone.
   */
  readonly heldBranches?: () => Promise<readonly HeldBranch[]>;
  /**
   * Where the records persist across daemon restarts (ADR 0030). Absent: in memory only (tests, and nothing to
   * rebuild after a restart).
   */
  readonly ledger?: BranchLedgerStore;
  /** Wall-clock ms, for the record. */
  readonly now: () => number;
  /** Where a pod-eni annotation ignored on a pod that does not ask for a branch is reported (once per pod). */
  readonly log: Logger;
}

/** What {@link BranchPods.restore} found at start. */
export interface BranchRestoreReport {
  /** Records in the ledger. */
  readonly found: number;
  /** Records kept: their branch link is on the host with the branch's MAC. */
  readonly restored: BranchPodRecord[];
  /** Records dropped, and why. */
  readonly dropped: { record: BranchPodRecord; why: 'branch-link-gone' | 'branch-link-replaced' }[];
  /** Why the file or some of its records could not be read. */
  readonly problems: string[];
  /** Branch links on the host that no record names (plumbed by the reference's plugin, or by another daemon). */
  readonly unrecorded: string[];
}

/** A CNI GC of branch pods as {@link BranchPods.collect} takes it. */
export interface BranchGcInput {
  readonly networkName: string;
  /** `<containerID>\u0000<ifName>` of every attachment the runtime still uses. */
  readonly valid: ReadonlySet<string>;
  /** When the runtime made the request (wall-clock ms): a pod plumbed since is never collected. */
  readonly requestedAt: number;
  /** Names of the host's links: a pod whose host veth exists is still in use. */
  readonly links: ReadonlySet<string>;
}

/** What {@link BranchPods.collect} did. */
export interface BranchGcOutcome {
  /** Branch pods whose link, table routes and rules were removed. */
  readonly collected: BranchPodRecord[];
  /** Stale branch pods kept, and why. */
  readonly kept: { record: BranchPodRecord; why: 'younger-than-request' | 'in-use' }[];
}

/** The branch of one pod, decided from its annotation and the node's trunk. */
export interface ResolvedBranch {
  readonly branch: BranchEni;
  /** The pod address (the branch's IPv4 address). */
  readonly podIp: string;
  /** `PodENISubnetGW`: the branch subnet's first address. */
  readonly gateway: string;
  /** The trunk's host link. */
  readonly trunk: HostLink & { readonly eniId: string };
}

const keyOf = (k: { networkName: string; containerID: string; ifName: string }) =>
  `${k.networkName}\u0000${k.containerID}\u0000${k.ifName}`;

/** The host link of a branch pod's VLAN (both branch-link kinds share the reference's name). */
const branchLinkName = (vlanId: number) => `vlan.eth.${vlanId}`;
const BRANCH_LINK = /^vlan\.eth\.\d+$/;

/** The first address of an IPv4 subnet (the AWS subnet gateway). */
export function subnetGatewayOf(subnetCidr: string): string {
  const c = parseCidr(subnetCidr);
  if (c === undefined)
    throw new SgpError({ code: 'ANNOTATION_INVALID', op: 'subnetGateway', detail: subnetCidr });
  const net = cidrNetwork(c);
  return formatIp({ family: net.family, value: net.value + 1n });
}

/** Most pods remembered as warned about an ignored annotation (more than a node ever runs). */
const MAX_WARNED = 4096;

/**
 * Branch pods on this node: decides per ADD whether a pod gets a branch ENI (its first container's limits ask
 * for `vpc.amazonaws.com/pod-eni`, as the reference decides; the annotation alone never does, ADR 0039), resolves the branch and the trunk's link, and
 * keeps the record of the branch pods plumbed, in a ledger file of its own that a restarted daemon reads back
 * ({@link BranchPods.restore}). DEL works without the record too, from the CNI prevResult.
 */
export class BranchPods {
  readonly #pods = new Map<string, BranchPodRecord>();
  /** The trunk link made ready, by `<name> <mac>`. */
  #preparedTrunk: string | undefined;
  /** `<namespace>/<name>` of the pods whose ignored annotation was logged. */
  readonly #warned = new Set<string>();

  constructor(private readonly deps: BranchPodsDeps) {}

  /** The enforcing mode. */
  get mode(): EnforcingMode {
    return this.deps.mode;
  }

  /**
   * `undefined` for a pod without a branch (an ordinary address from the pool); else its branch. A pod gets a
   * branch only when its first container's limits ask for `vpc.amazonaws.com/pod-eni` ({@link podRequestsBranch});
   * the annotation on a pod that does not ask is ignored (logged once per pod at warn level): anyone who can create
   * a pod can write an annotation, and following it would plumb another pod's branch ENI, MAC and VLAN. Throws
   * {@link SgpError} with the cause: `POD_NOT_FOUND`, `NO_TRUNK`, `BRANCH_LIMIT_REACHED`, `ANNOTATION_MISSING`,
   * `ANNOTATION_INVALID`, `TRUNK_LINK_NOT_FOUND`.
   */
  async resolve(namespace: string, name: string): Promise<ResolvedBranch | undefined> {
    const pod = await this.deps.readPod(namespace, name);
    const annotation = pod.annotations[POD_ENI_ANNOTATION];
    if (!podRequestsBranch(pod.containerLimits)) {
      if (annotation !== undefined) this.#warnIgnored(namespace, name);
      return undefined;
    }
    const trunk = await this.deps.trunk();
    if (trunk === undefined)
      throw new SgpError({
        code: 'NO_TRUNK',
        op: 'AddNetwork',
        detail: `pod ${namespace}/${name} needs a branch ENI and the node has no trunk ENI yet`,
      });
    const links = await this.deps.hostLinks();
    const limit = this.deps.branchLimit;
    if (annotation === undefined && limit !== undefined && limit > 0)
      await this.#refuseWhenTrunkFull(`${namespace}/${name}`, trunk, links, limit);
    const branch = parsePodEniAnnotation(annotation, { family: 4 });
    const link = trunkLinkOf(links, trunk.mac);
    const prepared = `${link.name} ${link.mac}`;
    if (this.#preparedTrunk !== prepared && this.deps.prepareTrunk !== undefined) {
      try {
        await this.deps.prepareTrunk(link);
      } catch (e) {
        throw new SgpError({ code: 'KERNEL', op: 'prepareTrunk', detail: (e as Error).message, cause: e });
      }
      this.#preparedTrunk = prepared;
    }
    return {
      branch,
      podIp: branch.ipv4!,
      gateway: subnetGatewayOf(branch.subnetCidr!),
      trunk: { name: link.name, index: link.index, mac: link.mac, eniId: trunk.eniId },
    };
  }

  /** Logs, once per pod, that its pod-eni annotation is ignored because the pod does not ask for a branch. */
  #warnIgnored(namespace: string, name: string): void {
    const pod = `${namespace}/${name}`;
    if (this.#warned.has(pod)) return;
    if (this.#warned.size >= MAX_WARNED) this.#warned.clear();
    this.#warned.add(pod);
    this.deps.log.warn(
      `pod carries the ${POD_ENI_ANNOTATION} annotation but its first container's limits do not ask for ${POD_ENI_RESOURCE}: annotation ignored, the pod gets a pool address`,
      {
        pod,
        hint: "only pods the VPC resource controller's webhook gave the resource get a branch ENI; recreate the pod while the webhook runs if a SecurityGroupPolicy selects it",
      },
    );
  }

  /**
   * A branch pod without its annotation: `BRANCH_LIMIT_REACHED` when the trunk has no free slot, so that the
   * controller cannot give it a branch; else nothing (the caller reports `ANNOTATION_MISSING`). The node's branch
   * links count first; below the limit, EC2's branches of this node do, which include the ones released by
   * deleted pods and held through the controller's cooldown, whose links the node has already removed.
   */
  async #refuseWhenTrunkFull(
    pod: string,
    trunk: TrunkEni,
    links: readonly HostLink[],
    limit: number,
  ): Promise<void> {
    const onNode = links.filter((l) => BRANCH_LINK.test(l.name)).length;
    if (onNode >= limit)
      throw new SgpError({
        code: 'BRANCH_LIMIT_REACHED',
        op: 'AddNetwork',
        detail: `pod ${pod} has no branch ENI, and the node's trunk ${trunk.eniId} carries ${onNode} of ${limit} branches`,
      });
    const branches = await this.deps.heldBranches?.().catch(() => undefined);
    // The pod's own branch made and its annotation on the way: not a full trunk.
    if (branches === undefined || branches.some((b) => b.pod === pod)) return;
    const held = branches.length;
    if (held < limit) return;
    throw new SgpError({
      code: 'BRANCH_LIMIT_REACHED',
      op: 'AddNetwork',
      detail:
        `pod ${pod} has no branch ENI, and EC2 holds ${held} of the ${limit} branches the node's trunk ${trunk.eniId} takes: ` +
        `${onNode} plumbed here, ${held - onNode} not yet plumbed or released by deleted pods and waiting out the ` +
        "controller's cooldown (60 s by default); the controller gives this pod a branch once one is deleted, and " +
        "the kubelet's next try succeeds",
    });
  }

  /** The plan of a resolved branch for host veth `hostVeth`. */
  plan(resolved: ResolvedBranch, hostVeth: string): BranchNetworkPlan {
    return planBranchNetwork({
      branch: resolved.branch,
      trunkInterface: resolved.trunk.name,
      hostVeth,
      mode: this.deps.mode,
      linkKind: this.deps.linkKind,
    });
  }

  /** Plumbs the pod and records it. */
  async plumb(
    key: { networkName: string; containerID: string; ifName: string },
    pod: { namespace: string; name: string; netnsPath: string; mtu: number },
    resolved: ResolvedBranch,
    plan: BranchNetworkPlan,
  ): Promise<{ hostMac: string }> {
    const k = keyOf(key);
    const replaced = new Map<string, BranchPodRecord>();
    // Another record on this VLAN (a pod deleted without a DEL, its branch since given to this pod): setup replaces
    // its branch link, so that record no longer names anything of its own.
    for (const [other, r] of this.#pods) if (r.vlanId === resolved.branch.vlanId) replaced.set(other, r);
    for (const other of replaced.keys()) this.#pods.delete(other);
    const previous = this.#pods.get(k);
    // Recorded before the plumbing (a write-ahead): a daemon killed mid-setup finds the record at start, kept if
    // the branch link was made (a DEL or GC then removes it), dropped if not.
    this.#pods.set(k, {
      ...key,
      namespace: pod.namespace,
      name: pod.name,
      address: resolved.podIp,
      vlanId: resolved.branch.vlanId,
      branchEniId: resolved.branch.eniId,
      branchMac: resolved.branch.mac,
      trunkEniId: resolved.trunk.eniId,
      trunkInterface: resolved.trunk.name,
      hostVeth: plan.hostVeth,
      mode: this.deps.mode,
      since: this.deps.now(),
    });
    const undo = () => {
      if (previous === undefined) this.#pods.delete(k);
      else this.#pods.set(k, previous);
      for (const [other, r] of replaced) this.#pods.set(other, r);
    };
    try {
      await this.#persist();
    } catch (e) {
      undo();
      throw e;
    }
    try {
      return await this.deps.plumber.setup(plan, {
        containerIf: key.ifName,
        netnsPath: pod.netnsPath,
        mtu: pod.mtu,
      });
    } catch (e) {
      // setup rolled its plumbing back: nothing of this pod is left to record.
      undo();
      await this.#persistQuietly();
      throw e;
    }
  }

  /**
   * DEL of a pod this daemon plumbed: tears its branch network down and forgets it. `undefined` when the pod is
   * not a branch pod this daemon knows (the plugin then tears down from its prevResult).
   */
  async release(key: {
    networkName: string;
    containerID: string;
    ifName: string;
  }): Promise<BranchPodRecord | undefined> {
    const record = this.#pods.get(keyOf(key));
    if (record === undefined) return undefined;
    await this.deps.plumber.teardown(
      planBranchTeardown({ vlanId: record.vlanId, podIp: record.address, hostVeth: record.hostVeth }),
    );
    this.#pods.delete(keyOf(key));
    await this.#persistQuietly();
    return record;
  }

  /** The branch pods plumbed and not deleted through this daemon, oldest first. */
  list(): BranchPodRecord[] {
    return [...this.#pods.values()];
  }

  /** Forgets pods whose branch link is gone (deleted through the plugin's prevResult path while we ran). */
  async prune(linkNames: ReadonlySet<string>): Promise<void> {
    let changed = false;
    for (const [k, p] of this.#pods)
      if (!linkNames.has(branchLinkName(p.vlanId))) changed = this.#pods.delete(k) || changed;
    if (changed) await this.#persistQuietly();
  }

  /**
   * Start-up: reads the ledger back and keeps the records whose branch link is on the host with the branch's MAC
   * (what is real); the others are dropped (their pod was deleted while the daemon was down, or the daemon died
   * before it made the link) and the ledger rewritten. Two records on one VLAN keep the newer. Never throws for
   * the ledger's content: an unreadable file is reported in `problems` and the node starts with no record.
   *
   * @param saved - the ledger as the daemon read it before changing the node ({@link readBranchLedger}); absent,
   *   it is read now
   */
  async restore(saved?: BranchLedgerRead): Promise<BranchRestoreReport> {
    const problems: string[] = [];
    const read =
      saved ?? (this.deps.ledger === undefined ? { text: undefined } : readBranchLedger(this.deps.ledger));
    const text = 'text' in read ? read.text : undefined;
    if ('problem' in read) problems.push(read.problem);
    const parsed = text === undefined ? { records: [], problems: [] } : parseBranchLedger(text);
    problems.push(...parsed.problems);
    const links = await this.deps.hostLinks();
    const byName = new Map(links.map((l) => [l.name, l]));
    const newestFirst = [...parsed.records].sort((a, b) => b.since - a.since);
    const kept = new Map<number, BranchPodRecord>();
    const dropped: BranchRestoreReport['dropped'] = [];
    for (const r of newestFirst) {
      const link = byName.get(branchLinkName(r.vlanId));
      if (link === undefined) dropped.push({ record: r, why: 'branch-link-gone' });
      else if (kept.has(r.vlanId) || link.mac !== r.branchMac.toLowerCase())
        dropped.push({ record: r, why: 'branch-link-replaced' });
      else kept.set(r.vlanId, r);
    }
    this.#pods.clear();
    const restored = [...kept.values()].sort((a, b) => a.since - b.since);
    for (const r of restored) this.#pods.set(keyOf(r), r);
    if (text !== undefined && (dropped.length > 0 || parsed.problems.length > 0))
      await this.#persistQuietly();
    const unrecorded = links
      .map((l) => l.name)
      .filter((n) => BRANCH_LINK.test(n) && !kept.has(Number(n.slice('vlan.eth.'.length))));
    return { found: parsed.records.length, restored, dropped, problems, unrecorded };
  }

  /**
   * CNI GC: removes the branch link, table routes and rules of every branch pod of `networkName` the runtime no
   * longer lists, exactly as its DEL would, and forgets it. Never one plumbed after the request (an ADD racing
   * the runtime's list), and never one whose host veth still exists (its pod's namespace is still there: only a
   * DEL may take it down). Plumbing no record names is not touched.
   */
  async collect(input: BranchGcInput): Promise<BranchGcOutcome> {
    const outcome: { collected: BranchPodRecord[]; kept: BranchGcOutcome['kept'] } = {
      collected: [],
      kept: [],
    };
    try {
      for (const [k, r] of this.#pods) {
        if (r.networkName !== input.networkName) continue;
        if (input.valid.has(`${r.containerID}\u0000${r.ifName}`)) continue;
        if (r.since >= input.requestedAt) {
          outcome.kept.push({ record: r, why: 'younger-than-request' });
          continue;
        }
        if (input.links.has(r.hostVeth)) {
          outcome.kept.push({ record: r, why: 'in-use' });
          continue;
        }
        await this.deps.plumber.teardown(
          planBranchTeardown({ vlanId: r.vlanId, podIp: r.address, hostVeth: r.hostVeth }),
        );
        this.#pods.delete(k);
        outcome.collected.push(r);
      }
    } finally {
      if (outcome.collected.length > 0) await this.#persistQuietly();
    }
    return outcome;
  }

  /** Writes the ledger (when there is one); rejects when it cannot. */
  async #persist(): Promise<void> {
    await this.deps.ledger?.write(() => serializeBranchLedger([...this.#pods.values()]));
  }

  /**
   * Writes the ledger, leaving a failure to the next write: the records in memory stay right, and a record the
   * file still names is checked against the host at the next start.
   */
  async #persistQuietly(): Promise<void> {
    await this.#persist().catch(() => undefined);
  }
}

/** True when `e` is one of the causes {@link BranchPods.resolve} throws. */
export function isBranchCause(e: unknown): e is SgpError {
  return isSgpError(
    e,
    'POD_NOT_FOUND',
    'NO_TRUNK',
    'ANNOTATION_MISSING',
    'ANNOTATION_INVALID',
    'TRUNK_LINK_NOT_FOUND',
    'BRANCH_LIMIT_REACHED',
    'INSTANCE_NOT_TRUNKABLE',
  );
}
