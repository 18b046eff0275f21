/** One call to EC2 or IMDS, as reported to {@link CallHooks.onCall}: one event per HTTP attempt. */
export interface CallEvent {
  /** Which service was called. */
  readonly service: 'ec2' | 'imds';
  /** EC2 action (`AssignPrivateIpAddresses`) or IMDS path (`network/interfaces/macs/`, `api/token`). */
  readonly action: string;
  /** Milliseconds from sending to the answer (or failure), on the injected clock. */
  readonly latencyMs: number;
  /** The error code when the attempt failed, else `undefined`. */
  readonly errorCode: string | undefined;
  /** 1 for the first attempt of a call, 2 for its first retry, … */
  readonly attempt: number;
  /** Milliseconds this attempt waited on the client-side token bucket before it was sent. */
  readonly throttledMs: number;
}

/** Observers for metrics and logs. Hooks must not throw; an exception from a hook is swallowed. */
export interface CallHooks {
  /** Called once per EC2 or IMDS attempt. */
  readonly onCall?: (event: CallEvent) => void;
}

/** Calls `hooks.onCall` and never lets an observer break the call it observes. */
export function reportCall(hooks: CallHooks | undefined, event: CallEvent): void {
  try {
    hooks?.onCall?.(event);
  } catch {
    // A metrics observer failing must not fail an EC2 call.
  }
}
