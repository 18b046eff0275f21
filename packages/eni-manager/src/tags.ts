import { eniError } from './errors.js';

/** Tag keys the reference reads and writes on ENIs. */
export const eniTagKeys = {
  /** The instance an ENI was created for. */
  instanceId: 'node.k8s.amazonaws.com/instance_id',
  /** RFC 3339 creation time, read by leaked-ENI GC. */
  createdAt: 'node.k8s.amazonaws.com/createdAt',
  /** `"true"` marks an ENI this package must leave alone. */
  noManage: 'node.k8s.amazonaws.com/no_manage',
  /** The cluster name (when `CLUSTER_NAME` is set). */
  clusterName: 'cluster.k8s.amazonaws.com/name',
  /** Owner marker written with the cluster name. */
  owner: 'eks:eni:owner',
} as const;

/** Options that shape the tags on a new ENI. */
export interface EniTagOptions {
  /** The reference's `CLUSTER_NAME`; adds the cluster-name and owner tags. */
  readonly clusterName?: string;
  /** The reference's `ADDITIONAL_ENI_TAGS`, already parsed; keys containing `k8s.amazonaws.com` are dropped. */
  readonly additionalTags?: Readonly<Record<string, string>>;
}

/** The prefix of the description of every ENI this package creates (`aws-K8S-<instance id>`). */
export const eniDescriptionPrefix = 'aws-K8S-';

/**
 * The tags for a new ENI, in the reference's order: additional tags first (reserved keys dropped), then the
 * instance id, the cluster tags and `createdAt` (RFC 3339, seconds precision, UTC).
 */
export function newEniTags(
  instanceId: string,
  nowMs: number,
  options: EniTagOptions = {},
): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.additionalTags ?? {})) {
    if (key.includes('k8s.amazonaws.com')) continue;
    if (key.length === 0 || key.length > 128 || key.startsWith('aws:') || value.length > 256) {
      throw eniError('InvalidInput', `not a valid ENI tag: ${JSON.stringify(key)}=${JSON.stringify(value)}`);
    }
    tags[key] = value;
  }
  tags[eniTagKeys.instanceId] = instanceId;
  if (options.clusterName !== undefined && options.clusterName !== '') {
    tags[eniTagKeys.clusterName] = options.clusterName;
    tags[eniTagKeys.owner] = 'amazon-vpc-cni';
  }
  tags[eniTagKeys.createdAt] = rfc3339(nowMs);
  return tags;
}

/** `2024-01-02T03:04:05Z` for a time in ms. */
export function rfc3339(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The ms for an RFC 3339 time stamp, or `undefined` when it is not one. */
export function parseRfc3339(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The tags to write so an ENI carries `desired`: those missing or different in `current` (the reference's
 * `TagENI` writes only these, so a reconcile of an already-tagged ENI makes no `CreateTags` call).
 */
export function tagsToAdd(
  current: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(desired)) if (current[key] !== value) out[key] = value;
  return out;
}
