import type { CheckpointContents, Checkpointer } from './checkpoint.js';
import { readCheckpointFile } from './internal/read-file.js';
import { writeFileDurablySync } from './internal/write-sync.js';

/** Options for {@link createFileCheckpointer}. */
export interface FileCheckpointerOptions {
  /** File mode of the checkpoint (default `0o600`: pod names and addresses are node-private). */
  readonly mode?: number;
}

/**
 * A {@link Checkpointer} backed by one JSON file, crash-safe: each write goes to a temp file in the same
 * directory (`<name>.tmp-<pid>-<n>`, created exclusively with mode 0600), is fsynced, renamed over the
 * checkpoint, and then the directory is fsynced so the rename itself survives a power loss. A reader never
 * sees a half-written file. A missing file reads as `undefined` (a fresh node); a path that is not a regular
 * file (a FIFO, a device, a directory) is `CheckpointReadFailed` with its `fileType`, at once, never a read that
 * waits for a writer or never ends.
 *
 * Use `/var/run/aws-node/ipam.json` (the reference's `AWS_VPC_K8S_CNI_BACKING_STORE`) to share state with
 * the reference daemon; see {@link checkpointPathForNetworkCard} for network cards above 0.
 *
 * @example
 * ```ts
 * const ds = new Datastore({ clock: systemClock, checkpointer: createFileCheckpointer('/var/run/aws-node/ipam.json') });
 * ```
 */
export function createFileCheckpointer(path: string, options: FileCheckpointerOptions = {}): Checkpointer {
  const mode = options.mode ?? 0o600;
  return {
    read(): string | undefined {
      return readCheckpointFile(path);
    },
    write(contents: CheckpointContents): void {
      writeFileDurablySync(path, contents.serialize(), mode);
    },
  };
}

/**
 * The checkpoint path for a network card, as the reference names it: the base path for card 0, and the base
 * path without `.json` plus `-nic-<N>.json` for card N > 0 (`ipam.json` → `ipam-nic-1.json`).
 */
export function checkpointPathForNetworkCard(basePath: string, networkCard: number): string {
  if (networkCard === 0) return basePath;
  const stem = basePath.endsWith('.json') ? basePath.slice(0, -'.json'.length) : basePath;
  return `${stem}-nic-${networkCard}.json`;
}
