/**
 * The daemon's gRPC server: `rpc.CNIBackend` (AddNetwork, DelNetwork, and this daemon's Gc and Status) and `grpc.health.v1.Health/Check` on
 * a unix socket, on @grpc/grpc-js with the hand-written codec (no protobufjs, no generated code).
 */
import { chmod, rm, stat } from 'node:fs/promises';
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
    fn(call.request).then(
      (reply) => callback(null, reply),
      (e: unknown) => {
        const status = e instanceof RpcStatusError ? e.grpcStatus : grpc.status.INTERNAL;
        callback({ code: status, details: e instanceof Error ? e.message : String(e) }, null);
      },
    );
  };
}

/**
 * Starts the server on a unix socket: creates the parent directory (0755), removes a stale socket, binds,
 * and sets the socket's mode (0660).
 *
 * Rejects with a `MakeDirectoryError` (code `DirectoryNotCreated`) when the socket's directory cannot be
 * created, within one `mkdir` per missing level (never the endless retry of a recursive `mkdir` under `/proc`).
 */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const { socketPath, backend } = options;
  makeDirectories(dirname(socketPath));
  const existing = await stat(socketPath).catch(() => undefined);
  if (existing !== undefined) {
    if (!existing.isSocket())
      throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
    await rm(socketPath, { force: true });
  }
  const server = new grpc.Server();
  server.addService(cniBackendService, {
    AddNetwork: unary((req: AddNetworkRequest) => backend.addNetwork(req)),
    DelNetwork: unary((req: DelNetworkRequest) => backend.delNetwork(req)),
    Gc: unary(async (req: GcRequest) => {
      if (backend.gc === undefined) throw new RpcStatusError(grpc.status.UNIMPLEMENTED, 'no GC');
      return backend.gc(req);
    }),
    Status: unary(async (req: StatusRequest) => {
      if (backend.status === undefined) throw new RpcStatusError(grpc.status.UNIMPLEMENTED, 'no STATUS');
      return backend.status(req);
    }),
  });
  server.addService(healthService, {
    Check: unary(async (req: Messages['HealthCheckRequest']) => {
      if (!(HEALTH_SERVICES as readonly string[]).includes(req.service)) {
        throw new RpcStatusError(grpc.status.NOT_FOUND, `unknown service ${JSON.stringify(req.service)}`);
      }
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
