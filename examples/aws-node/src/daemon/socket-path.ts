/**
 * The gRPC socket's path, checked before the daemon changes anything on the node (ADR 0034): the server binds it
 * only once the checkpoint is restored (an open socket means AddNetwork is answered), so what would stop that
 * bind is found first.
 */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StartError } from './start-error.js';

/**
 * Refuses a socket path the gRPC server could not bind: a path that exists and is not a socket (the server never
 * replaces a file), or one below something that is not a directory. A stale socket is fine (it is replaced).
 *
 * @param path - `AWS_NODE_IPAMD_SOCKET` (absolute; the configuration checked that)
 * @throws StartError `ListenFailed` naming the path and the variable
 */
export async function checkSocketPath(path: string): Promise<void> {
  const at = await stat(path).catch(() => undefined);
  if (at !== undefined && !at.isSocket())
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: it exists and is not a socket (${at.isDirectory() ? 'a directory' : 'a file'}); remove it or set AWS_NODE_IPAMD_SOCKET to another path`,
    );
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
      if (dirname(dir) === dir) return;
      continue;
    }
    if (d.isDirectory()) return;
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: ${dir} is not a directory; set AWS_NODE_IPAMD_SOCKET to a path below a directory`,
    );
  }
}
