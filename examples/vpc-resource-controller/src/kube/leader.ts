import type { V1Lease } from '@kubernetes/client-node';
import { describeKubeError, httpStatus, type KubeApis } from './apis.js';

/** Where the Lease lives and how it is held (client-go's leader election, with its default timings). */
export interface LeaderElectionOptions {
  /** Lease namespace. @defaultValue `kube-system` */
  readonly namespace: string;
  /** Lease name (the reference's `cp-vpc-resource-controller`). */
  readonly name: string;
  /** This replica's identity (unique per process). */
  readonly identity: string;
  /** How long a Lease not renewed stays held. client-go default 15 s. */
  readonly leaseDurationMs: number;
  /** A leader that could not renew for this long steps down. client-go default 10 s. */
  readonly renewDeadlineMs: number;
  /** Pause between attempts to acquire or renew. client-go default 2 s. */
  readonly retryPeriodMs: number;
}

/** The reference's Lease name. */
export const LEADER_ELECTION_ID = 'cp-vpc-resource-controller';

/** A Lease time as the API wants a MicroTime: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Milliseconds of a time client-node read (a `Date`, or the string when it kept it), if valid. */
function timeOf(value: unknown): number | undefined {
  const ms =
    value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** What the elector reports. */
export interface LeaderElectionEvents {
  /** This replica became the leader. */
  onStartedLeading(): void;
  /** This replica lost the Lease (could not renew within the deadline, or another took it). */
  onStoppedLeading(reason: string): void;
  /** A call failed (logged; the elector retries). */
  onProblem(problem: string): void;
}

/**
 * Leader election over a `coordination.k8s.io/v1` Lease, as client-go does it: a follower takes the Lease when it
 * has not seen it change for `leaseDurationMs` (measured on its own clock, so clock skew does not matter); the
 * leader renews every `retryPeriodMs` and steps down if no renewal succeeded for `renewDeadlineMs`. Every write
 * is conditional on the resourceVersion read, so two replicas never both think they hold it. {@link release}
 * hands the Lease over at once on a clean stop.
 */
export class LeaderElector {
  readonly #api: KubeApis;
  readonly #o: LeaderElectionOptions;
  readonly #events: LeaderElectionEvents;
  readonly #now: () => number;
  #observed: { holder: string; renew: string; rv: string } | undefined;
  #observedAt = 0;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRenew = 0;
  #lease: V1Lease | undefined;

  constructor(
    api: KubeApis,
    options: LeaderElectionOptions,
    events: LeaderElectionEvents,
    now: () => number,
  ) {
    if (
      !(options.renewDeadlineMs < options.leaseDurationMs) ||
      !(options.retryPeriodMs < options.renewDeadlineMs)
    )
      throw new RangeError('leader election needs retry period < renew deadline < lease duration');
    this.#api = api;
    this.#o = options;
    this.#events = events;
    this.#now = now;
  }

  /** Whether this replica holds the Lease. */
  get leading(): boolean {
    return this.#leading;
  }

  /** Starts trying to acquire, then renewing, until {@link stop}. */
  start(): void {
    void this.#tick();
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    let ok = false;
    try {
      ok = await this.#tryAcquireOrRenew();
    } catch (e) {
      this.#events.onProblem(`lease ${this.#o.namespace}/${this.#o.name}: ${describeKubeError(e)}`);
    }
    if (this.#stopped) return;
    const now = this.#now();
    if (ok) {
      this.#lastRenew = now;
      if (!this.#leading) {
        this.#leading = true;
        this.#events.onStartedLeading();
      }
    } else if (this.#leading && now - this.#lastRenew >= this.#o.renewDeadlineMs) {
      this.#leading = false;
      this.#events.onStoppedLeading(`no renewal of the lease for ${this.#o.renewDeadlineMs} ms`);
    } else if (this.#leading && this.#observed !== undefined && this.#observed.holder !== this.#o.identity) {
      this.#leading = false;
      this.#events.onStoppedLeading(`the lease is held by ${this.#observed.holder}`);
    }
    this.#timer = setTimeout(() => void this.#tick(), this.#o.retryPeriodMs);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.#o;
    const now = this.#now();
    const spec = (previous?: V1Lease['spec']) => {
      const changing = previous?.holderIdentity !== identity;
      return {
        holderIdentity: identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(this.#o.leaseDurationMs / 1000)),
        acquireTime: microTime(changing ? now : (timeOf(previous?.acquireTime) ?? now)) as unknown as Date,
        renewTime: microTime(now) as unknown as Date,
        leaseTransitions: (previous?.leaseTransitions ?? 0) + (changing && previous?.holderIdentity ? 1 : 0),
      };
    };
    let lease: V1Lease;
    try {
      lease = await this.#api.coordination.readNamespacedLease({ namespace, name });
    } catch (e) {
      if (httpStatus(e) !== 404) throw e;
      try {
        this.#lease = await this.#api.coordination.createNamespacedLease({
          namespace,
          body: { metadata: { name, namespace }, spec: spec() },
        });
        this.#observe(this.#lease);
        return true;
      } catch (err) {
        if (httpStatus(err) === 409) return false;
        throw err;
      }
    }
    this.#observe(lease);
    const holder = lease.spec?.holderIdentity ?? '';
    // The holder's own lease duration, as client-go reads it (replicas may be configured differently).
    const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
    const expired = this.#now() - this.#observedAt >= durationMs;
    if (holder !== '' && holder !== identity && !expired) return false;
    try {
      this.#lease = await this.#api.coordination.replaceNamespacedLease({
        namespace,
        name,
        body: { ...lease, spec: { ...lease.spec, ...spec(lease.spec) } },
      });
      this.#observe(this.#lease);
      return true;
    } catch (e) {
      if (httpStatus(e) === 409) return false;
      throw e;
    }
  }

  #observe(lease: V1Lease): void {
    const record = {
      holder: lease.spec?.holderIdentity ?? '',
      renew: String(lease.spec?.renewTime ?? ''),
      rv: lease.metadata?.resourceVersion ?? '',
    };
    const o = this.#observed;
    if (o === undefined || o.holder !== record.holder || o.renew !== record.renew)
      this.#observedAt = this.#now();
    this.#observed = record;
  }

  /** Stops the loop; no more calls are made. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /**
   * Stops and, when leading, hands the Lease over at once (holder cleared, as client-go's `ReleaseOnCancel`), so
   * a standby takes over without waiting for the Lease to expire. Best effort.
   */
  async release(): Promise<void> {
    this.stop();
    if (!this.#leading || this.#lease === undefined) return;
    this.#leading = false;
    const { namespace, name } = this.#o;
    try {
      await this.#api.coordination.replaceNamespacedLease({
        namespace,
        name,
        body: {
          ...this.#lease,
          spec: {
            ...this.#lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: microTime(timeOf(this.#lease.spec?.acquireTime) ?? this.#now()) as unknown as Date,
            renewTime: microTime(this.#now()) as unknown as Date,
          },
        },
      });
    } catch {
      // the Lease expires by itself
    }
  }
}
