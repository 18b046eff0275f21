import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AwsNodeConfig } from '../config/config.js';

/** The reference's conflist file name. */
export const CONFLIST_NAME = '10-aws.conflist';
const DEFAULT_SOCKET = '/var/run/aws-node/ipamd.sock';

/**
 * Renders `10-aws.conflist` as the reference does, except that CHECK is enabled (the reference sets
 * `disableCheck`: its plugin has no CHECK; ours verifies the pod and host plumbing): `cniVersion 0.4.0`, `aws-cni` (with its
 * pod-annotations capability) then `portmap`, plus `bandwidth` when enabled. `egress-cni` is not shipped by
 * this project (IPv6 egress is off by default in the reference too). `ipamdSocket` is added only when the
 * daemon listens somewhere other than the reference's path.
 */
export function renderConflist(config: AwsNodeConfig, options: { bandwidth?: boolean } = {}): string {
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
  const plugins: unknown[] = [awsCni, { type: 'portmap', capabilities: { portMappings: true }, snat: true }];
  if (options.bandwidth) plugins.push({ type: 'bandwidth', capabilities: { bandwidth: true } });
  return `${JSON.stringify({ cniVersion: '0.4.0', name: 'aws-cni', disableCheck: false, plugins }, null, 2)}\n`;
}

/** Writes the conflist atomically (temp file, rename) into `dir`; returns its path. */
export async function writeConflist(dir: string, content: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, CONFLIST_NAME);
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, content, { mode: 0o644 });
  await rename(tmp, path);
  return path;
}
