/**
 * The daemon's gRPC socket, taken before the node is changed (ADR 0035): it answers every call `UNAVAILABLE`
 * until the restore is done, so a socket that cannot be created stops the start while the node is as it was.
 */
import { isMakeDirectoryError } from '../fs/make-directories.js';
import { type EarlyRpcServer, listenRpc } from '../rpc/grpc-server.js';
import { StartError } from './start-error.js';

/**
 * What a call to a starting daemon is answered with (gRPC `UNAVAILABLE`): the plugin turns it into a
 * "try again later" ADD (the runtime retries the pod) and a DEL that undoes the pod's host side from its
 * prevResult, as when the daemon is down.
 */
export const STARTING_MESSAGE =
  "aws-node is starting: it serves once the node's addresses are restored; the runtime retries";

/** Hints by the bind's errno, for the operator's one line. */
const HINTS: Readonly<Record<string, string>> = {
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EADDRINUSE: 'a server is listening on it',
};

/**
 * Binds the gRPC socket at `path` (after {@link checkSocketPath} found nothing in the way), answering
 * {@link STARTING_MESSAGE} until `serve` is called.
 *
 * @param path - the socket's path
 * @param setting - the setting that named it, for the hint (default `AWS_NODE_IPAMD_SOCKET`)
 * @throws StartError `ListenFailed` with the errno and a hint when the socket cannot be created or bound
 */
export async function listenEarlyRpc(
  path: string,
  setting = 'AWS_NODE_IPAMD_SOCKET',
): Promise<EarlyRpcServer> {
  try {
    return await listenRpc({ socketPath: path, starting: STARTING_MESSAGE });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const errno = typeof code === 'string' && !isMakeDirectoryError(e) ? code : undefined;
    const why =
      errno === undefined
        ? e instanceof Error
          ? e.message
          : String(e)
        : HINTS[errno] === undefined
          ? errno
          : `${errno}, ${HINTS[errno]}`;
    throw new StartError(
      'ListenFailed',
      `cannot serve on ${path}: ${why}; nothing on the node was changed; set ${setting} to another path`,
      { cause: e },
    );
  }
}
