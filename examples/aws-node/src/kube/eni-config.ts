import {
  ENI_CONFIG_RESOURCE,
  type EniConfigChoice,
  type EniConfigKeys,
  type EniConfigSpec,
  parseEniConfig,
  resolveEniConfigName,
} from '@vpc-cni-kit/eni-manager';
import { dnsSubdomainProblem } from '../config/kube-names.js';
import { awsNodeWarningEvent } from './iam-event.js';
import { type CustomResource, isKubeCallError, type KubeApi, type KubeObject } from './kube-api.js';

/** The ENIConfig custom resource as the API client addresses it. */
export const ENICONFIG: CustomResource = {
  group: ENI_CONFIG_RESOURCE.group,
  version: ENI_CONFIG_RESOURCE.version,
  plural: ENI_CONFIG_RESOURCE.plural,
};

/** Why the node's ENIConfig cannot be used. */
export type EniConfigProblemCode = 'EniConfigNotFound' | 'EniConfigInvalid';

/** What the node's ENIConfig lookup found: the config in force, or a typed problem (never a crash). */
export type EniConfigLookup =
  | { readonly ok: true; readonly choice: EniConfigChoice; readonly spec: EniConfigSpec }
  | {
      readonly ok: false;
      readonly choice: EniConfigChoice;
      readonly code: EniConfigProblemCode;
      readonly message: string;
    };

/**
 * Reads this node and the ENIConfig it names (first match: external label, annotation, label, `default`).
 * A missing or invalid ENIConfig is a result; an API failure (unreachable, forbidden) throws `KubeCallError`.
 */
export async function lookupEniConfig(
  api: KubeApi,
  nodeName: string,
  keys: EniConfigKeys,
): Promise<EniConfigLookup> {
  const node = await api.getNode(nodeName);
  const meta = node.metadata as
    | { labels?: Record<string, string>; annotations?: Record<string, string> }
    | undefined;
  const choice = resolveEniConfigName({ labels: meta?.labels, annotations: meta?.annotations }, keys);
  // An annotation value is free text: one no object can be named is the node's problem, not the API's.
  const badName = typeof choice.name === 'string' ? dnsSubdomainProblem(choice.name) : 'it is not a string';
  if (badName !== undefined)
    return {
      ok: false,
      choice,
      code: 'EniConfigInvalid',
      message: `${JSON.stringify(String(choice.name).slice(0, 80))} (named by ${choice.source}) is not an ENIConfig name: ${badName}`,
    };
  let obj: KubeObject;
  try {
    obj = await api.getClusterObject(ENICONFIG, choice.name);
  } catch (e) {
    if (!isKubeCallError(e, 'NotFound')) throw e;
    return {
      ok: false,
      choice,
      code: 'EniConfigNotFound',
      message: `eniconfig: eniconfig is not available: ENIConfig ${JSON.stringify(choice.name)} (named by ${choice.source}) does not exist`,
    };
  }
  const parsed = parseEniConfig(obj);
  if (!parsed.ok) {
    return {
      ok: false,
      choice,
      code: 'EniConfigInvalid',
      message: `ENIConfig ${JSON.stringify(choice.name)} ${parsed.problem}`,
    };
  }
  return { ok: true, choice, spec: parsed.spec };
}

/** The Warning Event about the aws-node pod when the node's ENIConfig cannot be used. */
export function eniConfigProblemEvent(o: {
  readonly code: EniConfigProblemCode;
  readonly message: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly nodeName: string;
  readonly nowMs: number;
}): KubeObject {
  return awsNodeWarningEvent({
    reason: o.code,
    action: 'CreateENI',
    note: `${o.message}; no ENI is created for pods until it exists (custom networking)`,
    pod: o.pod,
    nodeName: o.nodeName,
    nowMs: o.nowMs,
    serial: 1,
  });
}
