import type { NonRegularFileType as RegularFileType } from '@vpc-cni-kit/regular-file';
/**
 * Every way a datastore operation can fail, as a closed set of stable codes. Match on `code`, never on the
 * message text.
 *
 * - `InvalidArgument`: a malformed ENI spec, pod key or option; nothing changed.
 * - `DuplicateEni` / `UnknownEni`: the ENI is already known / not known.
 * - `EniInUse`: removing an ENI that has assigned addresses without `force`.
 * - `InvalidCidr`: not an IPv4 /32 or /28, or an IPv6 /80, or host bits set.
 * - `DuplicateCidr`: the CIDR (or one overlapping it) is already in the datastore.
 * - `UnknownCidr`: the CIDR is not on that ENI.
 * - `CidrInUse`: removing a CIDR that has assigned addresses without `force`.
 * - `UnknownPod`: no address is assigned to that pod key (nor to its legacy key).
 * - `NoAvailableAddress`: every address of the current mode is assigned or cooling down.
 * - `CheckpointWriteFailed`: the checkpointer failed; the operation was undone.
 * - `CheckpointReadFailed`: the checkpointer could not read the stored checkpoint (for a file: the read failed,
 *   or the path is not a regular file, see {@link DatastoreErrorDetails.fileType}).
 * - `CheckpointMalformed`: the checkpoint is not valid JSON or not the `vpc-cni-ipam/1` shape.
 * - `CheckpointUnknownVersion`: the checkpoint's `version` is not `vpc-cni-ipam/1`.
 * - `CheckpointDuplicateAddress`: two checkpoint entries claim the same address.
 * - `CheckpointDuplicatePodKey`: two checkpoint entries claim the same pod key.
 * - `RestoreNotEmpty`: restore was called on a datastore that already has assignments.
 */
export type DatastoreErrorCode =
  | 'InvalidArgument'
  | 'DuplicateEni'
  | 'UnknownEni'
  | 'EniInUse'
  | 'InvalidCidr'
  | 'DuplicateCidr'
  | 'UnknownCidr'
  | 'CidrInUse'
  | 'UnknownPod'
  | 'NoAvailableAddress'
  | 'CheckpointWriteFailed'
  | 'CheckpointReadFailed'
  | 'CheckpointMalformed'
  | 'CheckpointUnknownVersion'
  | 'CheckpointDuplicateAddress'
  | 'CheckpointDuplicatePodKey'
  | 'RestoreNotEmpty';

const CODES: ReadonlySet<string> = new Set<DatastoreErrorCode>([
  'InvalidArgument',
  'DuplicateEni',
  'UnknownEni',
  'EniInUse',
  'InvalidCidr',
  'DuplicateCidr',
  'UnknownCidr',
  'CidrInUse',
  'UnknownPod',
  'NoAvailableAddress',
  'CheckpointWriteFailed',
  'CheckpointReadFailed',
  'CheckpointMalformed',
  'CheckpointUnknownVersion',
  'CheckpointDuplicateAddress',
  'CheckpointDuplicatePodKey',
  'RestoreNotEmpty',
]);

/**
 * What a checkpoint path that is not a regular file holds (`'FIFO'`, `'socket'`, `'character device'`, …): the
 * type of `@vpc-cni-kit/regular-file`, which reads the checkpoint.
 */
export type NonRegularFileType = RegularFileType;

/** Context attached to a {@link DatastoreError}; which fields are set depends on the code. */
export interface DatastoreErrorDetails {
  /** The ENI concerned. */
  readonly eniId?: string;
  /** The CIDR concerned. */
  readonly cidr?: string;
  /** The address concerned. */
  readonly address?: string;
  /** The pod key concerned, in `network/container/ifname` form. */
  readonly podKey?: string;
  /** Where in a checkpoint the problem is (e.g. `allocations[3].ipv4`). */
  readonly path?: string;
  /**
   * `CheckpointReadFailed` from a file checkpointer: what is at the checkpoint's path when it is not a regular
   * file (nothing was read from it; a FIFO is never waited on).
   */
  readonly fileType?: NonRegularFileType;
  /** The underlying error (an fs error from a checkpointer, for example). */
  readonly cause?: unknown;
}

/** The one error type the datastore throws. `code` is stable; `message` is for humans. */
export class DatastoreError extends Error {
  /** Always `'DatastoreError'`; lets {@link isDatastoreError} work across duplicate package copies. */
  override readonly name = 'DatastoreError';

  constructor(
    /** The stable failure code. */
    readonly code: DatastoreErrorCode,
    message: string,
    /** Context about the failure. */
    readonly details: DatastoreErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
}

/**
 * True when `value` is a {@link DatastoreError} (optionally with the given code). Duck-typed, so it also
 * recognizes errors from another copy of this package.
 */
export function isDatastoreError(value: unknown, code?: DatastoreErrorCode): value is DatastoreError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { name?: unknown; code?: unknown };
  if (v.name !== 'DatastoreError' || typeof v.code !== 'string' || !CODES.has(v.code)) return false;
  return code === undefined || v.code === code;
}
