/**
 * The aws-node daemon and aws-cni plugin, assembled from vpc-cni-kit packages. The library surface is the
 * plugin ↔ daemon contract (wire-compatible with the reference's `rpc.proto`) for tools that talk to either.
 *
 * @packageDocumentation
 */

export { formatTable } from './cli/table.js';
export { type DaemonClient, daemonClient } from './plugin/daemon-client.js';
export {
  frame,
  GrpcCallError,
  GrpcStatus,
  isGrpcCallError,
  type UnaryCall,
  type UnixTransport,
  unaryCall,
  unframe,
} from './rpc/grpc-client.js';
export {
  type CniBackend,
  type EarlyRpcServer,
  HEALTH_SERVICES,
  type ListenRpcOptions,
  listenRpc,
  type RpcServer,
  type RpcServerOptions,
  RpcStatusError,
  startRpcServer,
} from './rpc/grpc-server.js';
export {
  type AddFailure,
  AddFailureCode,
  type AddNetworkReply,
  type AddNetworkRequest,
  type DelNetworkReply,
  type DelNetworkRequest,
  decode,
  encode,
  type GcReply,
  type GcRequest,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type IPAllocationMetadata,
  type Messages,
  Methods,
  ServingStatus,
  type StatusReply,
  type StatusRequest,
  schemas,
  type ValidAttachment,
} from './rpc/messages.js';
export {
  decodeMessage,
  encodeMessage,
  type FieldKind,
  type FieldSpec,
  type MessageSchema,
  WireError,
} from './rpc/wire.js';
