/**
 * Creating a directory and its missing parents, for the paths an operator names (log files, the daemon's
 * socket, the CNI configuration directory).
 *
 * Node 20's `mkdir(path, { recursive: true })` (sync, callback and promise forms alike) never returns when
 * `mkdir(2)` answers ENOENT for a directory whose parent exists: it creates the parent again, which already
 * exists, and tries once more, forever. Pseudo-filesystems answer exactly that (`/proc`, for a name it does not
 * know), so `AWS_VPC_K8S_CNI_LOG_FILE=/proc/x/ipamd.log` hung the daemon, and a conflist `pluginLogFile` there
 * hung every CNI call. {@link makeDirectories} creates one level at a time with a plain `mkdir`, so every
 * level is tried a bounded number of times and a level that cannot be made is a typed error.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * A directory (or one of its parents) could not be created. `code` is stable; `errno` is the system error
 * name: `EACCES`, `EROFS`, `ENOTDIR` (a file where a parent directory should be), `EEXIST` (a file in the
 * directory's place), `ENOENT` (the parent exists but refuses new entries, as `/proc` does), or `UNKNOWN`.
 */
export class MakeDirectoryError extends Error {
  /** Stable code of this failure. */
  readonly code = 'DirectoryNotCreated' as const;
  /** The level that could not be created (the directory asked for, or one of its parents). */
  readonly path: string;
  /** The system error name. */
  readonly errno: string;
  constructor(path: string, errno: string, options?: { cause?: unknown }) {
    super(`cannot create the directory ${path} (${errno})`, options);
    this.name = 'MakeDirectoryError';
    this.path = path;
    this.errno = errno;
  }
}

/** True when `e` is a {@link MakeDirectoryError} (by its code, not only by class). */
export function isMakeDirectoryError(e: unknown): e is MakeDirectoryError {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'DirectoryNotCreated';
}

/** Options for {@link makeDirectories}. */
export interface MakeDirectoriesOptions {
  /** Mode of each directory created (before the umask); default 0o755. Existing ones are left as they are. */
  mode?: number;
}

/**
 * Makes sure `path` is a directory, creating it and any missing parents one level at a time (as `mkdir -p`
 * does). An existing directory is fine, including one another process creates meanwhile; an existing file
 * in the way is `EEXIST` (or `ENOTDIR` from the level below it). Synchronous: it runs at start-up or once per
 * plugin call, and costs one `mkdir` when the directory exists.
 *
 * @throws {@link MakeDirectoryError} naming the level that could not be created and why.
 */
export function makeDirectories(path: string, options: MakeDirectoriesOptions = {}): void {
  const mode = options.mode ?? 0o755;
  // Walk up to the first level that exists (or is created), remembering the ones that are missing.
  const missing: string[] = [];
  let level = resolve(path);
  for (;;) {
    const outcome = makeOne(level, mode);
    if (outcome !== 'ENOENT') break;
    const parent = dirname(level);
    if (parent === level) throw new MakeDirectoryError(level, 'ENOENT');
    missing.push(level);
    level = parent;
  }
  // Then down again. Each parent now exists, so ENOENT here is the parent refusing new entries: an error.
  for (let i = missing.length - 1; i >= 0; i--) {
    const dir = missing[i] as string;
    if (makeOne(dir, mode) === 'ENOENT') throw new MakeDirectoryError(dir, 'ENOENT');
  }
}

/** One `mkdir`: `'done'` when `dir` now is a directory, `'ENOENT'` when its parent is missing (or refuses). */
function makeOne(dir: string, mode: number): 'done' | 'ENOENT' {
  try {
    mkdirSync(dir, { mode });
    return 'done';
  } catch (cause) {
    const errno = (cause as NodeJS.ErrnoException).code ?? 'UNKNOWN';
    if (errno === 'ENOENT') return 'ENOENT';
    if (errno === 'EEXIST' && isDirectory(dir)) return 'done';
    throw new MakeDirectoryError(dir, errno, { cause });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
