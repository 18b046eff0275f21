/** A branch ENI just created (what `CreateNetworkInterface` returned). */
export interface CreatedBranchEni {
  /** `eni-…`. */
  readonly eniId: string;
  /** Its MAC. */
  readonly mac: string;
  /** Primary private IPv4 address, when the subnet has IPv4. */
  readonly ipv4?: string | undefined;
  /** IPv6 address, when assigned. */
  readonly ipv6?: string | undefined;
  /** The subnet's IPv4 CIDR. */
  readonly subnetCidr?: string | undefined;
  /** The subnet's IPv6 CIDR. */
  readonly subnetV6Cidr?: string | undefined;
}

/** A branch ENI as the cloud lists it for a node (found by the tags the port put on it at creation). */
export interface BranchEniRecord extends CreatedBranchEni {
  /** UID of the pod it was created for (tag). */
  readonly podUid: string;
  /** The node it was created for (tag). */
  readonly nodeName: string;
  /** When associated: the trunk association id. */
  readonly associationId?: string | undefined;
  /** When associated: its VLAN id on the trunk. */
  readonly vlanId?: number | undefined;
}

/** A pod the controller writes to. */
export interface PodRef {
  /** Namespace. */
  readonly namespace: string;
  /** Name. */
  readonly name: string;
  /** UID (a write must not land on a new pod of the same name). */
  readonly uid: string;
}

/**
 * Everything the branch controller does to the world: EC2 (create, associate, disassociate, delete, list) and
 * Kubernetes (pod annotation, node capacity). Production adapters wrap `@aws-sdk/client-ec2` and the Kubernetes
 * API; a stateful fake with fault injection is `FakeBranchCloud` in `@vpc-cni-kit/sgp-branch/testing`.
 * Any method may throw; the controller wraps such errors as `CLOUD` unless they are already {@link SgpError}s.
 */
export interface BranchControllerPort {
  /** Creates a branch ENI in `subnetId` with `groupIds`, tagged with the node and pod UID (so it can be found again). */
  createBranchEni(request: {
    readonly nodeName: string;
    readonly pod: PodRef;
    readonly subnetId: string;
    readonly groupIds: readonly string[];
  }): Promise<CreatedBranchEni>;
  /** `AssociateTrunkInterface`: puts the branch on the trunk with `vlanId`. */
  associateBranch(request: {
    readonly trunkEniId: string;
    readonly branchEniId: string;
    readonly vlanId: number;
  }): Promise<{ readonly associationId: string }>;
  /** `DisassociateTrunkInterface`; an association already gone counts as done. */
  disassociateBranch(associationId: string): Promise<void>;
  /** `DeleteNetworkInterface`; an ENI already gone counts as done. */
  deleteBranchEni(eniId: string): Promise<void>;
  /** The branch ENIs created for `nodeName`, associated or not. */
  listBranchEnis(nodeName: string): Promise<BranchEniRecord[]>;
  /** Writes the `vpc.amazonaws.com/pod-eni` annotation; throws `SgpError` `POD_NOT_FOUND` when the pod (that UID) is gone. */
  annotatePod(pod: PodRef, value: string): Promise<void>;
  /** Sets the node's `vpc.amazonaws.com/pod-eni` capacity (extended resource). */
  setPodEniCapacity(nodeName: string, capacity: number): Promise<void>;
}
