/**
 * A unix socket's path (the gRPC socket's, or an HTTP endpoint's `unix:` bind address), checked before the daemon
 * binds it, which it does before it changes anything on the node (ADR 0034, 0035): what is in the way is named
 * with the setting that chose the path, and nothing found there is deleted but a stale socket.
 */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isMakeDirectoryError, makeDirectories } from '../fs/make-directories.js';
import { isListening } from '../rpc/unix-socket.js';
import { StartError } from './start-error.js';

/**
 * Refuses a socket path a server could not bind: a path that exists and is not a socket (a server never
 * replaces a file), a socket a server listens on (another aws-node, or anything else: its socket is never
 * deleted), or one below something that is not a directory. A stale socket (nobody listens) is fine: the server
 * replaces it.
 * Then creates the socket's directory (the server would create it anyway), so a directory that cannot be made
 * (read-only, no permission, under `/proc`) stops the start here, not after the node was changed.
 *
 * @param path - the socket's path (absolute; the configuration checked that)
 * @param setting - the setting that named it, for the hint (default `AWS_NODE_IPAMD_SOCKET`)
 * @throws StartError `ListenFailed` naming the path and the setting
 */
export async function checkSocketPath(path: string, setting = 'AWS_NODE_IPAMD_SOCKET'): Promise<void> {
  const at = await stat(path).catch(() => undefined);
  if (at !== undefined && !at.isSocket())
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: it exists and is not a socket (${at.isDirectory() ? 'a directory' : 'a file'}); remove it or set ${setting} to another path`,
    );
  if (at?.isSocket()) {
    const live = await isListening(path).catch((e: NodeJS.ErrnoException) => e);
    if (live instanceof Error)
      throw new StartError('ListenFailed', `cannot serve on ${path}: ${live.code ?? live.message}`, {
        cause: live,
      });
    if (live)
      throw new StartError(
        'ListenFailed',
        `cannot serve on ${path}: a server is listening on it (another aws-node?); stop that one or set ${setting} to another path`,
      );
  }
  // The nearest existing ancestor must be a directory (the server creates the missing ones).
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const d = await stat(dir).catch((e: NodeJS.ErrnoException) =>
      e.code === 'ENOENT' || e.code === 'ENOTDIR' ? undefined : e,
    );
    if (d instanceof Error)
      throw new StartError('ListenFailed', `cannot serve on ${path}: ${dir}: ${d.code ?? d.message}`, {
        cause: d,
      });
    if (d === undefined) {
      if (dirname(dir) === dir) break;
      continue;
    }
    if (d.isDirectory()) break;
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: ${dir} is not a directory; set ${setting} to a path below a directory`,
    );
  }
  try {
    makeDirectories(dirname(path));
  } catch (e) {
    if (!isMakeDirectoryError(e)) throw e;
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: ${e.message}; set ${setting} to a path in a writable directory`,
      { cause: e },
    );
  }
}
