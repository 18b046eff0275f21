/**
 * Custom networking's ENIConfig, as data: which ENIConfig a node uses and what one says. Pure: the daemon
 * reads the Node and the ENIConfig object from the Kubernetes API and hands them here.
 */
import { awsId } from './shapes.js';

/** The ENIConfig custom resource: `eniconfigs.crd.k8s.amazonaws.com/v1alpha1`, cluster-scoped. */
export const ENI_CONFIG_RESOURCE = {
  group: 'crd.k8s.amazonaws.com',
  version: 'v1alpha1',
  plural: 'eniconfigs',
  kind: 'ENIConfig',
} as const;

/** The node label that names an ENIConfig before anything else (set by external tooling). */
export const EXTERNAL_ENI_CONFIG_LABEL = 'vpc.amazonaws.com/externalEniConfig';

/** Default of `ENI_CONFIG_ANNOTATION_DEF` and `ENI_CONFIG_LABEL_DEF`. */
export const DEFAULT_ENI_CONFIG_KEY = 'k8s.amazonaws.com/eniConfig';

/** The ENIConfig name used when nothing on the node names one. */
export const DEFAULT_ENI_CONFIG_NAME = 'default';

/** The parts of a Node that name its ENIConfig. */
export interface EniConfigNode {
  /** `metadata.labels`. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  /** `metadata.annotations`. */
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** Where the keys come from (`ENI_CONFIG_ANNOTATION_DEF`, `ENI_CONFIG_LABEL_DEF`). */
export interface EniConfigKeys {
  /** Annotation key. @defaultValue {@link DEFAULT_ENI_CONFIG_KEY} */
  readonly annotationKey?: string;
  /** Label key, e.g. `topology.kubernetes.io/zone`. @defaultValue {@link DEFAULT_ENI_CONFIG_KEY} */
  readonly labelKey?: string;
}

/** Which ENIConfig a node uses and what named it. */
export interface EniConfigChoice {
  /** ENIConfig name. */
  readonly name: string;
  /** What named it: the external label, the annotation, the label, or nothing (`default`). */
  readonly source: 'external-label' | 'annotation' | 'label' | 'default';
}

/**
 * The reference's resolution, first match wins: label `vpc.amazonaws.com/externalEniConfig`, the annotation
 * `keys.annotationKey`, the label `keys.labelKey`, then `default`. An empty value does not match.
 */
export function resolveEniConfigName(node: EniConfigNode, keys: EniConfigKeys = {}): EniConfigChoice {
  const labels = node.labels ?? {};
  const annotations = node.annotations ?? {};
  const external = labels[EXTERNAL_ENI_CONFIG_LABEL];
  if (external) return { name: external, source: 'external-label' };
  const annotated = annotations[keys.annotationKey ?? DEFAULT_ENI_CONFIG_KEY];
  if (annotated) return { name: annotated, source: 'annotation' };
  const labelled = labels[keys.labelKey ?? DEFAULT_ENI_CONFIG_KEY];
  if (labelled) return { name: labelled, source: 'label' };
  return { name: DEFAULT_ENI_CONFIG_NAME, source: 'default' };
}

/** What an ENIConfig gives new ENIs. */
export interface EniConfigSpec {
  /** `spec.subnet`: every new ENI is created in it. */
  readonly subnet: string;
  /** `spec.securityGroups`: the new ENIs' groups (empty: the primary ENI's, as the reference does). */
  readonly securityGroups: readonly string[];
}

/**
 * The most security groups EC2 ever lets one network interface have: its quota is 5 by default and can be raised
 * to 16. A list up to this long is passed on, and EC2 refuses one over the account's quota
 * (`SecurityGroupsPerInterfaceLimitExceeded`); a longer one can never be right.
 */
export const MAX_SECURITY_GROUPS_PER_ENI = 16;

/** An ENIConfig object checked: its spec, or the one problem found. */
export type EniConfigParse =
  | { readonly ok: true; readonly spec: EniConfigSpec }
  | { readonly ok: false; readonly problem: string };

/**
 * Checks an ENIConfig object (`spec.subnet` a subnet id, `spec.securityGroups` group ids, at most
 * {@link MAX_SECURITY_GROUPS_PER_ENI}).
 */
export function parseEniConfig(obj: unknown): EniConfigParse {
  const spec = (obj as { spec?: unknown } | null | undefined)?.spec;
  if (typeof spec !== 'object' || spec === null) return { ok: false, problem: 'has no spec' };
  const { subnet, securityGroups } = spec as { subnet?: unknown; securityGroups?: unknown };
  if (typeof subnet !== 'string' || awsId('subnet', subnet) === undefined) {
    return { ok: false, problem: `spec.subnet is not a subnet id: ${JSON.stringify(subnet)}` };
  }
  const groups = securityGroups ?? [];
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string' || awsId('sg', g) === undefined)) {
    return {
      ok: false,
      problem: `spec.securityGroups must list security group ids: ${JSON.stringify(groups)}`,
    };
  }
  if (groups.length > MAX_SECURITY_GROUPS_PER_ENI)
    return {
      ok: false,
      problem: `spec.securityGroups lists ${groups.length} groups, more than EC2 allows on an ENI (${MAX_SECURITY_GROUPS_PER_ENI})`,
    };
  return { ok: true, spec: { subnet, securityGroups: [...(groups as string[])] } };
}
