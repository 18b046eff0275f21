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

/**
 * A change to simulated EC2 state, delivered synchronously after the change is made. A data plane subscribes
 * to these to keep namespaces, links and routes in step with EC2.
 */
export type SimEvent =
  | {
      readonly type: 'eni-created';
      readonly eniId: string;
      readonly subnetId: string;
      readonly vpcId: string;
      readonly mac: string;
      readonly interfaceType: string;
      readonly addresses: AddressChange;
    }
  | {
      readonly type: 'eni-attached';
      readonly eniId: string;
      readonly instanceId: string;
      readonly attachmentId: string;
      readonly deviceIndex: number;
      readonly networkCardIndex: number;
      readonly mac: string;
    }
  | {
      readonly type: 'eni-detached';
      readonly eniId: string;
      readonly instanceId: string;
      readonly attachmentId: string;
      readonly mac: string;
    }
  | {
      readonly type: 'eni-deleted';
      readonly eniId: string;
      readonly mac: string;
      readonly addresses: AddressChange;
    }
  | { readonly type: 'addresses-assigned'; readonly eniId: string; readonly addresses: AddressChange }
  | { readonly type: 'addresses-unassigned'; readonly eniId: string; readonly addresses: AddressChange }
  | { readonly type: 'tags-changed'; readonly resourceId: string }
  | { readonly type: 'security-groups-changed'; readonly eniId: string; readonly groups: readonly string[] };

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
