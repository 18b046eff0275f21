/**
 * The CNI specification (versions 0.3.0 to 1.1.0) in TypeScript: types, validation of what runtimes send,
 * result conversion between versions, a plugin skeleton and a plugin invoker. No runtime dependencies; cheap
 * to import, since every CNI plugin process loads it.
 *
 * @packageDocumentation
 */

export {
  type CniArgs,
  formatCniArgs,
  type ParseCniArgsOptions,
  parseCniArgs,
  WELL_KNOWN_CNI_ARGS,
} from './cni-args.js';
export {
  type CniEnv,
  identifierProblem,
  interfaceNameProblem,
  isCniCommand,
  REQUIRED_ENV,
  readCniEnv,
} from './cni-env.js';
export { CniError, type ErrorResult, isCniError, toCniError } from './cni-error.js';
export {
  type ConfListPlugin,
  type NetworkConfigList,
  type ParseConfListOptions,
  parseConfList,
} from './conflist.js';
export { type ConvertOptions, convertResult } from './convert-result.js';
export { CniErrorCode, type WellKnownCniErrorCode } from './error-codes.js';
export type { JsonObject } from './internal/fields.js';
export {
  type ExecOutcome,
  execPlugin,
  findPlugin,
  getVersionInfo,
  type InvokeRequest,
  type InvokeResult,
  invokePlugin,
} from './invoke.js';
export { type Cidr, ipFamily, isIPv4, isIPv6, parseCidr } from './ip.js';
export { type ParseResultOptions, parseResult } from './parse-result.js';
export {
  type Attachment,
  type IpamConfig,
  type ParsePluginConfigOptions,
  type PluginConfig,
  parsePluginConfig,
} from './plugin-config.js';
export { pluginMain } from './plugin-main.js';
export type {
  Dns,
  Result,
  Result040,
  Result100,
  Result110,
  ResultInterface,
  ResultIp,
  ResultIp040,
  ResultRoute,
  VersionResult,
  WireResult,
} from './result.js';
export {
  type BandwidthLimits,
  POD_ANNOTATIONS_CAPABILITY,
  type PortMapping,
  parseRuntimeConfig,
  type RuntimeConfig,
  type RuntimeDns,
} from './runtime-config.js';
export {
  type CommandContext,
  MAX_STDIN_BYTES,
  type PluginHandlers,
  type PluginIO,
  type PluginOptions,
  runPlugin,
} from './skeleton.js';
export {
  type CniCommand,
  type CniVersion,
  COMMAND_SINCE,
  commandSupported,
  compareVersions,
  isSupportedVersion,
  LATEST_VERSION,
  resultHasIpVersion,
  SUPPORTED_VERSIONS,
} from './versions.js';
