/**
 * Custom networking in the daemon: before each new ENI, read the node's ENIConfig (the reference does the
 * same on every allocation) and create the ENI in its subnet with its groups. A missing or invalid ENIConfig
 * stops new ENIs (logged, a Warning Event, pods get `EniConfigUnavailable`), never the daemon. ENIs that
 * exist keep their pods and addresses when the ENIConfig changes or the node is relabelled.
 */
import type { EniConfigChoice, EniConfigKeys, EniConfigSpec } from '@vpc-cni-kit/eni-manager';
import { type EniConfigLookup, type EniConfigProblemCode, lookupEniConfig } from '../kube/eni-config.js';
import type { KubeSide } from '../kube/kube-side.js';
import type { Logger } from '../log/logger.js';

/** The ENIConfig could not be used for a new ENI (typed; the pool loop records it, nothing crashes). */
export class EniConfigUnavailableError extends Error {
  /** Discriminator. */
  readonly kind = 'EniConfigUnavailableError' as const;
  /**
   * @param code - `EniConfigNotFound`, `EniConfigInvalid`, or `KubeUnavailable` (the API did not answer)
   * @param message - one line for the operator
   */
  constructor(
    readonly code: EniConfigProblemCode | 'KubeUnavailable',
    message: string,
  ) {
    super(message);
    this.name = 'EniConfigUnavailableError';
  }
}

/** What `/v1/eni-configs` shows. */
export interface EniConfigStatus {
  /** The ENIConfig the last lookup chose, and what named it. */
  readonly choice: EniConfigChoice | undefined;
  /** Its spec, when it was found and valid. */
  readonly spec: EniConfigSpec | undefined;
  /** Why it cannot be used, when it cannot. */
  readonly problem: { readonly code: string; readonly message: string } | undefined;
  /** Wall-clock ms of the last lookup. */
  readonly checkedAt: number | undefined;
}

/** The custom-networking side of ENI allocation. */
export interface CustomNetworking {
  /** Subnet and groups for the next ENI, read now; throws {@link EniConfigUnavailableError}. */
  nextEniTarget(): Promise<{ subnetId: string; securityGroupIds?: readonly string[] }>;
  /** The last lookup, for introspection. */
  status(): EniConfigStatus;
}

/** Builds {@link CustomNetworking} over the daemon's Kubernetes side. */
export function customNetworking(deps: {
  readonly kube: KubeSide;
  readonly nodeName: string;
  readonly keys: EniConfigKeys;
  readonly log: Logger;
  readonly now: () => number;
}): CustomNetworking {
  let status: EniConfigStatus = {
    choice: undefined,
    spec: undefined,
    problem: undefined,
    checkedAt: undefined,
  };
  let lastLogged = '';
  return {
    status: () => status,
    async nextEniTarget() {
      let found: EniConfigLookup;
      try {
        found = await deps.kube.call((api) => lookupEniConfig(api, deps.nodeName, deps.keys));
      } catch (e) {
        const message = `cannot read the node's ENIConfig from the Kubernetes API: ${e instanceof Error ? e.message : String(e)}`;
        status = { ...status, problem: { code: 'KubeUnavailable', message }, checkedAt: deps.now() };
        throw new EniConfigUnavailableError('KubeUnavailable', message);
      }
      if (!found.ok) {
        status = {
          choice: found.choice,
          spec: undefined,
          problem: { code: found.code, message: found.message },
          checkedAt: deps.now(),
        };
        if (lastLogged !== found.message)
          deps.log.error('ENIConfig unavailable; no ENI created', { ...found });
        lastLogged = found.message;
        deps.kube.eniConfigProblem(found.code, found.message);
        throw new EniConfigUnavailableError(found.code, found.message);
      }
      const key = `${found.choice.name} ${found.spec.subnet} ${found.spec.securityGroups.join(',')}`;
      if (lastLogged !== key)
        deps.log.info('ENIConfig in force for new ENIs', { eniConfig: found.choice, ...found.spec });
      lastLogged = key;
      status = { choice: found.choice, spec: found.spec, problem: undefined, checkedAt: deps.now() };
      deps.kube.setFeature({ name: 'CustomNetworking', value: found.choice.name });
      return {
        subnetId: found.spec.subnet,
        ...(found.spec.securityGroups.length > 0 ? { securityGroupIds: found.spec.securityGroups } : {}),
      };
    },
  };
}
