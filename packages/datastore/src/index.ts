export type { AddressFamily, ParsedCidr } from './address.js';
export { formatAddress, parseAddress, parseCidr } from './address.js';
export type {
  CheckpointContents,
  CheckpointDocument,
  CheckpointEntry,
  Checkpointer,
  GroupCommitCheckpointer,
} from './checkpoint.js';
export {
  CHECKPOINT_VERSION,
  isGroupCommitCheckpointer,
  nullCheckpointer,
  parseCheckpoint,
  parseRestorableCheckpoint,
  serializeCheckpoint,
} from './checkpoint.js';
export type { Clock } from './clock.js';
export { systemClock } from './clock.js';
export type {
  DatastoreOptions,
  PendingChange,
  RemovalResult,
  RestoreDropReason,
  RestoreOptions,
  RestoreReport,
} from './datastore.js';
export { Datastore, DEFAULT_COOLDOWN_MS, LEGACY_IF_NAME, LEGACY_NETWORK_NAME } from './datastore.js';
export type { DatastoreErrorCode, DatastoreErrorDetails, NonRegularFileType } from './errors.js';
export { DatastoreError, isDatastoreError } from './errors.js';
export type { FileCheckpointerOptions } from './file-checkpointer.js';
export { checkpointPathForNetworkCard, createFileCheckpointer } from './file-checkpointer.js';
export type { GroupCommit, GroupCommitStats } from './group-commit.js';
export { createGroupCommit } from './group-commit.js';
export type {
  GroupCommitFileCheckpointer,
  GroupCommitFileCheckpointerOptions,
} from './group-commit-file-checkpointer.js';
export { createGroupCommitFileCheckpointer } from './group-commit-file-checkpointer.js';
export type {
  Assignment,
  AssignResult,
  CidrStats,
  DatastoreStats,
  DroppedAssignment,
  EniSpec,
  EniStats,
  PodKey,
  PodMetadata,
  Releasable,
  ReleasedAddress,
  UnassignResult,
} from './types.js';
