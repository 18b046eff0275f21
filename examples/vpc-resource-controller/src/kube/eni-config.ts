/**
 * Custom networking as the reference controller reads it for a node's trunk and branch ENIs: the ENIConfig named
 * by the node's `vpc.amazonaws.com/eniConfig` label, else by the value of its CNINode's `CustomNetworking` feature
 * (which aws-node writes after resolving its own `ENI_CONFIG_LABEL_DEF` / `ENI_CONFIG_ANNOTATION_DEF` keys).
 */
import type { V1Node } from '@kubernetes/client-node';
import { MAX_SECURITY_GROUPS_PER_ENI, shapes } from '@vpc-cni-kit/eni-manager';
import type { KubeApis } from './apis.js';
import type { CustomObject } from './caches.js';

/** The node label the reference controller reads the ENIConfig name from first. */
export const ENI_CONFIG_NODE_LABEL = 'vpc.amazonaws.com/eniConfig';
/** The CNINode feature aws-node adds with custom networking; its value is the ENIConfig name. */
export const CUSTOM_NETWORKING_FEATURE = 'CustomNetworking';

/** Which ENIConfig a node uses: none, one by name, or a `CustomNetworking` feature without a name. */
export type EniConfigChoice =
  | { readonly kind: 'none' }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'unnamed' };

/** The ENIConfig a node's trunk and branches use, from its label or else its CNINode. */
export function eniConfigChoice(node: V1Node, cniNode: CustomObject | undefined): EniConfigChoice {
  const label = node.metadata?.labels?.[ENI_CONFIG_NODE_LABEL];
  if (label !== undefined && label !== '') return { kind: 'named', name: label };
  const features = cniNode?.spec?.['features'];
  const feature = Array.isArray(features)
    ? (features as ({ name?: unknown; value?: unknown } | null)[]).find(
        (f) => f?.name === CUSTOM_NETWORKING_FEATURE,
      )
    : undefined;
  if (feature === undefined) return { kind: 'none' };
  return typeof feature?.value === 'string' && feature.value !== ''
    ? { kind: 'named', name: feature.value }
    : { kind: 'unnamed' };
}

/** An ENIConfig's spec: the subnet and security groups of a node's new ENIs. */
export interface EniConfigSpec {
  /** `spec.subnet` ('' when unset). */
  readonly subnet: string;
  /** `spec.securityGroups` (empty when unset). */
  readonly securityGroups: readonly string[];
}

/** Why an ENIConfig could not be read. */
export class EniConfigError extends Error {
  /** Discriminator. */
  readonly kind = 'EniConfigError' as const;
  /**
   * @param code - `NOT_FOUND` (no such ENIConfig), `UNREADABLE` (the API refused or failed) or `MALFORMED`
   * @param message - one line naming the ENIConfig
   */
  constructor(
    readonly code: 'NOT_FOUND' | 'UNREADABLE' | 'MALFORMED',
    message: string,
  ) {
    super(message);
    this.name = 'EniConfigError';
  }
}

/** An object name (DNS-1123 subdomain): what an ENIConfig can be called. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Reads the cluster-scoped `crd.k8s.amazonaws.com/v1alpha1` ENIConfig `name`. Rejects with {@link EniConfigError}:
 * a name no object can have (a CNINode feature value is free text; `..` would read the API group's discovery
 * document as if it were the ENIConfig) is `MALFORMED` before anything is asked.
 */
export async function readEniConfig(api: KubeApis, name: string): Promise<EniConfigSpec> {
  if (name.length > 253 || !OBJECT_NAME.test(name))
    throw new EniConfigError(
      'MALFORMED',
      `${JSON.stringify(name.slice(0, 80))} is not an ENIConfig name (a lowercase DNS-1123 subdomain)`,
    );
  let obj: CustomObject;
  try {
    obj = (await api.custom.getClusterCustomObject({
      group: 'crd.k8s.amazonaws.com',
      version: 'v1alpha1',
      plural: 'eniconfigs',
      name,
    })) as CustomObject;
  } catch (e) {
    const status = (e as { code?: unknown } | null)?.code;
    throw status === 404
      ? new EniConfigError('NOT_FOUND', `ENIConfig ${name} not found`)
      : new EniConfigError(
          'UNREADABLE',
          `ENIConfig ${name} could not be read (HTTP ${String(status ?? 'no answer')})`,
        );
  }
  if (obj?.kind !== 'ENIConfig' || obj.metadata?.name !== name)
    throw new EniConfigError('MALFORMED', `ENIConfig ${name}: the API server answered with another object`);
  return eniConfigSpec(name, obj.spec);
}

/**
 * The ENIConfig's spec as the controller uses it: `subnet` empty (the node's subnet stays, as in the reference)
 * or a subnet id, `securityGroups` up to 16 security group ids (EC2's most per ENI; it refuses more than the
 * account's quota, 5 unless raised, when the ENI is created). Anything else is
 * MALFORMED, naming the field, and the node waits as for a missing ENIConfig: nothing goes to EC2 made from it.
 */
function eniConfigSpec(name: string, spec: Record<string, unknown> | undefined): EniConfigSpec {
  const bad = (why: string) => new EniConfigError('MALFORMED', `ENIConfig ${name}: ${why}`);
  const subnet = spec?.['subnet'] ?? '';
  const groups = spec?.['securityGroups'] ?? [];
  if (typeof subnet !== 'string' || (subnet !== '' && shapes.awsId('subnet', subnet) === undefined))
    throw bad(
      `spec.subnet is not a subnet id (subnet-<8 or 17 hex>): ${JSON.stringify(subnet)?.slice(0, 80)}`,
    );
  if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string' && shapes.awsId('sg', g)))
    throw bad(
      `spec.securityGroups must list security group ids (sg-<8 or 17 hex>): ${JSON.stringify(groups)?.slice(0, 120)}`,
    );
  if (groups.length > MAX_SECURITY_GROUPS_PER_ENI)
    throw bad(
      `spec.securityGroups lists ${groups.length} groups, more than EC2 allows on an ENI (${MAX_SECURITY_GROUPS_PER_ENI})`,
    );
  return { subnet, securityGroups: groups as string[] };
}
