/**
 * The plugin ↔ daemon contract, wire-compatible with the reference's `rpc/rpc.proto` (package `rpc`,
 * service `CNIBackend`): same message names, field numbers and types. Field names are the proto names.
 */
import { decodeMessage, encodeMessage, type MessageSchema } from './wire.js';

/** `rpc.IPAllocationMetadata` */
export interface IPAllocationMetadata {
  IPv4Addr: string;
  IPv6Addr: string;
  DeviceNumber: number;
  RouteTableId: number;
}

/**
 * `rpc.AddNetworkRequest`. Fields numbered 1000 and up are this project's extensions: proto3 parsers skip
 * unknown fields, so the reference's daemon ignores them and the reference's plugin never sends them.
 */
export interface AddNetworkRequest {
  K8S_POD_NAME: string;
  K8S_POD_NAMESPACE: string;
  K8S_POD_INFRA_CONTAINER_ID: string;
  Netns: string;
  IfName: string;
  NetworkName: string;
  ContainerID: string;
  ClientVersion: string;
  RequiresMultiNICAttachment: boolean;
  /** Extension 1000: the plugin asks the daemon to plumb the pod network (veth, addresses, routes, rules). */
  PodPlumbing: boolean;
  /** Extension 1001: pod MTU from the plugin's conflist. */
  Mtu: number;
  /** Extension 1002: host veth prefix from the plugin's conflist. */
  VethPrefix: string;
}

/** `rpc.AddNetworkReply` (extensions from 1000, see {@link AddNetworkRequest}). */
export interface AddNetworkReply {
  Success: boolean;
  IPAllocationMetadata: IPAllocationMetadata[];
  UseExternalSNAT: boolean;
  VPCv4CIDRs: string[];
  PodVlanId: number;
  PodENIMAC: string;
  PodENISubnetGW: string;
  ParentIfIndex: number;
  VPCv6CIDRs: string[];
  NetworkPolicyMode: string;
  /** Extension 1000: the daemon plumbed the pod network. */
  PodPlumbed: boolean;
  /** Extension 1001: the host-side veth name. */
  HostVethName: string;
  /** Extension 1002: the host-side veth MAC. */
  HostVethMac: string;
  /** Extension 1003: the pod-side interface MAC. */
  PodMac: string;
  /** Extension 1004: why `Success` is false, one of {@link AddFailureCode}. */
  FailureCode: string;
  /** Extension 1005: a human-readable cause to go with `FailureCode`. */
  FailureMessage: string;
}

/** Stable causes for a failed AddNetwork (extension 1004), so the plugin never matches on message text. */
export const AddFailureCode = {
  /** The warm pool has no free address right now; the daemon is growing it. */
  PoolEmpty: 'PoolEmpty',
  /** EC2 reported the subnet out of addresses or aligned /28 blocks. */
  SubnetExhausted: 'SubnetExhausted',
  /** The instance has every ENI it may have and every address is in use. */
  EniLimitReached: 'EniLimitReached',
  /** Custom networking: the node's ENIConfig is missing or invalid, so no ENI can be created for pods. */
  EniConfigUnavailable: 'EniConfigUnavailable',
  /** The request was malformed (missing container id, interface or network name). */
  InvalidRequest: 'InvalidRequest',
  /** Setting up the pod network failed (and the allocation was rolled back). */
  PlumbingFailed: 'PlumbingFailed',
  /** The daemon is shutting down and takes no new pods. */
  ShuttingDown: 'ShuttingDown',
  /** Anything else. */
  Internal: 'Internal',
  /** Security groups for pods: the API server does not know the pod (or cannot be reached), so it is unknown whether it needs a branch ENI. */
  PodEniPodNotFound: 'PodEniPodNotFound',
  /** The pod requests a branch ENI but carries no `vpc.amazonaws.com/pod-eni` annotation yet. */
  PodEniAnnotationMissing: 'PodEniAnnotationMissing',
  /** The `vpc.amazonaws.com/pod-eni` annotation does not parse, or a field is out of shape. */
  PodEniAnnotationInvalid: 'PodEniAnnotationInvalid',
  /** The node has no trunk ENI (yet). */
  PodEniNoTrunk: 'PodEniNoTrunk',
  /** The trunk ENI is attached but no host link carries its MAC. */
  PodEniTrunkLinkNotFound: 'PodEniTrunkLinkNotFound',
  /** The trunk has no free branch (VLAN) left. */
  PodEniBranchLimitReached: 'PodEniBranchLimitReached',
  /** The instance type cannot carry a trunk ENI. */
  PodEniInstanceNotTrunkable: 'PodEniInstanceNotTrunkable',
} as const;

/** One of {@link AddFailureCode}. */
export type AddFailure = (typeof AddFailureCode)[keyof typeof AddFailureCode];

/** `rpc.DelNetworkRequest` (extensions from 1000, see {@link AddNetworkRequest}). */
export interface DelNetworkRequest {
  K8S_POD_NAME: string;
  K8S_POD_NAMESPACE: string;
  K8S_POD_INFRA_CONTAINER_ID: string;
  Reason: string;
  IfName: string;
  NetworkName: string;
  ContainerID: string;
  ClientVersion: string;
  K8S_POD_UID: string;
  /** Extension 1000: the plugin asks the daemon to tear down what it plumbed. */
  PodPlumbing: boolean;
}

/** `rpc.DelNetworkReply` */
export interface DelNetworkReply {
  Success: boolean;
  IPAllocationMetadata: IPAllocationMetadata[];
  PodVlanId: number;
  NetworkPolicyMode: string;
}

/** One attachment the runtime still uses (CNI 1.1 GC's `cni.dev/valid-attachments`). */
export interface ValidAttachment {
  ContainerID: string;
  IfName: string;
}

/** `rpc.GcRequest` (this daemon's extension of `rpc.CNIBackend`): CNI 1.1 GC. */
export interface GcRequest {
  NetworkName: string;
  ValidAttachments: ValidAttachment[];
  /** When the runtime's request reached the plugin, wall-clock ms as decimal text. */
  RequestedAtMs: string;
  ClientVersion: string;
}

/** `rpc.GcReply` */
export interface GcReply {
  /** The addresses released. */
  Released: string[];
}

/** `rpc.StatusRequest` (extension): CNI 1.1 STATUS. */
export interface StatusRequest {
  ClientVersion: string;
}

/** `rpc.StatusReply` */
export interface StatusReply {
  /** Whether an ADD can be served now. */
  Ready: boolean;
  /** Why not, for the operator. */
  Reason: string;
}

/** `grpc.health.v1.HealthCheckRequest` */
export interface HealthCheckRequest {
  service: string;
}

/** `grpc.health.v1.HealthCheckResponse.ServingStatus` values. */
export const ServingStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

/** `grpc.health.v1.HealthCheckResponse` */
export interface HealthCheckResponse {
  status: number;
}

const ipMeta: MessageSchema = {
  name: 'rpc.IPAllocationMetadata',
  fields: [
    { no: 1, name: 'IPv4Addr', kind: 'string' },
    { no: 2, name: 'IPv6Addr', kind: 'string' },
    { no: 3, name: 'DeviceNumber', kind: 'int32' },
    { no: 4, name: 'RouteTableId', kind: 'int32' },
  ],
};

/** Field tables for every message, by proto name. */
export const schemas = {
  AddNetworkRequest: {
    name: 'rpc.AddNetworkRequest',
    fields: [
      { no: 1, name: 'K8S_POD_NAME', kind: 'string' },
      { no: 2, name: 'K8S_POD_NAMESPACE', kind: 'string' },
      { no: 3, name: 'K8S_POD_INFRA_CONTAINER_ID', kind: 'string' },
      { no: 4, name: 'Netns', kind: 'string' },
      { no: 5, name: 'IfName', kind: 'string' },
      { no: 6, name: 'NetworkName', kind: 'string' },
      { no: 7, name: 'ContainerID', kind: 'string' },
      { no: 8, name: 'ClientVersion', kind: 'string' },
      { no: 9, name: 'RequiresMultiNICAttachment', kind: 'bool' },
      { no: 1000, name: 'PodPlumbing', kind: 'bool' },
      { no: 1001, name: 'Mtu', kind: 'int32' },
      { no: 1002, name: 'VethPrefix', kind: 'string' },
    ],
  },
  AddNetworkReply: {
    name: 'rpc.AddNetworkReply',
    fields: [
      { no: 1, name: 'Success', kind: 'bool' },
      { no: 2, name: 'IPAllocationMetadata', kind: { message: ipMeta }, repeated: true },
      { no: 5, name: 'UseExternalSNAT', kind: 'bool' },
      { no: 6, name: 'VPCv4CIDRs', kind: 'string', repeated: true },
      { no: 7, name: 'PodVlanId', kind: 'int32' },
      { no: 8, name: 'PodENIMAC', kind: 'string' },
      { no: 9, name: 'PodENISubnetGW', kind: 'string' },
      { no: 10, name: 'ParentIfIndex', kind: 'int32' },
      { no: 12, name: 'VPCv6CIDRs', kind: 'string', repeated: true },
      { no: 13, name: 'NetworkPolicyMode', kind: 'string' },
      { no: 1000, name: 'PodPlumbed', kind: 'bool' },
      { no: 1001, name: 'HostVethName', kind: 'string' },
      { no: 1002, name: 'HostVethMac', kind: 'string' },
      { no: 1003, name: 'PodMac', kind: 'string' },
      { no: 1004, name: 'FailureCode', kind: 'string' },
      { no: 1005, name: 'FailureMessage', kind: 'string' },
    ],
  },
  DelNetworkRequest: {
    name: 'rpc.DelNetworkRequest',
    fields: [
      { no: 1, name: 'K8S_POD_NAME', kind: 'string' },
      { no: 2, name: 'K8S_POD_NAMESPACE', kind: 'string' },
      { no: 3, name: 'K8S_POD_INFRA_CONTAINER_ID', kind: 'string' },
      { no: 5, name: 'Reason', kind: 'string' },
      { no: 6, name: 'IfName', kind: 'string' },
      { no: 7, name: 'NetworkName', kind: 'string' },
      { no: 8, name: 'ContainerID', kind: 'string' },
      { no: 9, name: 'ClientVersion', kind: 'string' },
      { no: 10, name: 'K8S_POD_UID', kind: 'string' },
      { no: 1000, name: 'PodPlumbing', kind: 'bool' },
    ],
  },
  DelNetworkReply: {
    name: 'rpc.DelNetworkReply',
    fields: [
      { no: 1, name: 'Success', kind: 'bool' },
      { no: 2, name: 'IPAllocationMetadata', kind: { message: ipMeta }, repeated: true },
      { no: 4, name: 'PodVlanId', kind: 'int32' },
      { no: 6, name: 'NetworkPolicyMode', kind: 'string' },
    ],
  },
  GcRequest: {
    name: 'rpc.GcRequest',
    fields: [
      { no: 1, name: 'NetworkName', kind: 'string' },
      {
        no: 2,
        name: 'ValidAttachments',
        kind: {
          message: {
            name: 'rpc.ValidAttachment',
            fields: [
              { no: 1, name: 'ContainerID', kind: 'string' },
              { no: 2, name: 'IfName', kind: 'string' },
            ],
          },
        },
        repeated: true,
      },
      { no: 3, name: 'RequestedAtMs', kind: 'string' },
      { no: 4, name: 'ClientVersion', kind: 'string' },
    ],
  },
  GcReply: {
    name: 'rpc.GcReply',
    fields: [{ no: 1, name: 'Released', kind: 'string', repeated: true }],
  },
  StatusRequest: {
    name: 'rpc.StatusRequest',
    fields: [{ no: 1, name: 'ClientVersion', kind: 'string' }],
  },
  StatusReply: {
    name: 'rpc.StatusReply',
    fields: [
      { no: 1, name: 'Ready', kind: 'bool' },
      { no: 2, name: 'Reason', kind: 'string' },
    ],
  },
  HealthCheckRequest: {
    name: 'grpc.health.v1.HealthCheckRequest',
    fields: [{ no: 1, name: 'service', kind: 'string' }],
  },
  HealthCheckResponse: {
    name: 'grpc.health.v1.HealthCheckResponse',
    fields: [{ no: 1, name: 'status', kind: 'enum' }],
  },
} as const satisfies Record<string, MessageSchema>;

/** The message types by schema name. */
export interface Messages {
  AddNetworkRequest: AddNetworkRequest;
  AddNetworkReply: AddNetworkReply;
  DelNetworkRequest: DelNetworkRequest;
  DelNetworkReply: DelNetworkReply;
  GcRequest: GcRequest;
  GcReply: GcReply;
  StatusRequest: StatusRequest;
  StatusReply: StatusReply;
  HealthCheckRequest: HealthCheckRequest;
  HealthCheckResponse: HealthCheckResponse;
}

/** Encodes a message by schema name. */
export function encode<K extends keyof Messages>(kind: K, value: Partial<Messages[K]>): Uint8Array {
  return encodeMessage(schemas[kind], value as Record<string, unknown>);
}

/** Decodes a message by schema name (every field present, proto3 defaults filled in). */
export function decode<K extends keyof Messages>(kind: K, bytes: Uint8Array): Messages[K] {
  return decodeMessage<Messages[K]>(schemas[kind], bytes);
}

/** Full gRPC method paths. */
export const Methods = {
  AddNetwork: '/rpc.CNIBackend/AddNetwork',
  DelNetwork: '/rpc.CNIBackend/DelNetwork',
  Gc: '/rpc.CNIBackend/Gc',
  Status: '/rpc.CNIBackend/Status',
  HealthCheck: '/grpc.health.v1.Health/Check',
} as const;
