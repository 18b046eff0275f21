import type { DescribeSubnetsCommandOutput } from '@aws-sdk/client-ec2';
import type { Ec2Api } from './ec2/client.js';
import { Ec2Fields } from './ec2/response.js';
import { awsId, index } from './shapes.js';

/** A subnet as subnet discovery ranks it. */
export interface SubnetCandidate {
  /** `subnet-…` id. */
  readonly subnetId: string;
  /** `AvailableIpAddressCount`. */
  readonly availableIpv4: number;
  /** Tags as a map. */
  readonly tags: Readonly<Record<string, string>>;
}

/** The tag that opts a secondary subnet into pod ENIs (`0` opts any subnet out). */
export const subnetRoleTag = 'kubernetes.io/role/cni';
/** Prefix of the cluster-scoping subnet tags. */
export const subnetClusterTagPrefix = 'cni.networking.k8s.aws/cluster/';

/**
 * True when a subnet's tags keep pod addresses out of it (the reference's `IsExcludedForPodIPs`): tagged
 * `kubernetes.io/role/cni=0`, or, with a cluster name, carrying `cni.networking.k8s.aws/cluster/*` tags none of
 * which names this cluster.
 */
export function subnetExcludedForPods(tags: Readonly<Record<string, string>>, clusterName?: string): boolean {
  if (tags[subnetRoleTag] === '0') return true;
  if (clusterName === undefined || clusterName === '') return false;
  const clusterTags = Object.keys(tags).filter((k) => k.startsWith(subnetClusterTagPrefix));
  return clusterTags.length > 0 && !clusterTags.includes(subnetClusterTagPrefix + clusterName);
}

/** Inputs to {@link rankSubnets} besides the candidates. */
export interface RankSubnetsOptions {
  /** The node's primary subnet: eligible without the role tag. */
  readonly primarySubnetId: string;
  /** The reference's `CLUSTER_NAME`: a subnet with any cluster tag must carry this cluster's. */
  readonly clusterName?: string;
}

/**
 * The reference's subnet discovery rule, pure: keep the primary subnet (unless tagged `kubernetes.io/role/cni=0`)
 * and subnets tagged `kubernetes.io/role/cni` (≠ `0`); when a cluster name is set, drop subnets carrying some
 * other cluster's `cni.networking.k8s.aws/cluster/*` tag; order by most free addresses first (ties: id order).
 */
export function rankSubnets(
  candidates: readonly SubnetCandidate[],
  options: RankSubnetsOptions,
): SubnetCandidate[] {
  return candidates
    .filter((s) => {
      if (subnetExcludedForPods(s.tags, options.clusterName)) return false;
      return s.subnetId === options.primarySubnetId || s.tags[subnetRoleTag] !== undefined;
    })
    .sort((a, b) => b.availableIpv4 - a.availableIpv4 || a.subnetId.localeCompare(b.subnetId));
}

/** Where to look for subnets. */
export interface DiscoverSubnetsOptions extends RankSubnetsOptions {
  /** The node's VPC. */
  readonly vpcId: string;
  /** The node's availability zone. */
  readonly availabilityZone: string;
}

/**
 * Subnets for a new ENI, best first: `DescribeSubnets` filtered by VPC and zone, ranked by {@link rankSubnets}.
 * When `DescribeSubnets` fails (throttled past the retries, or not allowed by IAM), falls back to the primary subnet,
 * as the reference does; a reply whose subnet ids or counts are malformed rejects with `Ec2InvalidResponse`.
 */
export async function discoverSubnets(
  ec2: Ec2Api,
  options: DiscoverSubnetsOptions,
): Promise<SubnetCandidate[]> {
  let out: DescribeSubnetsCommandOutput;
  try {
    out = await ec2.call('DescribeSubnets', {
      Filters: [
        { Name: 'vpc-id', Values: [options.vpcId] },
        { Name: 'availability-zone', Values: [options.availabilityZone] },
      ],
    });
  } catch {
    return [{ subnetId: options.primarySubnetId, availableIpv4: 0, tags: {} }];
  }
  // A reply that came but is malformed is not a failure to fall back from: it fails the caller.
  const candidates = new Ec2Fields('DescribeSubnets').list('Subnets', out.Subnets, (s, f) => {
    const tags: Record<string, string> = {};
    for (const t of s.Tags ?? []) if (t.Key !== undefined) tags[t.Key] = t.Value ?? '';
    return {
      subnetId: f.required('SubnetId', s.SubnetId, (v) => awsId('subnet', v), 'a subnet id'),
      availableIpv4:
        f.optional('AvailableIpAddressCount', s.AvailableIpAddressCount, index, 'an address count') ?? 0,
      tags,
    };
  });
  return rankSubnets(candidates, options);
}
