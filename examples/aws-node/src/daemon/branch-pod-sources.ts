/**
 * What the daemon's {@link BranchPods} reads beyond the pod and the host: the ledger file that keeps its records
 * across restarts, and EC2's count of the node's branch ENIs (ADR 0030).
 */
import { dirname, join } from 'node:path';
import { createGroupCommitFileCheckpointer } from '@vpc-cni-kit/datastore';
import { type Ec2Api, eniTagKeys } from '@vpc-cni-kit/eni-manager';
import { BRANCH_ENI_DESCRIPTION, BRANCH_POD_TAG } from '@vpc-cni-kit/sgp-branch';
import { BRANCH_LEDGER_FILE, type BranchLedgerStore } from './branch-pod-ledger.js';
import type { HeldBranch } from './branch-pods.js';

/**
 * The ledger next to the IPAM checkpoint (`/var/run/aws-node/branch-pods.json` beside `ipam.json`), written as
 * the checkpoint is: a temp file flushed and renamed over it, then the directory fsynced; on the thread pool on a
 * disk, in the call on a memory-backed file system (`/var/run` on a node), and coalesced under load.
 */
export function branchLedgerFile(checkpointPath: string): BranchLedgerStore & { readonly path: string } {
  const file = createGroupCommitFileCheckpointer(join(dirname(checkpointPath), BRANCH_LEDGER_FILE));
  return {
    path: file.path,
    read: () => file.read(),
    write: (snapshot) => file.commit({ allocations: 0, serialize: snapshot }),
  };
}

/**
 * The branch ENIs EC2 holds for instance `instanceId`: interfaces described `aws-k8s-branch-eni` and tagged with
 * the instance (as the controller creates them), whatever their pod's state, each with the pod it was made for
 * when tagged so. One DescribeNetworkInterfaces (a permission aws-node already has), asked only for a branch pod
 * that has no annotation; concurrent asks share one call, and an answer serves for `reuseMs` (a burst of such pods
 * makes one call).
 */
export function heldBranchesOf(ec2: Ec2Api, instanceId: string, now: () => number, reuseMs = 1000) {
  let last: { at: number; held: HeldBranch[] } | undefined;
  let inFlight: Promise<HeldBranch[]> | undefined;
  return (): Promise<readonly HeldBranch[]> => {
    if (last !== undefined && now() - last.at < reuseMs) return Promise.resolve(last.held);
    inFlight ??= ec2
      .call('DescribeNetworkInterfaces', {
        Filters: [
          { Name: `tag:${eniTagKeys.instanceId}`, Values: [instanceId] },
          { Name: 'description', Values: [BRANCH_ENI_DESCRIPTION] },
        ],
        // A trunk takes at most 120 branches: one page always holds them.
        MaxResults: 1000,
      })
      .then((out) => {
        const held = (out.NetworkInterfaces ?? []).map((ni) => {
          const pod = ni.TagSet?.find((t) => t.Key === BRANCH_POD_TAG)?.Value;
          return pod === undefined ? {} : { pod };
        });
        last = { at: now(), held };
        return held;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}
