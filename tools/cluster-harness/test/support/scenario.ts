/** One-node clusters on the virtual VPC for scenario tests: start, the ENI document, and waiting for a condition. */
import type { AddNetworkRequest } from '@vpc-cni-kit/aws-node';
import { buildLibcniRunner } from '@vpc-cni-kit/testkit';
import { awsNodeBinDir } from '../../src/bin-dir.js';
import { Cluster, type ClusterOptions } from '../../src/cluster.js';

/** Network card 0 of the introspection's `/v1/enis`. */
export interface EnisCard {
  TotalIPs: number;
  AssignedIPs: number;
  ENIs: Record<string, unknown>;
}

/** Starts a one-node cluster (no simulator rate limits) running the built aws-node. */
export async function startOneNode(options: Partial<ClusterOptions> = {}): Promise<Cluster> {
  return Cluster.start({
    nodes: 1,
    binDir: awsNodeBinDir(),
    libcniRunner: await buildLibcniRunner(),
    simulator: { rateLimits: false },
    ...options,
  });
}

/** Node 0's ENIs on network card 0, from its introspection endpoint. */
export async function enis(c: Cluster): Promise<EnisCard> {
  return ((await c.introspect(0, '/v1/enis')) as Record<string, EnisCard>)['0']!;
}

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 500,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * An AddNetwork request for pod `default/intruder` naming `netns` as its network namespace, as a hostile or
 * broken runtime might send straight to the daemon's socket (the daemon refuses the node's own namespace).
 */
export function intruderAddRequest(netns: string): AddNetworkRequest {
  return {
    K8S_POD_NAME: 'intruder',
    K8S_POD_NAMESPACE: 'default',
    K8S_POD_INFRA_CONTAINER_ID: 'c-intruder',
    Netns: netns,
    IfName: 'eth9',
    NetworkName: 'aws-cni',
    ContainerID: 'c-intruder',
    ClientVersion: '',
    RequiresMultiNICAttachment: false,
    PodPlumbing: true,
    Mtu: 0,
    VethPrefix: '',
  };
}
