import { statfsSync } from 'node:fs';

/** statfs(2) `f_type` of tmpfs and ramfs (linux/magic.h). */
const MEMORY_FS_TYPES = new Set([0x01021994, 0x858458f6]);

/**
 * Whether `dir` is on a memory-backed file system (tmpfs, ramfs), where `O_SYNC` and `fsync` have no disk to
 * flush to. `false` when it cannot be told (no such directory, no statfs).
 */
export function isMemoryBacked(dir: string): boolean {
  try {
    return MEMORY_FS_TYPES.has(statfsSync(dir).type);
  } catch {
    return false;
  }
}
