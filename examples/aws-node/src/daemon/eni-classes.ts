import {
  classifyEni,
  type Ec2Eni,
  type EniManager,
  eniError,
  eniTagKeys,
  type ImdsEni,
  newEniTags,
  subnetExcludedForPods,
  tagsToAdd,
} from '@vpc-cni-kit/eni-manager';
import type { Logger } from './logger.js';

/** Why the daemon leaves an attached ENI alone. */
export type UnmanagedReason =
  /** Tagged `node.k8s.amazonaws.com/no_manage=true`. */
  | 'no-manage-tag'
  /** Not tagged for this instance while `MANAGE_UNTAGGED_ENI=false`. */
  | 'untagged'
  /** A trunk interface (security groups for pods): the VPC resource controller's. */
  | 'trunk'
  /** An EFA-only interface: no IP addresses at all. */
  | 'efa-only'
  /** In a subnet tagged `kubernetes.io/role/cni=0` (or another cluster's): no pod addresses from it. */
  | 'excluded-subnet';

/** An attached ENI the daemon does not manage, as introspection reports it. */
export interface UnmanagedEni {
  readonly eniId: string;
  readonly reason: UnmanagedReason;
  readonly deviceNumber: number;
  readonly networkCard: number;
  readonly subnetId: string;
}

/** What {@link classifyNodeEni} decides for one ENI. */
export type NodeEniClass =
  | { readonly kind: 'managed' }
  | { readonly kind: 'unmanaged'; readonly reason: UnmanagedReason }
  /** EC2 was read and does not list the ENI yet (it lags IMDS): decided on a later read. */
  | { readonly kind: 'unknown' };

/** The settings {@link classifyNodeEni} applies. */
export interface NodeEniPolicy {
  readonly instanceId: string;
  readonly primaryEniId: string;
  /** The reference's `MANAGE_UNTAGGED_ENI`. */
  readonly manageUntaggedEnis: boolean;
  /** The reference's `CLUSTER_NAME` ('' when unset): subnets scoped to another cluster are excluded. */
  readonly clusterName: string;
}

/**
 * The reference's classification of one attached ENI (§4.5, §4.8), pure. IMDS alone can tell only EFA-only
 * interfaces (no addresses at all); `ec2` is EC2's view (`undefined` in IMDS-only mode, where every other ENI
 * is managed, as in the reference); `subnetTags` are the tags of its subnet when known. The primary ENI is
 * always managed.
 */
export function classifyNodeEni(
  imds: ImdsEni,
  ec2: Ec2Eni | undefined | 'not-read',
  subnetTags: Readonly<Record<string, string>> | undefined,
  policy: NodeEniPolicy,
): NodeEniClass {
  if (imds.eniId === policy.primaryEniId) return { kind: 'managed' };
  if (imds.ipv4Addresses.length === 0 && imds.ipv6Addresses.length === 0)
    return { kind: 'unmanaged', reason: 'efa-only' };
  if (ec2 === 'not-read') return { kind: 'managed' };
  if (ec2 === undefined) return { kind: 'unknown' };
  if (ec2.interfaceType === 'trunk') return { kind: 'unmanaged', reason: 'trunk' };
  const cls = classifyEni(ec2, {
    instanceId: policy.instanceId,
    primaryEniId: policy.primaryEniId,
    manageUntaggedEnis: policy.manageUntaggedEnis,
  });
  if (cls === 'efa-only') return { kind: 'unmanaged', reason: 'efa-only' };
  if (cls === 'unmanaged')
    return {
      kind: 'unmanaged',
      reason: ec2.tags[eniTagKeys.noManage] === 'true' ? 'no-manage-tag' : 'untagged',
    };
  if (subnetTags !== undefined && subnetExcludedForPods(subnetTags, policy.clusterName))
    return { kind: 'unmanaged', reason: 'excluded-subnet' };
  return { kind: 'managed' };
}

/** Everything {@link NodeEnis} depends on. */
export interface NodeEnisDeps {
  readonly policy: NodeEniPolicy;
  /** EC2's view of the ENIs attached to this instance; absent in IMDS-only mode (no EC2 call at all). */
  readonly describeEnis?: () => Promise<Ec2Eni[]>;
  /** Tags of these subnets (DescribeSubnets); absent in IMDS-only mode. */
  readonly subnetTags?: (subnetIds: readonly string[]) => Promise<Map<string, Record<string, string>>>;
  /**
   * Writes missing tags on a managed ENI (CreateTags). Absent when the daemon provisions nothing (IMDS-only mode,
   * `DISABLE_NETWORK_RESOURCE_PROVISIONING`): the reference tags only when it provisions.
   */
  readonly tagEni?: (eniId: string, tags: Readonly<Record<string, string>>) => Promise<void>;
  /** The tags every managed ENI carries (instance id, cluster tags, `ADDITIONAL_ENI_TAGS`). */
  readonly desiredTags: Readonly<Record<string, string>>;
  readonly log: Logger;
}

/**
 * The daemon's record of which attached ENIs it manages. {@link select} classifies the ENIs IMDS shows (at
 * start and at every reconcile) and returns only the managed ones, which alone ever reach the datastore, host
 * routing or the pool; {@link mayMutate} is the last guard before any EC2 mutation ({@link guardEniManager}).
 * When EC2 cannot be read, the last classification stands and ENIs never classified are left out (fail
 * closed: an ENI is managed only once it is known to be).
 */
export class NodeEnis {
  private readonly unmanagedById = new Map<string, UnmanagedEni>();
  private readonly managedIds = new Set<string>();
  private readonly subnetTagCache = new Map<string, Record<string, string>>();
  private trunkEni: { readonly eniId: string; readonly mac: string } | undefined;

  constructor(private readonly deps: NodeEnisDeps) {}

  /** The attached trunk ENI (security groups for pods) and its MAC, once EC2 has listed it as `trunk`. */
  trunk(): { readonly eniId: string; readonly mac: string } | undefined {
    return this.trunkEni;
  }

  /** The attached ENIs left alone, by id order. */
  unmanaged(): UnmanagedEni[] {
    return [...this.unmanagedById.values()].sort((a, b) => a.eniId.localeCompare(b.eniId));
  }

  /** How many attached ENIs are left alone (they count against the instance's ENI limit). */
  unmanagedCount(): number {
    return this.unmanagedById.size;
  }

  /** False for an ENI classified unmanaged: nothing may assign from, free, tag or route it. */
  mayMutate(eniId: string): boolean {
    return !this.unmanagedById.has(eniId);
  }

  /** Records an ENI this daemon created (its own, tagged at creation). */
  created(eniId: string): void {
    this.unmanagedById.delete(eniId);
    this.managedIds.add(eniId);
  }

  /**
   * Classifies `imds` (with `ec2`, EC2's read, when the caller has one; else it is read here unless IMDS-only)
   * and returns the managed ENIs. Tags managed ENIs whose tags differ from the desired ones.
   */
  async select(imds: readonly ImdsEni[], ec2?: readonly Ec2Eni[]): Promise<ImdsEni[]> {
    const { deps } = this;
    let seen: ReadonlyMap<string, Ec2Eni> | undefined;
    if (deps.describeEnis !== undefined) {
      try {
        seen = new Map((ec2 ?? (await deps.describeEnis())).map((e) => [e.eniId, e]));
      } catch (e) {
        deps.log.warn('cannot read ENIs from EC2; keeping the last classification', { error: String(e) });
        return imds.filter((e) => this.managedIds.has(e.eniId) || e.eniId === deps.policy.primaryEniId);
      }
    }
    const subnets = await this.subnetTagsOf(imds);
    const managed: ImdsEni[] = [];
    const attached = new Set(imds.map((e) => e.eniId));
    for (const id of [...this.unmanagedById.keys()]) if (!attached.has(id)) this.unmanagedById.delete(id);
    for (const id of [...this.managedIds]) if (!attached.has(id)) this.managedIds.delete(id);
    if (this.trunkEni !== undefined && !attached.has(this.trunkEni.eniId)) this.trunkEni = undefined;
    for (const e of imds) {
      const truth = seen === undefined ? 'not-read' : seen.get(e.eniId);
      const cls = classifyNodeEni(e, truth, subnets.get(e.subnetId), deps.policy);
      if (cls.kind === 'unknown') {
        // EC2 lags IMDS: an ENI attached a moment ago. Keep what was decided before, else wait.
        if (this.managedIds.has(e.eniId)) managed.push(e);
        continue;
      }
      if (cls.kind === 'unmanaged') {
        if (!this.unmanagedById.has(e.eniId))
          deps.log.info('leaving an ENI alone', { eni: e.eniId, reason: cls.reason });
        this.managedIds.delete(e.eniId);
        if (cls.reason === 'trunk') this.trunkEni = { eniId: e.eniId, mac: e.mac.toLowerCase() };
        this.unmanagedById.set(e.eniId, {
          eniId: e.eniId,
          reason: cls.reason,
          deviceNumber: e.deviceNumber,
          networkCard: e.networkCard,
          subnetId: e.subnetId,
        });
        continue;
      }
      this.unmanagedById.delete(e.eniId);
      this.managedIds.add(e.eniId);
      managed.push(e);
      if (typeof truth === 'object') await this.tag(truth);
    }
    return managed;
  }

  private async tag(eni: Ec2Eni): Promise<void> {
    if (this.deps.tagEni === undefined) return;
    const missing = tagsToAdd(eni.tags, this.deps.desiredTags);
    if (Object.keys(missing).length === 0) return;
    try {
      await this.deps.tagEni(eni.eniId, missing);
    } catch (e) {
      this.deps.log.warn('cannot tag a managed ENI', { eni: eni.eniId, error: String(e) });
    }
  }

  /** Tags of the subnets of non-primary ENIs; the last known ones (or none) when DescribeSubnets fails. */
  private async subnetTagsOf(imds: readonly ImdsEni[]): Promise<Map<string, Record<string, string>>> {
    const { deps } = this;
    const ids = [...new Set(imds.filter((e) => e.eniId !== deps.policy.primaryEniId).map((e) => e.subnetId))];
    if (ids.length === 0 || deps.subnetTags === undefined) return this.subnetTagCache;
    try {
      for (const [id, tags] of await deps.subnetTags(ids)) this.subnetTagCache.set(id, tags);
    } catch (e) {
      deps.log.warn('cannot read subnet tags; using the last known ones', { error: String(e) });
    }
    return this.subnetTagCache;
  }
}

/**
 * The ENI port with the classification as a last guard: assigning to, releasing from, freeing or tagging an
 * ENI classified unmanaged fails with `InvalidInput` before anything is sent to EC2. ENIs it allocates are
 * recorded as managed.
 */
export function guardEniManager(eni: EniManager, enis: NodeEnis): EniManager {
  const check = (eniId: string, what: string) => {
    if (!enis.mayMutate(eniId))
      throw eniError('InvalidInput', `${eniId} is not managed by this node; refusing to ${what} it`);
  };
  return {
    async allocateEni(request) {
      const created = await eni.allocateEni(request);
      enis.created(created.imds.eniId);
      return created;
    },
    async freeEni(eniId) {
      check(eniId, 'free');
      return eni.freeEni(eniId);
    },
    async assignIpv4(eniId, request) {
      check(eniId, 'assign addresses to');
      return eni.assignIpv4(eniId, request);
    },
    async unassignIpv4(eniId, request) {
      check(eniId, 'release addresses from');
      return eni.unassignIpv4(eniId, request);
    },
    describeEnis: (ids) => eni.describeEnis(ids),
    async tagEni(eniId, tags) {
      check(eniId, 'tag');
      return eni.tagEni(eniId, tags);
    },
    collectLeakedEnis: () => eni.collectLeakedEnis(),
  };
}

/**
 * The tags the reference's `TagENI` keeps on every managed ENI: the instance id, the cluster tags when
 * `CLUSTER_NAME` is set, and `ADDITIONAL_ENI_TAGS` (reserved keys dropped); not `createdAt`, which only a new
 * ENI gets.
 */
export function managedEniTags(
  instanceId: string,
  clusterName: string,
  additionalTags: Readonly<Record<string, string>>,
): Record<string, string> {
  const tags = newEniTags(instanceId, 0, {
    ...(clusterName === '' ? {} : { clusterName }),
    additionalTags,
  });
  delete tags[eniTagKeys.createdAt];
  return tags;
}
