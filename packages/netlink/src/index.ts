/**
 * @vpc-cni-kit/netlink: rtnetlink (links, addresses, routes, rules, neighbours) in TypeScript over koffi,
 * with handles bound to network namespaces. Importing never loads native code; the first socket does.
 * @packageDocumentation
 */

export type { Address } from './codec/addr.js';
export { decodeRtnetlink, type RtnlHeader, type RtnlMessage } from './codec/decode.js';
export type { Link, OperState } from './codec/link.js';
export type { Neighbour } from './codec/neigh.js';
export type { Route } from './codec/route.js';
export type { Rule } from './codec/rule.js';
export {
  ERRNO_CODES,
  type ErrnoCode,
  errnoCode,
  isNetlinkError,
  NetlinkError,
  type NetlinkErrorCode,
  type NetlinkErrorInit,
} from './errors.js';
export {
  type HandleBase,
  type Mode,
  type NetlinkHandle,
  type NetlinkHandleSync,
  type NetlinkOps,
  type OpenOptions,
  open,
  openSync,
  type Result,
} from './handle.js';
export {
  formatIp,
  formatMac,
  type IpFamily,
  ipFamily,
  type ParsedPrefix,
  parseIp,
  parseMac,
  parsePrefix,
} from './ip.js';
export { NETNS_RUN_DIR, type NetnsDirOptions, netnsAdd, netnsDel, netnsList, netnsPath } from './netns.js';
export { THREAD_NETNS, withNetnsSync } from './netns-switch.js';
export type { AddrListOptions, AddrOptions } from './ops/addr.js';
export type { LinkRef, NetnsTarget, Scope, TableRef } from './ops/common.js';
export type { DumpList } from './ops/driver.js';
export type {
  BridgeAddOptions,
  LinkAddOptions,
  LinkCommonOptions,
  LinkListOptions,
  LinkSetOptions,
  MacvlanAddOptions,
  VethAddOptions,
  VethPeerOptions,
  VlanAddOptions,
  VxlanAddOptions,
} from './ops/link.js';
export type { NeighListOptions, NeighOptions, NeighState } from './ops/neigh.js';
export type { RouteListOptions, RouteOptions, RouteType } from './ops/route.js';
export type { RuleAction, RuleListOptions, RuleOptions } from './ops/rule.js';
export { type SysctlOptions, sysctlRead, sysctlWrite } from './sysctl.js';
