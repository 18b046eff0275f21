/** Where a recorded failure happened. */
export type FailureSource = 'pool' | 'add-network' | 'reconcile';

/** One failure the daemon saw, as `/v1/failures` serves it. */
export interface FailureRecord {
  /** When, as an ISO 8601 time. */
  time: string;
  source: FailureSource;
  /** What was being done: the pool decision kind, `AddNetwork`, or `nodeIPPoolReconcile`. */
  action: string;
  /** The stable code: an eni-manager error code, a CNI failure (`AddFailure`), or `Internal`. */
  code: string;
  /** The cause in words. */
  reason: string;
  /** The pod concerned (`namespace/name`), for AddNetwork failures. */
  pod?: string;
}

/** The ring's default size: enough for an operator's "what went wrong lately", small enough to hold forever. */
export const FAILURE_RING_SIZE = 50;

/**
 * A bounded ring of the daemon's most recent failures (pool actions, AddNetwork, reconcile), newest first:
 * what `aws-node status` shows as "the last failures with their reasons". Once full, each new failure
 * replaces the oldest.
 */
export class FailureRing {
  private readonly entries: FailureRecord[] = [];
  private next = 0;

  /**
   * @param capacity - how many failures are kept (at least 1)
   * @param now - wall-clock milliseconds, for each record's time
   */
  constructor(
    readonly capacity: number = FAILURE_RING_SIZE,
    private readonly now: () => number = () => Date.now(),
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`failure ring capacity must be a positive integer, got ${capacity}`);
  }

  /** Records a failure now. */
  record(failure: Omit<FailureRecord, 'time'>): void {
    const entry: FailureRecord = { time: new Date(this.now()).toISOString(), ...failure };
    if (this.entries.length < this.capacity) this.entries.push(entry);
    else this.entries[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The failures kept, newest first. */
  list(): FailureRecord[] {
    const n = this.entries.length;
    const out: FailureRecord[] = [];
    for (let i = 1; i <= n; i++) out.push(this.entries[(this.next - i + n) % n] as FailureRecord);
    return out;
  }
}
