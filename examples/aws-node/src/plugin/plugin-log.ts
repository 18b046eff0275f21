/**
 * The plugin's log, as the reference's aws-cni keeps it: JSON lines appended to the conflist's `pluginLogFile`
 * (`AWS_VPC_K8S_PLUGIN_LOG_FILE`, default `/var/log/aws-routed-eni/plugin.log`) at `pluginLogLevel`
 * (`AWS_VPC_K8S_PLUGIN_LOG_LEVEL`, default Debug); an empty file name or `stderr` means standard error.
 * Standard output carries the CNI result, so `stdout` means standard error here too.
 *
 * Each plugin is a short process, so lines are written synchronously to a descriptor opened on the first line
 * (tens of microseconds each). The file is rotated as the reference's lumberjack does it, at 100 MiB keeping 5
 * backups, but uncompressed (the plugin never loads zlib), and its size is looked at by one plugin in 16,
 * chosen at random, rather than by every one (the first `fstat` in a process costs ≈0.2 ms): a file passes
 * 100 MiB by a few dozen kilobytes at most. Logging never fails a CNI operation: a file that cannot be opened
 * or written only loses the lines.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { makeDirectories } from '../fs/make-directories.js';
import {
  formatLogLine,
  isoTime,
  type Logger,
  type LogLevel,
  levelRank,
  parseLogLevel,
} from '../log/logger.js';

/** Rotation and clock, for tests. */
export interface PluginLogOptions {
  /** Rotate when the file has reached this size at open (default 100 MiB, the reference's). */
  maxBytes?: number;
  /** Rotated files kept (default 5, the reference's); the oldest beyond it are deleted. */
  backups?: number;
  /** Look at the size on one open in this many (default 16; 1 = every open). */
  checkEvery?: number;
  /** Uniform in [0, 1), to pick the opens that look at the size. */
  random?: () => number;
  /** Wall-clock milliseconds for `ts` and backup names. */
  now?: () => number;
}

/**
 * Opens the plugin log. Nothing is opened until the first line at or above `level` is written.
 *
 * @param destination - `pluginLogFile` from the conflist: a path, or `''`/`stderr` (`stdout`, `/dev/stdout` and the
 * other paths of the standard streams too) for stderr.
 * @param level - `pluginLogLevel` from the conflist (Debug, Info, Warn, Error in any case; anything else is
 * Debug here: aws-cni refuses other names when it reads its configuration, see `readAwsCniConf`).
 */
export function openPluginLog(destination: string, level: string, options: PluginLogOptions = {}): Logger {
  const threshold = levelRank[parseLogLevel(level)];
  const now = options.now ?? Date.now;
  const toStderr = destination === '' || STANDARD_STREAMS.has(destination);
  let fd: number | undefined;
  let broken = false;

  const write = (line: string): void => {
    if (toStderr) {
      writeSync(2, line);
      return;
    }
    if (broken) return;
    if (fd === undefined) {
      const check = (options.random ?? Math.random)() * (options.checkEvery ?? 16) < 1;
      fd = check
        ? openRotated(destination, options.maxBytes ?? 100 * 1024 * 1024, options.backups ?? 5, now)
        : openAppend(destination);
    }
    if (fd === undefined) {
      broken = true;
      return;
    }
    writeSync(fd, line);
  };
  const log =
    (l: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}): void => {
      if (levelRank[l] < threshold) return;
      try {
        write(formatLogLine(now(), l, msg, fields));
      } catch {
        broken = true;
      }
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/**
 * The names of the standard streams, as words and as the paths that reopen them. Standard output carries the CNI
 * result, so each means standard error: a log line on standard output would make the runtime's JSON unreadable.
 */
const STANDARD_STREAMS: ReadonlySet<string> = new Set(
  ['stdout', 'stderr'].concat(
    ...[1, 2].map((fd) => [`/dev/fd/${fd}`, `/proc/self/fd/${fd}`, `/proc/thread-self/fd/${fd}`]),
    ['/dev/stdout', '/dev/stderr'],
  ),
);

/**
 * `a` without blocking: a FIFO nobody reads would hold `open()` (and the plugin) for ever; non-blocking, it
 * fails at once (`ENXIO`) and only the lines are lost. No effect on a regular file.
 */
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK;

/** Opens `path` for appending (creating its directory), rotating it first when it is full. */
function openRotated(path: string, maxBytes: number, backups: number, now: () => number): number | undefined {
  const fd = openAppend(path);
  if (fd === undefined) return undefined;
  try {
    if (fstatSync(fd).size < maxBytes) return fd;
  } catch {
    return fd;
  }
  closeSync(fd);
  try {
    rotate(path, backups, now());
  } catch {
    // Another plugin rotated it first, or the directory cannot be listed: append to what is there now.
  }
  return openAppend(path);
}

function openAppend(path: string): number | undefined {
  try {
    return openSync(path, APPEND, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  try {
    makeDirectories(dirname(path));
    return openSync(path, APPEND, 0o644);
  } catch {
    return undefined;
  }
}

/**
 * Renames the full log to `<name>-<time><ext>` (lumberjack's backup name: `plugin-2026-11-23T21-00-00.000.log`)
 * and deletes the oldest backups beyond `backups`.
 */
function rotate(path: string, backups: number, at: number): void {
  const dir = dirname(path);
  const ext = extname(path);
  const stem = basename(path, ext);
  const stamp = isoTime(at).replace(/:/g, '-').replace(/Z$/, '');
  renameSync(path, join(dir, `${stem}-${stamp}${ext}`));
  const backupName = new RegExp(
    `^${escapeRegExp(stem)}-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}${escapeRegExp(ext)}$`,
  );
  const old = readdirSync(dir)
    .filter((f) => backupName.test(f))
    .sort();
  for (const f of old.slice(0, Math.max(0, old.length - backups))) unlinkSync(join(dir, f));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
