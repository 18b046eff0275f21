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

/** `rpc.AddNetworkRequest` */
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
}

/** `rpc.AddNetworkReply` */
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
}

/** `rpc.DelNetworkRequest` */
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
}

/** `rpc.DelNetworkReply` */
export interface DelNetworkReply {
  Success: boolean;
  IPAllocationMetadata: IPAllocationMetadata[];
  PodVlanId: number;
  NetworkPolicyMode: string;
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
  HealthCheck: '/grpc.health.v1.Health/Check',
} as const;
