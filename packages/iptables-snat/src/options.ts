import { invalidOption } from './errors.js';
import {
  formatCidr,
  normalizeIpv4Cidr,
  parseIpv4,
  validateInterfaceName,
  validateMark,
  validateVethPrefix,
} from './validate.js';

/**
 * SNAT port randomisation, as `AWS_VPC_K8S_CNI_RANDOMIZESNAT`: `prng` → `--random-fully` (falls back to
 * `--random` when the iptables in use lacks it), `hashrandom` → `--random`, `none` → neither.
 */
export type RandomizeSnat = 'prng' | 'hashrandom' | 'none';

/**
 * Where the SNAT connmark lives: `iptables` → chain `AWS-CONNMARK-CHAIN-0` in the `nat` table; `nftables` →
 * table `ip aws-cni`. The reference picks `iptables` when `iptables --version` mentions `legacy`, else
 * `nftables` (see {@link detectBackend}).
 */
export type ConnmarkBackend = 'iptables' | 'nftables';

/**
 * What the node's SNAT and connmark rules should be. The daemon maps the reference's environment variables
 * onto these fields; this package never reads the environment.
 */
export interface SnatOptions {
  /** The node's primary IPv4 address: the SNAT source. */
  nodeIp: string;
  /** The primary ENI's interface name (e.g. `eth0`), for the node-port CONNMARK rule. */
  primaryInterface: string;
  /** The VPC's IPv4 CIDRs: traffic to them keeps the pod address. */
  vpcCidrs: readonly string[];
  /** `AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS`: more IPv4 CIDRs excluded from SNAT. @defaultValue `[]` */
  excludeSnatCidrs?: readonly string[] | undefined;
  /** `AWS_VPC_K8S_CNI_EXTERNALSNAT`: no SNAT or connmark rules at all. @defaultValue `false` */
  externalSnat?: boolean | undefined;
  /** `AWS_VPC_K8S_CNI_RANDOMIZESNAT`. @defaultValue `'prng'` */
  randomizeSnat?: RandomizeSnat | undefined;
  /** Whether the iptables in use supports `--random-fully` (see {@link detectBackend}). @defaultValue `true` */
  randomFullySupported?: boolean | undefined;
  /** `AWS_VPC_CNI_NODE_PORT_SUPPORT`: the mangle CONNMARK rules. @defaultValue `true` */
  nodePortSupport?: boolean | undefined;
  /** `AWS_VPC_K8S_CNI_VETHPREFIX` (≤ 4 characters, not eth/vlan/lo). @defaultValue `'eni'` */
  vethPrefix?: string | undefined;
  /** `AWS_VPC_K8S_CNI_CONNMARK`: the mark bit (0 < m ≤ 2^32−1). @defaultValue `0x80` */
  connmark?: number | undefined;
  /** Where the connmark rules live. @defaultValue `'nftables'` */
  connmarkBackend?: ConnmarkBackend | undefined;
}

/** {@link SnatOptions} after validation: every field present, CIDRs in network form and deduplicated. */
export interface ResolvedSnatOptions {
  /** See {@link SnatOptions.nodeIp}. */
  readonly nodeIp: string;
  /** See {@link SnatOptions.primaryInterface}. */
  readonly primaryInterface: string;
  /** Normalised `a.b.c.d/n` strings. */
  readonly vpcCidrs: readonly string[];
  /** Normalised `a.b.c.d/n` strings (entries already in {@link vpcCidrs} are kept; the reference keeps both). */
  readonly excludeSnatCidrs: readonly string[];
  /** See {@link SnatOptions.externalSnat}. */
  readonly externalSnat: boolean;
  /** See {@link SnatOptions.randomizeSnat}. */
  readonly randomizeSnat: RandomizeSnat;
  /** See {@link SnatOptions.randomFullySupported}. */
  readonly randomFullySupported: boolean;
  /** See {@link SnatOptions.nodePortSupport}. */
  readonly nodePortSupport: boolean;
  /** See {@link SnatOptions.vethPrefix}. */
  readonly vethPrefix: string;
  /** See {@link SnatOptions.connmark}. */
  readonly connmark: number;
  /** See {@link SnatOptions.connmarkBackend}. */
  readonly connmarkBackend: ConnmarkBackend;
}

function bool(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalidOption(name, 'must be a boolean');
  return value;
}

function cidrList(values: unknown, name: string): string[] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw invalidOption(name, 'must be an array of IPv4 CIDR strings');
  const out: string[] = [];
  values.forEach((value, i) => {
    if (typeof value !== 'string') throw invalidOption(`${name}[${i}]`, 'must be a string');
    const cidr = formatCidr(normalizeIpv4Cidr(value, `${name}[${i}]`));
    if (!out.includes(cidr)) out.push(cidr);
  });
  return out;
}

/**
 * Validates {@link SnatOptions} and fills defaults. Throws a {@link SnatError} with code `INVALID_OPTION`
 * naming the first bad field; values that reach rule text have all been checked here.
 */
export function resolveSnatOptions(options: SnatOptions): ResolvedSnatOptions {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object');
  if (typeof options.nodeIp !== 'string' || parseIpv4(options.nodeIp) === undefined) {
    throw invalidOption('nodeIp', `not an IPv4 address: ${JSON.stringify(options.nodeIp)}`);
  }
  if (!Array.isArray(options.vpcCidrs))
    throw invalidOption('vpcCidrs', 'must be an array of IPv4 CIDR strings');
  if (typeof options.primaryInterface !== 'string')
    throw invalidOption('primaryInterface', 'must be a string');
  const randomizeSnat = options.randomizeSnat ?? 'prng';
  if (randomizeSnat !== 'prng' && randomizeSnat !== 'hashrandom' && randomizeSnat !== 'none') {
    throw invalidOption(
      'randomizeSnat',
      `must be prng, hashrandom or none: ${JSON.stringify(randomizeSnat)}`,
    );
  }
  const connmarkBackend = options.connmarkBackend ?? 'nftables';
  if (connmarkBackend !== 'iptables' && connmarkBackend !== 'nftables') {
    throw invalidOption(
      'connmarkBackend',
      `must be iptables or nftables: ${JSON.stringify(connmarkBackend)}`,
    );
  }
  const vethPrefix = options.vethPrefix ?? 'eni';
  if (typeof vethPrefix !== 'string') throw invalidOption('vethPrefix', 'must be a string');
  const connmark = options.connmark ?? 0x80;
  if (typeof connmark !== 'number') throw invalidOption('connmark', 'must be a number');
  return {
    nodeIp: options.nodeIp,
    primaryInterface: validateInterfaceName(options.primaryInterface, 'primaryInterface'),
    vpcCidrs: cidrList(options.vpcCidrs, 'vpcCidrs'),
    excludeSnatCidrs: cidrList(options.excludeSnatCidrs, 'excludeSnatCidrs'),
    externalSnat: bool(options.externalSnat, 'externalSnat', false),
    randomizeSnat,
    randomFullySupported: bool(options.randomFullySupported, 'randomFullySupported', true),
    nodePortSupport: bool(options.nodePortSupport, 'nodePortSupport', true),
    vethPrefix: validateVethPrefix(vethPrefix),
    connmark: validateMark(connmark),
    connmarkBackend,
  };
}
