import { Ec2SimError, httpStatusFor } from './errors.js';
import type { Timing } from './state.js';

/** Answer the next `count` calls (of `action`, or of any action) with 503 `RequestLimitExceeded`. */
export interface ThrottleFault {
  /** Discriminator. */
  readonly kind: 'throttle';
  /** How many calls. */
  readonly count: number;
  /** Only this action (default: any). */
  readonly action?: string | undefined;
}

/** Fail the next `count` (default 1) calls of `action` with `code`. */
export interface FailFault {
  /** Discriminator. */
  readonly kind: 'fail';
  /** The action to fail. */
  readonly action: string;
  /** AWS error code to answer with. */
  readonly code: string;
  /** Message (default: names the injected failure). */
  readonly message?: string | undefined;
  /** HTTP status (default: derived from the code, 400 for unknown codes). */
  readonly status?: number | undefined;
  /** How many calls (default 1). */
  readonly count?: number | undefined;
  /**
   * Carry the call out first, then answer with the error (a lost response): the SDK retries, and only
   * idempotent handling (CreateNetworkInterface's ClientToken) avoids a duplicate. Default false.
   */
  readonly afterApply?: boolean | undefined;
}

/** Delay every call (of `action`, or all) by `ms` of the injected clock before it is handled. */
export interface LatencyFault {
  /** Discriminator. */
  readonly kind: 'latency';
  /** Delay. */
  readonly ms: number;
  /** Only this action (default: all). */
  readonly action?: string | undefined;
}

/**
 * New ENIs and addresses are invisible to Describe* and IMDS for `ms`; with `scope: 'all'`, calls that name a
 * new ENI (attach, assign, delete, tags…) also answer `InvalidNetworkInterfaceID.NotFound`.
 */
export interface EventualConsistencyFault {
  /** Discriminator. */
  readonly kind: 'eventual-consistency';
  /** How long new things stay invisible. */
  readonly ms: number;
  /** `reads` (default) or `all`. */
  readonly scope?: 'reads' | 'all' | undefined;
}

/**
 * A delay fault: `slow-attach` (stays `attaching`, out of IMDS), `slow-detach` (stays `detaching`), `imds-delay`,
 * `slow-associate` (a new trunk association carries no traffic until the delay passes).
 */
export interface DelayFault {
  /** Discriminator. */
  readonly kind: 'slow-attach' | 'slow-detach' | 'imds-delay' | 'slow-associate';
  /** The delay. */
  readonly ms: number;
}

/** Deny IAM actions (`ec2:AttachNetworkInterface` or `AttachNetworkInterface`) with 403 `UnauthorizedOperation`. */
export interface IamDenyFault {
  /** Discriminator. */
  readonly kind: 'iam-deny';
  /** IAM action names. */
  readonly actions: readonly string[];
}

/** A fault definition, as accepted by {@link FaultInjector.add} and `POST /_sim/faults`. */
export type FaultSpec =
  | ThrottleFault
  | FailFault
  | LatencyFault
  | EventualConsistencyFault
  | DelayFault
  | IamDenyFault;

/** Error codes for a malformed fault definition. */
export type FaultSpecErrorCode = 'FAULT_INVALID';

/** A fault definition that cannot be applied. */
export class FaultSpecError extends Error {
  /** Discriminator. */
  readonly kind = 'FaultSpecError' as const;
  /** Stable code. */
  readonly code: FaultSpecErrorCode = 'FAULT_INVALID';
  /** @param message - what is wrong */
  constructor(message: string) {
    super(message);
    this.name = 'FaultSpecError';
  }
}

/** True when `e` is a {@link FaultSpecError}. */
export function isFaultSpecError(e: unknown): e is FaultSpecError {
  return typeof e === 'object' && e !== null && (e as { kind?: unknown }).kind === 'FaultSpecError';
}

const ACTION_NAME = /^[A-Z][A-Za-z0-9]{1,80}$/;

function nonNegativeInt(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 86_400_000) {
    throw new FaultSpecError(`${name} must be a non-negative integer`);
  }
  return v;
}

function optionalAction(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !ACTION_NAME.test(v))
    throw new FaultSpecError('action must be an EC2 action name');
  return v;
}

/** Validates an untrusted fault definition (for example a JSON body). */
export function parseFaultSpec(input: unknown): FaultSpec {
  if (typeof input !== 'object' || input === null) throw new FaultSpecError('fault must be an object');
  const o = input as Record<string, unknown>;
  switch (o['kind']) {
    case 'throttle':
      return {
        kind: 'throttle',
        count: nonNegativeInt(o['count'], 'count'),
        action: optionalAction(o['action']),
      };
    case 'fail': {
      const action = optionalAction(o['action']);
      if (!action) throw new FaultSpecError('fail needs an action');
      if (typeof o['code'] !== 'string' || !/^[A-Za-z][A-Za-z0-9.]{1,100}$/.test(o['code'])) {
        throw new FaultSpecError('code must be an AWS error code');
      }
      if (o['message'] !== undefined && typeof o['message'] !== 'string') {
        throw new FaultSpecError('message must be a string');
      }
      if (o['afterApply'] !== undefined && typeof o['afterApply'] !== 'boolean') {
        throw new FaultSpecError('afterApply must be a boolean');
      }
      const status = o['status'] === undefined ? undefined : nonNegativeInt(o['status'], 'status');
      if (status !== undefined && (status < 400 || status > 599))
        throw new FaultSpecError('status must be 400–599');
      return {
        kind: 'fail',
        action,
        code: o['code'],
        message: o['message'] as string | undefined,
        status,
        count: o['count'] === undefined ? 1 : nonNegativeInt(o['count'], 'count'),
        afterApply: o['afterApply'] === true,
      };
    }
    case 'latency':
      return { kind: 'latency', ms: nonNegativeInt(o['ms'], 'ms'), action: optionalAction(o['action']) };
    case 'eventual-consistency': {
      const scope = o['scope'];
      if (scope !== undefined && scope !== 'reads' && scope !== 'all') {
        throw new FaultSpecError("scope must be 'reads' or 'all'");
      }
      return { kind: 'eventual-consistency', ms: nonNegativeInt(o['ms'], 'ms'), scope };
    }
    case 'slow-attach':
    case 'slow-detach':
    case 'imds-delay':
    case 'slow-associate':
      return { kind: o['kind'], ms: nonNegativeInt(o['ms'], 'ms') };
    case 'iam-deny': {
      const actions = o['actions'];
      if (
        !Array.isArray(actions) ||
        !actions.every((a) => typeof a === 'string' && /^(ec2:)?[A-Z][A-Za-z0-9]+$/.test(a))
      ) {
        throw new FaultSpecError('actions must be a list of IAM action names');
      }
      return { kind: 'iam-deny', actions };
    }
    default:
      throw new FaultSpecError(`unknown fault kind ${JSON.stringify(o['kind'])}`);
  }
}

/**
 * Programmable faults. Call-level faults (throttle, fail, latency, IAM deny) are consulted by the server for
 * every request; timing faults change {@link Timing} on the state.
 */
export class FaultInjector {
  readonly #timing: Timing;
  #throttles: { action: string | undefined; left: number }[] = [];
  #failures: {
    action: string;
    code: string;
    message: string | undefined;
    status: number | undefined;
    left: number;
    afterApply: boolean;
  }[] = [];
  #latency = new Map<string, number>();
  #denied = new Set<string>();

  /** @param timing - the state's timing object, changed in place by timing faults */
  constructor(timing: Timing) {
    this.#timing = timing;
  }

  /** Adds a fault (validated; throws {@link FaultSpecError} on a bad definition). */
  add(spec: FaultSpec): void {
    const s = parseFaultSpec(spec);
    switch (s.kind) {
      case 'throttle':
        this.#throttles.push({ action: s.action, left: s.count });
        break;
      case 'fail':
        this.#failures.push({
          action: s.action,
          code: s.code,
          message: s.message,
          status: s.status,
          left: s.count ?? 1,
          afterApply: s.afterApply ?? false,
        });
        break;
      case 'latency':
        this.#latency.set(s.action ?? '*', s.ms);
        break;
      case 'eventual-consistency':
        this.#timing.eventualConsistencyMs = s.ms;
        this.#timing.eventualConsistencyScope = s.scope ?? 'reads';
        break;
      case 'slow-attach':
        this.#timing.attachDelayMs = s.ms;
        break;
      case 'slow-detach':
        this.#timing.detachDelayMs = s.ms;
        break;
      case 'imds-delay':
        this.#timing.imdsDelayMs = s.ms;
        break;
      case 'slow-associate':
        this.#timing.associateDelayMs = s.ms;
        break;
      case 'iam-deny':
        for (const a of s.actions) this.#denied.add(a.startsWith('ec2:') ? a : `ec2:${a}`);
        break;
    }
  }

  /** Shorthand: throttle the next `count` calls (of `action`, or all). */
  throttleNext(count: number, action?: string): void {
    this.add({ kind: 'throttle', count, action });
  }

  /** Shorthand: fail the next call(s) of `action` with `code`. */
  failNext(
    action: string,
    code: string,
    options: { message?: string; status?: number; count?: number; afterApply?: boolean } = {},
  ): void {
    this.add({ kind: 'fail', action, code, ...options });
  }

  /** Shorthand: deny IAM actions. */
  deny(...actions: string[]): void {
    this.add({ kind: 'iam-deny', actions });
  }

  /** Removes every fault and resets the timing delays to zero. */
  clear(): void {
    this.#throttles = [];
    this.#failures = [];
    this.#latency.clear();
    this.#denied.clear();
    this.#timing.eventualConsistencyMs = 0;
    this.#timing.eventualConsistencyScope = 'reads';
    this.#timing.attachDelayMs = 0;
    this.#timing.associateDelayMs = 0;
    this.#timing.detachDelayMs = 0;
    this.#timing.imdsDelayMs = 0;
  }

  /** Latency to add before handling `action`. */
  latencyFor(action: string): number {
    return this.#latency.get(action) ?? this.#latency.get('*') ?? 0;
  }

  /** True when the IAM action `ec2:<action>` is denied. */
  isDenied(action: string): boolean {
    return this.#denied.has(`ec2:${action}`);
  }

  /** Consumes a throttle or failure fault that applies to `action`, returning the error to send. */
  takeCallFault(action: string): Ec2SimError | undefined {
    const t = this.#throttles.find((x) => x.left > 0 && (x.action === undefined || x.action === action));
    if (t) {
      t.left--;
      this.#throttles = this.#throttles.filter((x) => x.left > 0);
      return new Ec2SimError('RequestLimitExceeded', 'Request limit exceeded.');
    }
    return this.#takeFailure(action, false);
  }

  /** Consumes an `afterApply` failure for `action` (asked once the call has been carried out). */
  takeAfterApplyFault(action: string): Ec2SimError | undefined {
    return this.#takeFailure(action, true);
  }

  #takeFailure(action: string, afterApply: boolean): Ec2SimError | undefined {
    const f = this.#failures.find((x) => x.left > 0 && x.action === action && x.afterApply === afterApply);
    if (!f) return undefined;
    f.left--;
    this.#failures = this.#failures.filter((x) => x.left > 0);
    return new Ec2SimError(
      f.code,
      f.message ?? `Injected failure of ${action}.`,
      f.status ?? httpStatusFor(f.code),
    );
  }

  /** The pending faults (for the state dump). */
  describe(): unknown {
    return {
      throttles: this.#throttles.map((t) => ({ ...t })),
      failures: this.#failures.map((f) => ({ ...f })),
      latency: Object.fromEntries(this.#latency),
      iamDeny: [...this.#denied],
      timing: { ...this.#timing },
    };
  }
}
