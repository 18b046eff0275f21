import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { replaceFileSync } from '@vpc-cni-kit/regular-file';
import type { AwsNodeConfig } from '../config/config.js';
import { isMakeDirectoryError, makeDirectories } from '../fs/make-directories.js';
import { StartError } from './start-error.js';

/** The reference's conflist file name. */
export const CONFLIST_NAME = '10-aws.conflist';
const DEFAULT_SOCKET = '/var/run/aws-node/ipamd.sock';

/** The egress IPAM range, default route and host-local state directory of each egress, as the reference's. */
export const EGRESS_IPAM = {
  /** IPv4 egress of an IPv6 cluster. */
  v4: { subnet: '169.254.172.0/22', dst: '0.0.0.0/0', dataDir: '/run/cni/v6pd/egress-v4-ipam' },
  /** IPv6 egress of an IPv4 cluster. */
  v6: { subnet: 'fd00::ac:00/118', dst: '::/0', dataDir: '/run/cni/v4pd/egress-v6-ipam' },
} as const;

/** What the egress-cni entry depends on beyond the environment: the cluster's family and the node's addresses. */
export interface EgressInputs {
  /** An IPv6 cluster (`ENABLE_IPv6=true`): IPv4 egress; else IPv6 egress. */
  ipv6Cluster: boolean;
  /** IMDS `local-ipv4`: the SNAT source of IPv4 egress. */
  nodeIpv4: string;
  /** IMDS `ipv6` (the primary ENI's first IPv6 address), if the node has one: the SNAT source of IPv6 egress. */
  nodeIpv6: string | undefined;
}

/** The egress-cni entry, and a warning for the operator when `ENABLE_V6_EGRESS` had to be turned off. */
export interface EgressEntry {
  /** The conflist entry, with the reference's fields in the reference's order. */
  entry: Record<string, unknown>;
  /** Set when IPv6 egress was asked for but the node has no IPv6 address (the reference warns and goes on). */
  warning?: string;
}

/**
 * The `egress-cni` entry exactly as the reference renders it (it is always in the list; `enabled` says whether
 * it acts): in an IPv6 cluster IPv4 egress (`ENABLE_V4_EGRESS`, `169.254.172.0/22`, nodeIP = the node's
 * IPv4); in an IPv4 cluster IPv6 egress (`ENABLE_V6_EGRESS`, `fd00::ac:00/118`, nodeIP = the node's IPv6,
 * empty unless enabled; enabled but no IPv6 on the node → turned off with a warning).
 */
export function egressConflistEntry(config: AwsNodeConfig, inputs: EgressInputs): EgressEntry {
  const v4 = inputs.ipv6Cluster;
  const ipam = v4 ? EGRESS_IPAM.v4 : EGRESS_IPAM.v6;
  let enabled = v4 ? config.enableV4Egress : config.enableV6Egress;
  let nodeIp = v4 ? inputs.nodeIpv4 : '';
  let warning: string | undefined;
  if (!v4 && enabled) {
    if (inputs.nodeIpv6 === undefined) {
      enabled = false;
      warning =
        'ENABLE_V6_EGRESS=true but the primary ENI has no IPv6 address: IPv6 egress is off (assign one to the ENI)';
    } else nodeIp = inputs.nodeIpv6;
  }
  const entry = {
    name: 'egress-cni',
    type: 'egress-cni',
    mtu: String(config.podMtu),
    enabled: String(enabled),
    randomizeSNAT: config.randomizeSnat,
    nodeIP: nodeIp,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: ipam.subnet }]],
      routes: [{ dst: ipam.dst }],
      dataDir: ipam.dataDir,
    },
    pluginLogFile: v4 ? config.egressV4PluginLogFile : config.egressV6PluginLogFile,
    pluginLogLevel: config.pluginLogLevel,
  };
  return warning === undefined ? { entry } : { entry, warning };
}

/**
 * Renders `10-aws.conflist` as the reference does, except that CHECK is enabled (the reference sets
 * `disableCheck`: its plugins have no CHECK; ours verify the pod and host plumbing): `cniVersion 0.4.0`,
 * `aws-cni` (with its pod-annotations capability), `egress-cni` (see {@link egressConflistEntry}), then
 * `portmap`, plus `bandwidth` when enabled. `ipamdSocket` is added only when the daemon listens somewhere other
 * than the reference's path.
 */
export function renderConflist(
  config: AwsNodeConfig,
  options: { bandwidth?: boolean; egress: EgressEntry['entry'] },
): string {
  const awsCni: Record<string, unknown> = {
    name: 'aws-cni',
    type: 'aws-cni',
    vethPrefix: config.vethPrefix,
    mtu: String(config.podMtu),
    podSGEnforcingMode: config.podEni.mode,
    pluginLogFile: config.pluginLogFile,
    pluginLogLevel: config.pluginLogLevel,
    capabilities: { 'io.kubernetes.cri.pod-annotations': true },
  };
  if (config.socketPath !== DEFAULT_SOCKET) awsCni['ipamdSocket'] = config.socketPath;
  const plugins: unknown[] = [
    awsCni,
    options.egress,
    { type: 'portmap', capabilities: { portMappings: true }, snat: true },
  ];
  if (options.bandwidth) plugins.push({ type: 'bandwidth', capabilities: { bandwidth: true } });
  return `${JSON.stringify({ cniVersion: '0.4.0', name: 'aws-cni', disableCheck: false, plugins }, null, 2)}\n`;
}

/**
 * Writes the conflist atomically into `dir` ({@link replaceFileSync}: an exclusive temp file of this process,
 * flushed, renamed over the conflist), so kubelet never reads half of one; returns its path.
 *
 * @throws RegularFileError `WriteFailed` naming the conflist
 */
export async function writeConflist(dir: string, content: string): Promise<string> {
  makeDirectories(dir);
  const path = join(dir, CONFLIST_NAME);
  replaceFileSync(path, content, { mode: 0o644 });
  return path;
}

/**
 * Creates the directory the conflist goes to and checks that it can be written, before the daemon changes the
 * node (ADR 0035); the conflist itself is written last, once the daemon serves (its presence tells kubelet the
 * node's network is ready).
 *
 * @param dir - `HOST_CNI_CONFDIR_PATH`
 * @throws StartError `CniConfDirUnusable` naming the directory, why, and the setting
 */
export function checkConflistDir(dir: string): void {
  try {
    makeDirectories(dir);
    accessSync(dir, constants.W_OK);
  } catch (e) {
    const why = isMakeDirectoryError(e)
      ? e.message
      : `${dir} cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    throw new StartError(
      'CniConfDirUnusable',
      `the CNI configuration directory cannot take the conflist: ${why}; nothing on the node was changed; set HOST_CNI_CONFDIR_PATH to a writable directory`,
      { cause: e },
    );
  }
}
