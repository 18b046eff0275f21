/**
 * What the previous daemon on this node left behind (the IPAM checkpoint, and with security groups for pods the
 * branch-pod ledger beside it), read and checked before the daemon changes anything on the node (ADR 0034): a
 * checkpoint it could not restore stops the start while the host is still as it was, and the restore later works
 * from what was read here, never from a second read.
 */
import {
  type CheckpointDocument,
  type Checkpointer,
  isDatastoreError,
  parseRestorableCheckpoint,
} from '@vpc-cni-kit/datastore';
import { type BranchLedgerRead, type BranchLedgerStore, readBranchLedger } from './branch-pod-ledger.js';
import { StartError } from './start-error.js';

/** What {@link readSavedState} read. */
export interface SavedState {
  /** The IPAM checkpoint, checked for restore; `null` on a fresh node (no file). */
  readonly checkpoint: CheckpointDocument | null;
  /** The branch-pod ledger as read (only when a ledger store was given). */
  readonly branchLedger: BranchLedgerRead | undefined;
}

/**
 * Reads the checkpoint at `path` through `checkpointer` and checks that it can be restored; reads the branch-pod
 * ledger too when `branchLedger` is given (whose content never stops a start: ADR 0030).
 *
 * @throws StartError `CheckpointInvalid` naming the file, why, and what the operator can do
 */
export function readSavedState(
  checkpointer: Pick<Checkpointer, 'read'>,
  path: string,
  branchLedger?: BranchLedgerStore,
): SavedState {
  let checkpoint: CheckpointDocument | null;
  try {
    const text = checkpointer.read();
    checkpoint = text === undefined ? null : parseRestorableCheckpoint(text);
  } catch (e) {
    throw new StartError(
      'CheckpointInvalid',
      `checkpoint ${path} cannot be restored (${reasonOf(e)}): ${HINT}`,
      {
        cause: e,
      },
    );
  }
  return {
    checkpoint,
    branchLedger: branchLedger === undefined ? undefined : readBranchLedger(branchLedger),
  };
}

const HINT =
  'nothing on the node was changed; move the file aside (or set AWS_VPC_K8S_CNI_BACKING_STORE elsewhere) to ' +
  'start with an empty pool, but the pods already on this node keep their addresses only if it is restored';

/**
 * Why: the datastore's reason (which names where in the document), with the JSON parser's or the read's; for a
 * path that is not a regular file (a FIFO, a device, a directory), what it is.
 */
function reasonOf(e: unknown): string {
  const cause = (e as { cause?: unknown }).cause;
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (isDatastoreError(e, 'CheckpointReadFailed')) {
    const fileType = e.details.fileType;
    if (fileType !== undefined) return `it is a ${fileType}, not a regular file`;
    return `cannot read it: ${errno ?? String(cause)}`;
  }
  if (isDatastoreError(e)) return cause instanceof SyntaxError ? `${e.message}: ${cause.message}` : e.message;
  return e instanceof Error ? e.message : String(e);
}
