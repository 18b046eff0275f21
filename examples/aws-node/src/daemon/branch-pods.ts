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
  parsePodEniAnnotation,
  planBranchNetwork,
  planBranchTeardown,
  podRequestsBranch,
  type ResourceLimits,
  SgpError,
  trunkLinkOf,
} from '@vpc-cni-kit/sgp-branch';

/** A pod as the daemon reads it from the API: its annotations and its containers' limits, in spec order. */
export interface PodView {
  readonly annotations: Readonly<Record<string, string>>;
  readonly containerLimits: readonly (ResourceLimits | undefined)[];
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
  /** Wall-clock ms, for the record. */
  readonly now: () => number;
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

/** A branch pod the daemon plumbed, as introspection and `aws-node status` show it. */
export interface BranchPodRecord {
  readonly containerID: string;
  readonly ifName: string;
  readonly networkName: string;
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly vlanId: number;
  readonly branchEniId: string;
  readonly branchMac: string;
  readonly trunkEniId: string;
  readonly trunkInterface: string;
  readonly hostVeth: string;
  readonly mode: EnforcingMode;
  /** When it was plumbed (ms since epoch). */
  readonly since: number;
}

const keyOf = (k: { networkName: string; containerID: string; ifName: string }) =>
  `${k.networkName}\u0000${k.containerID}\u0000${k.ifName}`;

/** The first address of an IPv4 subnet (the AWS subnet gateway). */
export function subnetGatewayOf(subnetCidr: string): string {
  const c = parseCidr(subnetCidr);
  if (c === undefined)
    throw new SgpError({ code: 'ANNOTATION_INVALID', op: 'subnetGateway', detail: subnetCidr });
  const net = cidrNetwork(c);
  return formatIp({ family: net.family, value: net.value + 1n });
}

/**
 * Branch pods on this node: decides per ADD whether a pod gets a branch ENI (its first container's limits ask
 * for `vpc.amazonaws.com/pod-eni`, or it carries the annotation), resolves the branch and the trunk's link, and
 * keeps the record of the branch pods plumbed (in memory: DEL works without it, from the CNI prevResult).
 */
export class BranchPods {
  readonly #pods = new Map<string, BranchPodRecord>();
  /** The trunk link made ready, by `<name> <mac>`. */
  #preparedTrunk: string | undefined;

  constructor(private readonly deps: BranchPodsDeps) {}

  /** The enforcing mode. */
  get mode(): EnforcingMode {
    return this.deps.mode;
  }

  /**
   * `undefined` for a pod without a branch (an ordinary address from the pool); else its branch. Throws
   * {@link SgpError} with the cause: `POD_NOT_FOUND`, `NO_TRUNK`, `BRANCH_LIMIT_REACHED`, `ANNOTATION_MISSING`,
   * `ANNOTATION_INVALID`, `TRUNK_LINK_NOT_FOUND`.
   */
  async resolve(namespace: string, name: string): Promise<ResolvedBranch | undefined> {
    const pod = await this.deps.readPod(namespace, name);
    const annotation = pod.annotations[POD_ENI_ANNOTATION];
    if (!podRequestsBranch(pod.containerLimits) && annotation === undefined) return undefined;
    const trunk = await this.deps.trunk();
    if (trunk === undefined)
      throw new SgpError({
        code: 'NO_TRUNK',
        op: 'AddNetwork',
        detail: `pod ${namespace}/${name} needs a branch ENI and the node has no trunk ENI yet`,
      });
    const links = await this.deps.hostLinks();
    const limit = this.deps.branchLimit;
    if (annotation === undefined && limit !== undefined && limit > 0) {
      const inUse = links.filter((l) => /^vlan\.eth\.\d+$/.test(l.name)).length;
      if (inUse >= limit)
        throw new SgpError({
          code: 'BRANCH_LIMIT_REACHED',
          op: 'AddNetwork',
          detail: `pod ${namespace}/${name} has no branch ENI, and the node's trunk ${trunk.eniId} carries ${inUse} of ${limit} branches`,
        });
    }
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
    const done = await this.deps.plumber.setup(plan, {
      containerIf: key.ifName,
      netnsPath: pod.netnsPath,
      mtu: pod.mtu,
    });
    this.#pods.set(keyOf(key), {
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
    return done;
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
    return record;
  }

  /** The branch pods plumbed and not deleted through this daemon, oldest first. */
  list(): BranchPodRecord[] {
    return [...this.#pods.values()];
  }

  /** Forgets pods whose branch link is gone (deleted through the plugin's prevResult path while we ran). */
  prune(linkNames: ReadonlySet<string>): void {
    for (const [k, p] of this.#pods) if (!linkNames.has(`vlan.eth.${p.vlanId}`)) this.#pods.delete(k);
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
