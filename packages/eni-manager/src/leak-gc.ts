import type { EniContext } from './context.js';
import { describeEnisByFilter } from './describe.js';
import { deleteEniWithRetries } from './free.js';
import { eniDescriptionPrefix, eniTagKeys, parseRfc3339, rfc3339 } from './tags.js';

/** Scope of one leaked-ENI collection. */
export interface LeakGcOptions {
  /** Only ENIs in this VPC. */
  readonly vpcId: string;
  /** The reference's `CLUSTER_NAME`: when set, only ENIs tagged with this cluster. */
  readonly clusterName?: string;
  /** Minimum age by the `createdAt` tag. Default 5 minutes (the reference's). */
  readonly minAgeMs?: number;
}

/** An ENI leaked-ENI GC failed to delete. */
export interface LeakGcFailure {
  /** The ENI. */
  readonly eniId: string;
  /** The error code. */
  readonly code: string;
}

/** What one collection did, by ENI id. */
export interface LeakGcReport {
  /** Deleted (or found already gone). */
  readonly deleted: readonly string[];
  /** Ours and available, but younger than the minimum age. */
  readonly tooYoung: readonly string[];
  /** Had no valid `createdAt` tag: tagged now, deleted on a later run. */
  readonly taggedNow: readonly string[];
  /** Deleting failed; each with its error code. */
  readonly failed: readonly LeakGcFailure[];
}

/**
 * The reference's leaked-ENI cleanup (§4.6): list `available` ENIs in the VPC carrying the
 * `node.k8s.amazonaws.com/instance_id` tag (and the cluster tag when a cluster name is set), keep only those whose
 * description starts `aws-K8S-`, tag any without a valid `createdAt` and skip them, skip those younger than the
 * minimum age, and delete the rest. Ages come from the injected clock.
 */
export async function collectLeakedEnis(ctx: EniContext, options: LeakGcOptions): Promise<LeakGcReport> {
  const minAge = options.minAgeMs ?? 5 * 60_000;
  const filters = [
    { Name: 'tag-key', Values: [eniTagKeys.instanceId] },
    { Name: 'status', Values: ['available'] },
    { Name: 'vpc-id', Values: [options.vpcId] },
    ...(options.clusterName
      ? [{ Name: `tag:${eniTagKeys.clusterName}`, Values: [options.clusterName] }]
      : []),
  ];
  const candidates = await describeEnisByFilter(ctx.ec2, filters);
  const now = ctx.clock.now();
  const deleted: string[] = [];
  const tooYoung: string[] = [];
  const taggedNow: string[] = [];
  const failed: { eniId: string; code: string }[] = [];
  for (const eni of candidates) {
    // The filter is re-checked here: a client must not trust a server to have applied it.
    if (eni.status !== 'available' || eni.vpcId !== options.vpcId) continue;
    if (!eni.description.startsWith(eniDescriptionPrefix) || eni.tags[eniTagKeys.instanceId] === undefined)
      continue;
    if (options.clusterName && eni.tags[eniTagKeys.clusterName] !== options.clusterName) continue;
    const createdAt = parseRfc3339(eni.tags[eniTagKeys.createdAt] ?? '');
    try {
      if (createdAt === undefined) {
        await ctx.ec2.call('CreateTags', {
          Resources: [eni.eniId],
          Tags: [{ Key: eniTagKeys.createdAt, Value: rfc3339(now) }],
        });
        taggedNow.push(eni.eniId);
        continue;
      }
      if (now - createdAt < minAge) {
        tooYoung.push(eni.eniId);
        continue;
      }
      await deleteEniWithRetries(ctx, eni.eniId);
      deleted.push(eni.eniId);
    } catch (error) {
      const code =
        typeof (error as { code?: unknown })?.code === 'string'
          ? (error as { code: string }).code
          : 'unknown';
      failed.push({ eniId: eni.eniId, code });
    }
  }
  return { deleted, tooYoung, taggedNow, failed };
}
