/**
 * What the daemon's {@link BranchPods} reads beyond the pod and the host: the ledger file that keeps its records
 * across restarts, and EC2's count of the node's branch ENIs (ADR 0030).
 */
import { dirname, join } from 'node:path';
import { createGroupCommitFileCheckpointer } from '@vpc-cni-kit/datastore';
import { type Ec2Api, eniTagKeys, isEniManagerError } from '@vpc-cni-kit/eni-manager';
import { BRANCH_ENI_DESCRIPTION, BRANCH_POD_TAG } from '@vpc-cni-kit/sgp-branch';
import { BRANCH_LEDGER_FILE, type BranchLedgerStore } from './branch-pod-ledger.js';
import type { HeldBranch } from './branch-pods.js';
import type { Logger } from './logger.js';

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

/** Options of {@link heldBranchesOf}. */
export interface HeldBranchesOptions {
  /** Monotonic ms (how long an answer serves). */
  readonly now: () => number;
  /**
   * The daemon's log: one warning when the lookup starts failing (with the error code), one line when it works
   * again; nothing per failed ask, however many branch pods ask.
   */
  readonly log: Logger;
  /** How long an answer serves. @defaultValue 1000 */
  readonly reuseMs?: number;
}

/**
 * The branch ENIs EC2 holds for instance `instanceId`: interfaces described `aws-k8s-branch-eni` and tagged with
 * the instance (as the controller creates them), whatever their pod's state, each with the pod it was made for
 * when tagged so. One DescribeNetworkInterfaces (a permission aws-node already has), asked only for a branch pod
 * that has no annotation; concurrent asks share one call, and an answer serves for `reuseMs` (a burst of such pods
 * makes one call). A failed call rejects (the caller then answers from the node's links alone) and is logged
 * when the lookup starts failing, not per call.
 */
export function heldBranchesOf(ec2: Ec2Api, instanceId: string, options: HeldBranchesOptions) {
  const { now, log, reuseMs = 1000 } = options;
  let last: { at: number; held: HeldBranch[] } | undefined;
  let inFlight: Promise<HeldBranch[]> | undefined;
  let failing = false;
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
      .then(
        (out) => {
          const held = (out.NetworkInterfaces ?? []).map((ni) => {
            const pod = ni.TagSet?.find((t) => t.Key === BRANCH_POD_TAG)?.Value;
            return pod === undefined ? {} : { pod };
          });
          last = { at: now(), held };
          if (failing) {
            failing = false;
            log.info("security groups for pods: this node's branch ENIs are read from EC2 again", {
              instanceId,
            });
          }
          return held;
        },
        (e: unknown) => {
          if (!failing) {
            failing = true;
            log.warn(
              "security groups for pods: cannot read this node's branch ENIs from EC2; until it can, a branch pod " +
                'without its annotation on a trunk whose slots are held by branches in cooldown fails with ' +
                'ANNOTATION_MISSING (122), not BRANCH_LIMIT_REACHED (126)',
              {
                instanceId,
                code: isEniManagerError(e) ? e.code : 'Internal',
                error: e instanceof Error ? e.message : String(e),
              },
            );
          }
          throw e;
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}
