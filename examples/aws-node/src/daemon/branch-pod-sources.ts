/**
 * What the daemon's {@link BranchPods} reads beyond the pod and the host: the ledger file that keeps its records
 * across restarts, and EC2's count of the node's branch ENIs (ADR 0030).
 */
import { dirname, join } from 'node:path';
import { createFileCheckpointer } from '@vpc-cni-kit/datastore';
import { type Ec2Api, eniTagKeys } from '@vpc-cni-kit/eni-manager';
import { BRANCH_ENI_DESCRIPTION } from '@vpc-cni-kit/sgp-branch';
import { BRANCH_LEDGER_FILE, type BranchLedgerStore } from './branch-pod-ledger.js';

/**
 * The ledger next to the IPAM checkpoint (`/var/run/aws-node/branch-pods.json` beside `ipam.json`), written as
 * the checkpoint is: a temp file fsynced and renamed over it, then the directory fsynced.
 */
export function branchLedgerFile(checkpointPath: string): BranchLedgerStore & { readonly path: string } {
  const path = join(dirname(checkpointPath), BRANCH_LEDGER_FILE);
  const file = createFileCheckpointer(path);
  return {
    path,
    read: () => file.read(),
    write: (text) => file.write({ allocations: 0, serialize: () => text }),
  };
}

/**
 * How many branch ENIs EC2 holds for instance `instanceId`: interfaces described `aws-k8s-branch-eni` and tagged
 * with the instance (as the controller creates them), whatever their pod's state. One DescribeNetworkInterfaces
 * (a permission aws-node already has), asked only for a branch pod that has no annotation; concurrent asks
 * share one call, and an answer serves for `reuseMs` (a burst of such pods makes one call).
 */
export function heldBranchesOf(ec2: Ec2Api, instanceId: string, now: () => number, reuseMs = 1000) {
  let last: { at: number; count: number } | undefined;
  let inFlight: Promise<number> | undefined;
  return (): Promise<number> => {
    if (last !== undefined && now() - last.at < reuseMs) return Promise.resolve(last.count);
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
        last = { at: now(), count: out.NetworkInterfaces?.length ?? 0 };
        return last.count;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}
