import { CniError, CniErrorCode, type IpamConfig, type PluginConfig } from '@vpc-cni-kit/cni-spec';
import { formatIp, parseIp } from '@vpc-cni-kit/ip-address';
import type { RandomizeSnat } from '@vpc-cni-kit/iptables-snat';
import { readLogLevel } from '../log/logger.js';

/** The pod-side interface of IPv4 egress (IPv6 pods reaching IPv4), the reference's name. */
export const EGRESS_V4_IFNAME = 'v4if0';
/** The pod-side interface of IPv6 egress (IPv4 pods reaching IPv6), the reference's name. */
export const EGRESS_V6_IFNAME = 'v6if0';

/** The `egress-cni` entry of the conflist, as the reference's plugin reads it, validated. */
export interface EgressConf {
  /** The network name (`name`), part of the SNAT chain's name and comment. */
  network: string;
  /** `mtu` (a decimal string) of the egress veth. */
  mtu: number;
  /** `randomizeSNAT`: `prng` (absent or empty too), `hashrandom` or `none`. */
  randomizeSnat: RandomizeSnat;
  /**
   * `nodeIP`: the SNAT source. IPv4 → IPv4 egress through `v4if0` (an IPv6 cluster); anything else → IPv6
   * egress through `v6if0` (an IPv4 cluster), which needs a global unicast IPv6 address here.
   */
  nodeIp: string | undefined;
  /** Which egress this is, from `nodeIP` as the reference decides it. */
  family: 4 | 6;
  /** The pod-side interface: `v4if0` or `v6if0`. */
  ifname: string;
  /** `ipam` (the delegated IPAM plugin, host-local in the conflist). */
  ipam: IpamConfig | undefined;
  /** `pluginLogFile` (`AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE` / `…_V6_…`). */
  pluginLogFile: string;
  /** `pluginLogLevel`. */
  pluginLogLevel: string;
}

function invalid(key: string, why: string, value?: unknown): CniError {
  return new CniError(
    CniErrorCode.InvalidNetworkConfig,
    `invalid network config: ${key}: ${why}`,
    value === undefined ? undefined : JSON.stringify(value),
  );
}

/** Whether an IPv6 address is global unicast as Go's `IsGlobalUnicast` has it (ULAs included). */
function globalUnicastV6(text: string): boolean {
  const ip = parseIp(text);
  if (ip?.family !== 6) return false;
  const top16 = Number(ip.value >> 112n);
  if (ip.value === 0n || ip.value === 1n) return false; // unspecified, loopback
  if (top16 >> 8 === 0xff) return false; // multicast
  if ((top16 & 0xffc0) === 0xfe80) return false; // link-local
  return true;
}

/** A string key of the plugin's config: `fallback` when absent, `undefined` when it is not a string. */
function stringKey(raw: Record<string, unknown>, key: string, fallback: string): string | undefined {
  const v = raw[key];
  if (v === undefined || v === null) return fallback;
  return typeof v === 'string' ? v : undefined;
}

/**
 * Whether egress is switched on (`enabled: "true"`), the one key read before anything else: with egress off
 * the plugin passes the previous result through, and the keys only egress uses (`mtu`, `randomizeSNAT`,
 * `nodeIP`, `ipam`) are not looked at, so a value nothing uses cannot fail a pod.
 *
 * @throws {@link CniError} code 7 when `enabled` is present and not a string (a JSON `true` would otherwise
 *   read as "off" without a word).
 */
export function egressEnabled(config: PluginConfig): boolean {
  const enabled = stringKey(config.raw, 'enabled', '');
  if (enabled === undefined) throw invalid('enabled', 'must be a string', config.raw.enabled);
  return enabled === 'true';
}

/**
 * Reads and validates the keys ADD and CHECK use once {@link egressEnabled} said yes. Stricter than the
 * reference where it would fail later or guess: `mtu` must be a decimal string (the reference fails the ADD
 * on `strconv.Atoi` too), `randomizeSNAT` one of the three modes, `nodeIP` an address, `ipam.type` set, and an
 * IPv6 `nodeIP` global unicast (the reference checks that only after taking an address from IPAM), and
 * `pluginLogLevel` a level the daemon accepts (aws-cni's rule; an unknown name is not read as Debug). Nothing
 * has been touched when this throws.
 *
 * @throws {@link CniError} code 7 naming the key.
 */
export function readEgressConf(config: PluginConfig): EgressConf {
  const raw = config.raw;
  const str = (key: string, fallback: string): string => {
    const v = stringKey(raw, key, fallback);
    if (v === undefined) throw invalid(key, 'must be a string', raw[key]);
    return v;
  };
  const mtuText = str('mtu', '');
  if (!/^\d{1,5}$/.test(mtuText)) throw invalid('mtu', 'must be a decimal string', mtuText);
  const mtu = Number(mtuText);
  if (mtu < 576 || mtu > 9001) throw invalid('mtu', 'must be from 576 to 9001', mtuText);
  const randomize = str('randomizeSNAT', '') || 'prng';
  if (randomize !== 'prng' && randomize !== 'hashrandom' && randomize !== 'none')
    throw invalid('randomizeSNAT', 'must be prng, hashrandom or none', randomize);
  const nodeText = str('nodeIP', '');
  const node = nodeText === '' ? undefined : parseIp(nodeText);
  if (nodeText !== '' && node === undefined) throw invalid('nodeIP', 'not an IP address', nodeText);
  const nodeIp = node === undefined ? undefined : formatIp(node);
  const family = node?.family === 4 ? 4 : 6;
  if (config.ipam === undefined) throw invalid('ipam', 'must name the IPAM plugin (host-local)');
  if (family === 6 && (nodeIp === undefined || !globalUnicastV6(nodeIp))) {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      'global unicast IPv6 not found in host primary interface which is mandatory to support IPv6 egress',
      nodeText,
    );
  }
  const levelName = str('pluginLogLevel', 'Debug');
  // aws-cni's rule (readAwsCniConf): a name the daemon would not accept is refused, never read as Debug.
  if (readLogLevel(levelName) === undefined)
    throw invalid('pluginLogLevel', 'must be one of debug, info, warn, warning, error, fatal', levelName);
  return {
    network: config.name,
    mtu,
    randomizeSnat: randomize,
    nodeIp,
    family,
    ifname: egressIfname(family),
    ipam: config.ipam,
    pluginLogFile: str('pluginLogFile', ''),
    pluginLogLevel: levelName,
  };
}

/** What DEL needs to undo an egress ADD, read by {@link readEgressTeardown}. */
export interface EgressTeardown {
  /** The network name (`name`), part of the SNAT chain's name. */
  network: string;
  /** `enabled: "true"`; anything else (a non-string too) means no ADD set anything up. */
  enabled: boolean;
  /** `ipam.type`, or `undefined` when the config names no IPAM plugin (no ADD could have allocated). */
  ipamType: string | undefined;
  /**
   * Which egress to undo: `[4]` for an IPv4 `nodeIP`, `[6]` for an IPv6 or empty one (as the reference
   * decides it), both when `nodeIP` is not an address, since the ADD's family cannot be told then.
   */
  families: ReadonlyArray<4 | 6>;
  /** `pluginLogFile` (empty when absent or not a string). */
  pluginLogFile: string;
  /** `pluginLogLevel` (`Debug` when absent or not a string). */
  pluginLogLevel: string;
}

/**
 * Reads the keys DEL needs, leniently: it never throws, because a DEL must release what it can (CNI spec)
 * and a value ADD would refuse (a bad `mtu`, `randomizeSNAT` or `nodeIP`, a hand-edited conflist) must not
 * keep a pod's IPAM allocation and SNAT chain on the node. `mtu` and `randomizeSNAT` are not read at all;
 * the reference's DEL does not use them either.
 */
export function readEgressTeardown(config: PluginConfig): EgressTeardown {
  const raw = config.raw;
  const node = parseIp(stringKey(raw, 'nodeIP', '') ?? '');
  const nodeUnreadable = stringKey(raw, 'nodeIP', '') !== '' && node === undefined;
  return {
    network: config.name,
    enabled: stringKey(raw, 'enabled', '') === 'true',
    ipamType: config.ipam?.type,
    families: nodeUnreadable ? [4, 6] : node?.family === 4 ? [4] : [6],
    pluginLogFile: stringKey(raw, 'pluginLogFile', '') ?? '',
    pluginLogLevel: stringKey(raw, 'pluginLogLevel', 'Debug') ?? 'Debug',
  };
}

/** The pod-side interface of `family`'s egress. */
export function egressIfname(family: 4 | 6): string {
  return family === 4 ? EGRESS_V4_IFNAME : EGRESS_V6_IFNAME;
}
