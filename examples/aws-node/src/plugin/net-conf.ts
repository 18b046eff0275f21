import { CniError, CniErrorCode, type PluginConfig } from '@vpc-cni-kit/cni-spec';
import { unixSocketPathProblem } from '../config/bind-address.js';
import { LOG_LEVEL_NAMES, type LogLevel, readLogLevel } from '../log/logger.js';

/** The `aws-cni` entry of the conflist, as the reference reads it (plus our `ipamdSocket`). */
export interface AwsCniConf {
  vethPrefix: string;
  /** Pod MTU; invalid or outside [576, 9001] falls back to 9001, as the reference's `GetPodMTU`. */
  mtu: number;
  podSGEnforcingMode: 'strict' | 'standard';
  pluginLogFile: string;
  /** `pluginLogLevel`, validated (the names the daemon accepts for `AWS_VPC_K8S_PLUGIN_LOG_LEVEL`, {@link readLogLevel}); default `debug`, the reference's. */
  pluginLogLevel: LogLevel;
  /** The daemon's gRPC socket (this project's addition, so several nodes can share one machine). */
  ipamdSocket: string;
}

/** The reference's socket path. */
export const DEFAULT_IPAMD_SOCKET = '/var/run/aws-node/ipamd.sock';

/**
 * Reads the plugin-specific keys of the configuration.
 *
 * @throws {@link CniError} code 7 for a veth prefix longer than 4 characters (the reference's message), an
 * unknown `pluginLogLevel`, or a malformed key.
 */
export function readAwsCniConf(config: PluginConfig): AwsCniConf {
  const raw = config.raw;
  const str = (key: string, fallback: string): string => {
    const v = raw[key];
    if (v === undefined || v === null || v === '') return fallback;
    if (typeof v !== 'string')
      throw new CniError(
        CniErrorCode.InvalidNetworkConfig,
        `invalid network config: ${key}: must be a string`,
      );
    return v;
  };
  const vethPrefix = str('vethPrefix', 'eni');
  if (vethPrefix.length > 4) {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      'conf.VethPrefix can be at most 4 characters long',
      vethPrefix,
    );
  }
  const mtuRaw = raw['mtu'];
  const mtuNum =
    typeof mtuRaw === 'number'
      ? mtuRaw
      : typeof mtuRaw === 'string' && /^\d+$/.test(mtuRaw)
        ? Number(mtuRaw)
        : Number.NaN;
  const mtu = Number.isInteger(mtuNum) && mtuNum >= 576 && mtuNum <= 9001 ? mtuNum : 9001;
  const mode = str('podSGEnforcingMode', 'strict');
  if (mode !== 'strict' && mode !== 'standard') {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      'invalid network config: podSGEnforcingMode: must be strict or standard',
      mode,
    );
  }
  const ipamdSocket = str('ipamdSocket', DEFAULT_IPAMD_SOCKET);
  const socketProblem = unixSocketPathProblem(ipamdSocket);
  if (socketProblem !== undefined) {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      `invalid network config: ipamdSocket: ${socketProblem}`,
      ipamdSocket,
    );
  }
  const levelName = str('pluginLogLevel', 'Debug');
  const pluginLogLevel = readLogLevel(levelName);
  if (pluginLogLevel === undefined) {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      `invalid network config: pluginLogLevel: must be one of ${LOG_LEVEL_NAMES.join(', ')}`,
      levelName,
    );
  }
  return {
    vethPrefix,
    mtu,
    podSGEnforcingMode: mode,
    pluginLogFile: str('pluginLogFile', ''),
    pluginLogLevel,
    ipamdSocket,
  };
}
