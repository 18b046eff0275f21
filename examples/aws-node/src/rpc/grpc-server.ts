/**
 * The daemon's gRPC server: `rpc.CNIBackend` (AddNetwork, DelNetwork, and this daemon's Gc and Status) and `grpc.health.v1.Health/Check` on
 * a unix socket, on @grpc/grpc-js with the hand-written codec (no protobufjs, no generated code).
 */
import { chmod, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { makeDirectories } from '../fs/make-directories.js';
import {
  type AddNetworkReply,
  type AddNetworkRequest,
  type DelNetworkReply,
  type DelNetworkRequest,
  decode,
  encode,
  type GcReply,
  type GcRequest,
  type Messages,
  Methods,
  ServingStatus,
  type StatusReply,
  type StatusRequest,
} from './messages.js';
import { isListening } from './unix-socket.js';

/** What the daemon implements behind `rpc.CNIBackend`. Omitted reply fields take their proto3 defaults. */
export interface CniBackend {
  addNetwork(request: AddNetworkRequest): Promise<Partial<AddNetworkReply>>;
  delNetwork(request: DelNetworkRequest): Promise<Partial<DelNetworkReply>>;
  /** CNI 1.1 GC (this daemon's extension); absent: answered `UNIMPLEMENTED`. */
  gc?(request: GcRequest): Promise<Partial<GcReply>>;
  /** CNI 1.1 STATUS (this daemon's extension); absent: answered `UNIMPLEMENTED`. */
  status?(request: StatusRequest): Promise<Partial<StatusReply>>;
}

/** An error a backend throws to answer with a specific gRPC status (e.g. FAILED_PRECONDITION). */
export class RpcStatusError extends Error {
  constructor(
    readonly grpcStatus: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcStatusError';
  }
}

/** Service names the health service reports SERVING for (the reference: "" and "grpc.health.v1.aws-node"). */
export const HEALTH_SERVICES = ['', 'grpc.health.v1.aws-node'] as const;

/** Options for {@link startRpcServer}. */
export interface RpcServerOptions {
  socketPath: string;
  backend: CniBackend;
  /** File mode of the socket (default 0o660, as the reference). */
  mode?: number;
}

/** A running server. */
export interface RpcServer {
  socketPath: string;
  /** Stops accepting calls, lets in-flight calls finish (up to `graceMs`), removes the socket. */
  close(graceMs?: number): Promise<void>;
}

function method<Req extends keyof Messages, Res extends keyof Messages>(path: string, req: Req, res: Res) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (v: Messages[Req]) => Buffer.from(encode(req, v)),
    requestDeserialize: (b: Buffer) => decode(req, b),
    responseSerialize: (v: Partial<Messages[Res]>) => Buffer.from(encode(res, v)),
    responseDeserialize: (b: Buffer) => decode(res, b),
  };
}

const cniBackendService = {
  AddNetwork: method(Methods.AddNetwork, 'AddNetworkRequest', 'AddNetworkReply'),
  DelNetwork: method(Methods.DelNetwork, 'DelNetworkRequest', 'DelNetworkReply'),
  Gc: method(Methods.Gc, 'GcRequest', 'GcReply'),
  Status: method(Methods.Status, 'StatusRequest', 'StatusReply'),
} satisfies grpc.ServiceDefinition;

const healthService = {
  Check: method(Methods.HealthCheck, 'HealthCheckRequest', 'HealthCheckResponse'),
} satisfies grpc.ServiceDefinition;

function unary<Req, Res>(fn: (req: Req) => Promise<Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    // A handler that throws before its first await answers like one that rejects.
    new Promise<Res>((resolve) => resolve(fn(call.request))).then(
      (reply) => callback(null, reply),
      (e: unknown) => {
        const status = e instanceof RpcStatusError ? e.grpcStatus : grpc.status.INTERNAL;
        callback({ code: status, details: e instanceof Error ? e.message : String(e) }, null);
      },
    );
  };
}

/** Options for {@link listenRpc}. */
export interface ListenRpcOptions {
  socketPath: string;
  /** File mode of the socket (default 0o660, as the reference). */
  mode?: number;
  /**
   * What every call is answered with (gRPC `UNAVAILABLE`) until {@link EarlyRpcServer.serve} hands the server
   * its backend. Default: `the server is starting`.
   */
  starting?: string;
}

/** A server listening before it can answer (see {@link listenRpc}). */
export interface EarlyRpcServer extends RpcServer {
  /** From now on calls go to `backend`. */
  serve(backend: CniBackend): void;
}

/**
 * Starts the server on a unix socket and answers every call `UNAVAILABLE` with `options.starting` until
 * {@link EarlyRpcServer.serve} gives it a backend, so the socket is taken before the daemon does anything that
 * would have to be undone if it could not be (ADR 0035). Creates the parent directory (0755), replaces a stale
 * socket (one nobody listens on), binds, and sets the socket's mode (0660).
 *
 * Rejects, leaving what is at the path as it was, when the path holds something other than a socket, or a socket
 * a server listens on (`EADDRINUSE`); with a `MakeDirectoryError` (code `DirectoryNotCreated`) when the socket's
 * directory cannot be created, within one `mkdir` per missing level (never the endless retry of a recursive
 * `mkdir` under `/proc`); and with the bind's errno error (`code` `EROFS`, `EACCES`, `ENOSPC`, …) when the socket
 * cannot be created there.
 */
export async function listenRpc(options: ListenRpcOptions): Promise<EarlyRpcServer> {
  const { socketPath } = options;
  const starting = options.starting ?? 'the server is starting';
  makeDirectories(dirname(socketPath));
  const existing = await stat(socketPath).catch(() => undefined);
  if (existing !== undefined) {
    if (!existing.isSocket())
      throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
    if (await isListening(socketPath))
      throw Object.assign(
        new Error(`${socketPath}: a server listens on this socket; refusing to replace it`),
        {
          code: 'EADDRINUSE',
        },
      );
    await rm(socketPath, { force: true });
  }
  // grpc-js reports a failed bind as text only; a bind of our own first gives the errno (the socket it creates
  // is removed again when it closes).
  await trialBind(socketPath);
  let backend: CniBackend | undefined;
  const serving = (): CniBackend => {
    if (backend === undefined) throw new RpcStatusError(grpc.status.UNAVAILABLE, starting);
    return backend;
  };
  const server = new grpc.Server();
  server.addService(cniBackendService, {
    AddNetwork: unary((req: AddNetworkRequest) => serving().addNetwork(req)),
    DelNetwork: unary((req: DelNetworkRequest) => serving().delNetwork(req)),
    Gc: unary(async (req: GcRequest) => {
      const b = serving();
      if (b.gc === undefined) throw new RpcStatusError(grpc.status.UNIMPLEMENTED, 'no GC');
      return b.gc(req);
    }),
    Status: unary(async (req: StatusRequest) => {
      const b = serving();
      if (b.status === undefined) throw new RpcStatusError(grpc.status.UNIMPLEMENTED, 'no STATUS');
      return b.status(req);
    }),
  });
  server.addService(healthService, {
    Check: unary(async (req: Messages['HealthCheckRequest']) => {
      if (!(HEALTH_SERVICES as readonly string[]).includes(req.service)) {
        throw new RpcStatusError(grpc.status.NOT_FOUND, `unknown service ${JSON.stringify(req.service)}`);
      }
      serving();
      return { status: ServingStatus.SERVING };
    }),
  });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    );
  });
  await chmod(socketPath, options.mode ?? 0o660);
  return {
    socketPath,
    serve: (b) => {
      backend = b;
    },
    close: async (graceMs = 5000) => {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      await rm(socketPath, { force: true });
    },
  };
}

/**
 * Starts the server on a unix socket with its backend: {@link listenRpc} then {@link EarlyRpcServer.serve}, for a
 * server that has nothing to wait for.
 */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const server = await listenRpc(options);
  server.serve(options.backend);
  return server;
}

/** Binds a unix socket at `path` and closes it again (which removes it); rejects with the bind's errno error. */
function trialBind(path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(path, () => probe.close(() => resolve()));
  });
}
