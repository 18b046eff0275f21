import type { CniVersion } from './versions.js';

/** An interface in a result. `sandbox` is the `CNI_NETNS` path for container-side interfaces, absent on host ones. */
export interface ResultInterface {
  name: string;
  mac?: string;
  /** 1.1.0 and later. */
  mtu?: number;
  sandbox?: string;
  /** 1.1.0 and later. */
  socketPath?: string;
  /** 1.1.0 and later. */
  pciID?: string;
}

/** An address in a result: `address` is CIDR notation; `interface` indexes `interfaces`. */
export interface ResultIp {
  address: string;
  gateway?: string;
  interface?: number;
}

/** A route in a result. The numeric fields other than none are 1.1.0 additions. */
export interface ResultRoute {
  dst: string;
  gw?: string;
  /** 1.1.0 and later. */
  mtu?: number;
  /** 1.1.0 and later. */
  advmss?: number;
  /** 1.1.0 and later. */
  priority?: number;
  /** 1.1.0 and later. */
  table?: number;
  /** 1.1.0 and later: 0 global, 253 link, 254 host. */
  scope?: number;
}

/** DNS settings in a result or a network configuration. */
export interface Dns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

/**
 * A success result in the version-independent form this package works with: the 1.1.0 shape, with the
 * version it was read in or is to be written in. Use {@link convertResult} to produce the wire form of any
 * supported version and {@link parseResult} to read one.
 */
export interface Result {
  cniVersion: CniVersion;
  interfaces?: ResultInterface[];
  ips?: ResultIp[];
  routes?: ResultRoute[];
  dns?: Dns;
}

/** `ips[]` entry of a 0.3.x/0.4.0 result, which also names the address family. */
export interface ResultIp040 extends ResultIp {
  version: '4' | '6';
}

/** The wire form of a 0.3.0, 0.3.1 or 0.4.0 result. */
export interface Result040 {
  cniVersion: '0.3.0' | '0.3.1' | '0.4.0';
  interfaces?: Array<Pick<ResultInterface, 'name' | 'mac' | 'sandbox'>>;
  ips?: ResultIp040[];
  routes?: Array<Pick<ResultRoute, 'dst' | 'gw'>>;
  dns?: Dns;
}

/** The wire form of a 1.0.0 result (no `ips[].version`, no 1.1.0 fields). */
export interface Result100 {
  cniVersion: '1.0.0';
  interfaces?: Array<Pick<ResultInterface, 'name' | 'mac' | 'sandbox'>>;
  ips?: ResultIp[];
  routes?: Array<Pick<ResultRoute, 'dst' | 'gw'>>;
  dns?: Dns;
}

/** The wire form of a 1.1.0 result. */
export interface Result110 extends Omit<Result, 'cniVersion'> {
  cniVersion: '1.1.0';
}

/** A result as printed on stdout, in any supported version. */
export type WireResult = Result040 | Result100 | Result110;

/** The answer to VERSION. */
export interface VersionResult {
  cniVersion: string;
  supportedVersions: string[];
}
