import { cidrNetwork, formatIpv4, parseCidr } from '@vpc-cni-kit/ip-address';
import { SgpError } from '../errors.js';
import type { BranchControllerPort, BranchEniRecord, CreatedBranchEni, PodRef } from '../port.js';

/** A method of {@link BranchControllerPort}. */
export type BranchPortMethod = keyof BranchControllerPort;

/**
 * Decides whether a call fails: `'before'` fails without effect, `'after'` applies the effect and then fails
 * (a lost answer), `undefined` lets it through.
 */
export type FaultPlan = (method: BranchPortMethod, call: number) => 'before' | 'after' | undefined;

/** A trunk of the fake cloud. */
export interface FakeTrunk {
  /** Trunk ENI id. */
  readonly eniId: string;
  /** Node it belongs to. */
  readonly nodeName: string;
  /** Branch limit (associations above it are refused, as EC2 refuses them). */
  readonly branchLimit: number;
}

interface Eni extends CreatedBranchEni {
  readonly podUid: string;
  readonly nodeName: string;
  readonly subnetId: string;
  readonly groupIds: readonly string[];
}

interface Association {
  readonly associationId: string;
  readonly trunkEniId: string;
  readonly branchEniId: string;
  readonly vlanId: number;
}

/**
 * A stateful fake of {@link BranchControllerPort} with EC2's rules for trunks: an association needs an existing
 * trunk and branch, a VLAN id in `1..branchLimit` not used on that trunk, and a branch not associated elsewhere;
 * an associated ENI cannot be deleted. Breaking a rule throws and is counted in {@link violations}, so a test can
 * assert a controller never tried. Faults are injected with a {@link FaultPlan}.
 */
export class FakeBranchCloud implements BranchControllerPort {
  /** Branch ENIs by id. */
  readonly enis = new Map<string, Eni>();
  /** Associations by id. */
  readonly associations = new Map<string, Association>();
  /** Annotations written, by pod UID. */
  readonly annotations = new Map<string, string>();
  /** Capacity written, by node. */
  readonly capacity = new Map<string, number>();
  /** Pods that exist (by UID); `annotatePod` on another UID throws `POD_NOT_FOUND`. */
  readonly livePods = new Set<string>();
  /** Rule breaks the controller attempted (each a one-line description). */
  readonly violations: string[] = [];
  /** Calls made, per method. */
  readonly calls = new Map<BranchPortMethod, number>();
  /** The fault plan. @defaultValue no faults */
  faults: FaultPlan = () => undefined;
  readonly #trunks = new Map<string, FakeTrunk>();
  readonly #subnets = new Map<string, { cidr: string; network: number; next: number }>();
  #seq = 0;

  /** Adds a trunk. */
  addTrunk(trunk: FakeTrunk): void {
    this.#trunks.set(trunk.eniId, trunk);
  }

  /**
   * Adds an IPv4 subnet new ENIs take addresses from, in order from network + 10. A CIDR that is not IPv4 is a
   * `RangeError`.
   */
  addSubnet(subnetId: string, cidr: string): void {
    const c = parseCidr(cidr);
    if (c?.family !== 4) throw new RangeError(`not an IPv4 CIDR: ${JSON.stringify(cidr)}`);
    this.#subnets.set(subnetId, { cidr, network: Number(cidrNetwork(c).value), next: 10 });
  }

  async #call<T>(method: BranchPortMethod, effect: () => T): Promise<T> {
    const n = (this.calls.get(method) ?? 0) + 1;
    this.calls.set(method, n);
    const fault = this.faults(method, n);
    if (fault === 'before') throw new Error(`injected fault before ${method}`);
    const result = effect();
    if (fault === 'after') throw new Error(`injected fault after ${method}`);
    return result;
  }

  #refuse(detail: string): never {
    this.violations.push(detail);
    throw new Error(detail);
  }

  async createBranchEni(request: {
    nodeName: string;
    pod: PodRef;
    subnetId: string;
    groupIds: readonly string[];
  }): Promise<CreatedBranchEni> {
    return this.#call('createBranchEni', () => {
      const subnet = this.#subnets.get(request.subnetId);
      if (subnet === undefined) throw new Error(`InvalidSubnetID.NotFound ${request.subnetId}`);
      const id = ++this.#seq;
      const eni: Eni = {
        eniId: `eni-b${id.toString(16).padStart(8, '0')}`,
        mac: `0a:b0:00:00:${((id >> 8) & 0xff).toString(16).padStart(2, '0')}:${(id & 0xff).toString(16).padStart(2, '0')}`,
        ipv4: formatIpv4(subnet.network + subnet.next++),
        subnetCidr: subnet.cidr,
        podUid: request.pod.uid,
        nodeName: request.nodeName,
        subnetId: request.subnetId,
        groupIds: [...request.groupIds],
      };
      this.enis.set(eni.eniId, eni);
      const { podUid: _p, nodeName: _n, subnetId: _s, groupIds: _g, ...created } = eni;
      return created;
    });
  }

  async associateBranch(request: {
    trunkEniId: string;
    branchEniId: string;
    vlanId: number;
  }): Promise<{ associationId: string }> {
    return this.#call('associateBranch', () => {
      const trunk = this.#trunks.get(request.trunkEniId);
      if (trunk === undefined) this.#refuse(`associate: no trunk ${request.trunkEniId}`);
      if (!this.enis.has(request.branchEniId)) this.#refuse(`associate: no ENI ${request.branchEniId}`);
      if (!Number.isInteger(request.vlanId) || request.vlanId < 1 || request.vlanId > trunk.branchLimit) {
        this.#refuse(`associate: VLAN ${request.vlanId} outside 1..${trunk.branchLimit}`);
      }
      for (const a of this.associations.values()) {
        if (a.trunkEniId === request.trunkEniId && a.vlanId === request.vlanId)
          this.#refuse(`associate: VLAN ${request.vlanId} in use on ${request.trunkEniId}`);
        if (a.branchEniId === request.branchEniId)
          this.#refuse(`associate: ${request.branchEniId} already associated`);
      }
      const associationId = `trunk-assoc-${(++this.#seq).toString(16).padStart(8, '0')}`;
      this.associations.set(associationId, { associationId, ...request });
      return { associationId };
    });
  }

  async disassociateBranch(associationId: string): Promise<void> {
    return this.#call('disassociateBranch', () => {
      this.associations.delete(associationId);
    });
  }

  async deleteBranchEni(eniId: string): Promise<void> {
    return this.#call('deleteBranchEni', () => {
      for (const a of this.associations.values()) {
        if (a.branchEniId === eniId)
          throw new Error(`InvalidParameterValue: ${eniId} is associated to a trunk`);
      }
      this.enis.delete(eniId);
    });
  }

  async listBranchEnis(nodeName: string): Promise<BranchEniRecord[]> {
    return this.#call('listBranchEnis', () =>
      [...this.enis.values()]
        .filter((e) => e.nodeName === nodeName)
        .map((e) => {
          const a = [...this.associations.values()].find((x) => x.branchEniId === e.eniId);
          const { subnetId: _s, groupIds: _g, ...record } = e;
          return a ? { ...record, associationId: a.associationId, vlanId: a.vlanId } : record;
        }),
    );
  }

  async annotatePod(pod: PodRef, value: string): Promise<void> {
    return this.#call('annotatePod', () => {
      if (!this.livePods.has(pod.uid))
        throw new SgpError({
          code: 'POD_NOT_FOUND',
          op: 'annotatePod',
          detail: `${pod.namespace}/${pod.name}`,
        });
      this.annotations.set(pod.uid, value);
    });
  }

  async setPodEniCapacity(nodeName: string, capacity: number): Promise<void> {
    return this.#call('setPodEniCapacity', () => {
      this.capacity.set(nodeName, capacity);
    });
  }

  /** VLAN ids associated on a trunk. */
  vlansOn(trunkEniId: string): number[] {
    return [...this.associations.values()]
      .filter((a) => a.trunkEniId === trunkEniId)
      .map((a) => a.vlanId)
      .sort((a, b) => a - b);
  }

  /** Security groups an ENI was created with. */
  groupsOf(eniId: string): readonly string[] | undefined {
    return this.enis.get(eniId)?.groupIds;
  }
}
