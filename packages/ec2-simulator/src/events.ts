/** The addresses and prefixes an event concerns. */
export interface AddressChange {
  /** IPv4 addresses. */
  readonly ipv4: readonly string[];
  /** IPv4 /28 prefixes. */
  readonly ipv4Prefixes: readonly string[];
  /** IPv6 addresses. */
  readonly ipv6: readonly string[];
  /** IPv6 /80 prefixes. */
  readonly ipv6Prefixes: readonly string[];
}

/** A network interface was created (it is `available`, not attached). */
export interface EniCreatedEvent {
  /** Discriminator. */
  readonly type: 'eni-created';
  /** The new ENI. */
  readonly eniId: string;
  /** Its subnet. */
  readonly subnetId: string;
  /** Its VPC. */
  readonly vpcId: string;
  /** Its MAC address. */
  readonly mac: string;
  /** `interface`, `trunk`, `efa`, … */
  readonly interfaceType: string;
  /** Every address and prefix it was created with (primary IPv4 first). */
  readonly addresses: AddressChange;
}

/** A network interface was attached to an instance (its attachment may still be `attaching`). */
export interface EniAttachedEvent {
  /** Discriminator. */
  readonly type: 'eni-attached';
  /** The ENI. */
  readonly eniId: string;
  /** The instance. */
  readonly instanceId: string;
  /** `eni-attach-…` */
  readonly attachmentId: string;
  /** Device index on its card. */
  readonly deviceIndex: number;
  /** Network card index. */
  readonly networkCardIndex: number;
  /** The ENI's MAC (what a hypervisor would hot-plug). */
  readonly mac: string;
}

/** A detach completed (the ENI is `available` again). */
export interface EniDetachedEvent {
  /** Discriminator. */
  readonly type: 'eni-detached';
  /** The ENI. */
  readonly eniId: string;
  /** The instance it left. */
  readonly instanceId: string;
  /** The attachment that ended. */
  readonly attachmentId: string;
  /** The ENI's MAC. */
  readonly mac: string;
}

/** A network interface was deleted and its addresses returned to the subnet. */
export interface EniDeletedEvent {
  /** Discriminator. */
  readonly type: 'eni-deleted';
  /** The ENI. */
  readonly eniId: string;
  /** Its MAC. */
  readonly mac: string;
  /** The addresses and prefixes it held. */
  readonly addresses: AddressChange;
}

/** Addresses or prefixes were assigned to an ENI. */
export interface AddressesAssignedEvent {
  /** Discriminator. */
  readonly type: 'addresses-assigned';
  /** The ENI. */
  readonly eniId: string;
  /** What was added. */
  readonly addresses: AddressChange;
}

/** Addresses or prefixes were removed from an ENI (unassigned, or moved away by AllowReassignment). */
export interface AddressesUnassignedEvent {
  /** Discriminator. */
  readonly type: 'addresses-unassigned';
  /** The ENI. */
  readonly eniId: string;
  /** What was removed. */
  readonly addresses: AddressChange;
}

/** Tags of a resource changed. */
export interface TagsChangedEvent {
  /** Discriminator. */
  readonly type: 'tags-changed';
  /** ENI, instance, subnet or security group id. */
  readonly resourceId: string;
}

/** The security groups of an ENI changed. */
export interface SecurityGroupsChangedEvent {
  /** Discriminator. */
  readonly type: 'security-groups-changed';
  /** The ENI. */
  readonly eniId: string;
  /** Its groups now. */
  readonly groups: readonly string[];
}

/** A security group was created or deleted, or its rules changed. */
export interface SecurityGroupRulesChangedEvent {
  /** Discriminator. */
  readonly type: 'security-group-rules-changed';
  /** The group. */
  readonly groupId: string;
  /** What happened to it. */
  readonly change: 'created' | 'deleted' | 'rules';
}

/** A branch ENI was associated with a trunk (it carries traffic from now: a slow association comes late). */
export interface TrunkAssociatedEvent {
  /** Discriminator. */
  readonly type: 'trunk-associated';
  /** `trunk-assoc-…` */
  readonly associationId: string;
  /** The branch. */
  readonly branchEniId: string;
  /** The trunk. */
  readonly trunkEniId: string;
  /** VLAN id. */
  readonly vlanId: number;
}

/** A branch ENI left its trunk (disassociated, or deleted). */
export interface TrunkDisassociatedEvent {
  /** Discriminator. */
  readonly type: 'trunk-disassociated';
  /** `trunk-assoc-…` */
  readonly associationId: string;
  /** The branch. */
  readonly branchEniId: string;
  /** The trunk. */
  readonly trunkEniId: string;
}

/** An IPv4 CIDR block was associated with a VPC (the router routes it and IMDS lists it from now). */
export interface VpcCidrAssociatedEvent {
  /** Discriminator. */
  readonly type: 'vpc-cidr-associated';
  /** The VPC. */
  readonly vpcId: string;
  /** The block, in network form. */
  readonly cidrBlock: string;
  /** `vpc-cidr-assoc-…` */
  readonly associationId: string;
}

/** An IPv4 CIDR block left a VPC. */
export interface VpcCidrDisassociatedEvent {
  /** Discriminator. */
  readonly type: 'vpc-cidr-disassociated';
  /** The VPC. */
  readonly vpcId: string;
  /** The block. */
  readonly cidrBlock: string;
  /** `vpc-cidr-assoc-…` */
  readonly associationId: string;
}

/**
 * A change to simulated EC2 state, delivered synchronously after the change is made. A data plane subscribes
 * to these to keep namespaces, links and routes in step with EC2.
 */
export type SimEvent =
  | EniCreatedEvent
  | EniAttachedEvent
  | EniDetachedEvent
  | EniDeletedEvent
  | AddressesAssignedEvent
  | AddressesUnassignedEvent
  | TagsChangedEvent
  | SecurityGroupsChangedEvent
  | SecurityGroupRulesChangedEvent
  | TrunkAssociatedEvent
  | TrunkDisassociatedEvent
  | VpcCidrAssociatedEvent
  | VpcCidrDisassociatedEvent;

/** Every {@link SimEvent} `type`. */
export type SimEventType = SimEvent['type'];

/** Receives state events. */
export type SimEventListener = (event: SimEvent) => void;

/** A tiny synchronous event hub. A listener that throws is reported to `onListenerError` and others still run. */
export class EventHub {
  readonly #listeners = new Set<SimEventListener>();
  readonly #onError: (error: unknown, event: SimEvent) => void;

  /** @param onListenerError - called when a listener throws */
  constructor(onListenerError: (error: unknown, event: SimEvent) => void = () => {}) {
    this.#onError = onListenerError;
  }

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: SimEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Delivers an event to every listener. */
  emit(event: SimEvent): void {
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch (e) {
        this.#onError(e, event);
      }
    }
  }
}
