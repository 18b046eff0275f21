import { GrpcStatus } from '../rpc/grpc-client.js';
import { type CniBackend, RpcStatusError } from '../rpc/grpc-server.js';

/**
 * Refuses a call from an aws-cni of another version with `FAILED_PRECONDITION` and the reference's message
 * (`wrong client version "X" (!= "Y")`). The reference compares strictly; its plugin and daemon both send ""
 * in practice, so "" is accepted too.
 */
export function checkClientVersion(daemonVersion: string, clientVersion: string): void {
  if (clientVersion !== '' && clientVersion !== daemonVersion) {
    throw new RpcStatusError(
      GrpcStatus.FAILED_PRECONDITION,
      `wrong client version "${clientVersion}" (!= "${daemonVersion}")`,
    );
  }
}

/**
 * `backend` with the ClientVersion check on this daemon's GC and STATUS as well, so every call that carries a
 * version is held to it: a mismatched plugin's GC releases nothing, and its STATUS does not report ready for
 * ADDs that would be refused. (The reference has only AddNetwork and DelNetwork and checks both; `ipamBackend`
 * checks those itself, since it also reports a branch pod's mismatch on the pod.)
 */
export function checkingClientVersion(daemonVersion: string, backend: CniBackend): CniBackend {
  const { gc, status } = backend;
  return {
    ...backend,
    ...(gc === undefined
      ? {}
      : {
          gc: async (request) => {
            checkClientVersion(daemonVersion, request.ClientVersion);
            return gc(request);
          },
        }),
    ...(status === undefined
      ? {}
      : {
          status: async (request) => {
            checkClientVersion(daemonVersion, request.ClientVersion);
            return status(request);
          },
        }),
  };
}
