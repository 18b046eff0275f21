import { isAbsolute } from 'node:path';
import { DEFAULT_ENI_CONFIG_KEY } from '@vpc-cni-kit/eni-manager';
import type { BranchLinkKind, EnforcingMode } from '@vpc-cni-kit/sgp-branch';
import type { PoolTargets } from '@vpc-cni-kit/warm-pool';
import { LOG_LEVEL_NAMES, readLogLevel } from '../log/logger.js';
import { parseBindAddress, unixSocketPathProblem } from './bind-address.js';
import { ConfigError, EnvReader } from './env-reader.js';
import { qualifiedKeyProblem } from './kube-names.js';
import { type KubeSettings, readKubeSettings } from './kube-settings.js';

/** SNAT source-port randomisation (`AWS_VPC_K8S_CNI_RANDOMIZESNAT`). */
export type RandomizeSnat = 'prng' | 'hashrandom' | 'none';

/**
 * The daemon's whole configuration, read once from the environment at start. Variable names and defaults
 * are the reference's (AWS VPC CNI v1.23); the `AWS_NODE_*` variables are this daemon's own additions so that
 * several nodes can run on one machine.
 */
export interface AwsNodeConfig {
  // Warm pool
  warmEniTarget: number;
  warmIpTarget: number;
  minimumIpTarget: number;
  warmPrefixTarget: number;
  prefixDelegation: boolean;
  /**
   * `ENABLE_IPv6=true` with `ENABLE_IPv4=false`: IPv6 mode. Pods get /128s from one /80 prefix on the primary
   * ENI; no SNAT, no warm pool, no further ENIs (needs prefix delegation; no custom networking).
   */
  ipv6: boolean;
  ipCooldownSeconds: number;
  /** `MAX_ENI`; undefined when unset or ≤ 0 (ignored, as the reference). */
  maxEni: number | undefined;
  /**
   * `WARM_POOL_POLICY` (this daemon's own): `static` (default, the reference's targets exactly) or `adaptive`
   * (targets set from observed demand; `MINIMUM_IP_TARGET` and prefix delegation still apply).
   */
  warmPoolPolicy: 'static' | 'adaptive';
  /**
   * `AWS_NODE_ADAPTIVE_POD_WATCH` (ours; default true): with `WARM_POOL_POLICY=adaptive` and the Kubernetes API,
   * watch the pods bound to this node so the pool grows for them before their ADD (ADR 0027). False here when
   * the policy is static or there is no API server, whatever the variable says.
   */
  adaptivePodWatch: boolean;
  // Networking
  eniMtu: number;
  podMtu: number;
  vethPrefix: string;
  externalSnat: boolean;
  randomizeSnat: RandomizeSnat;
  excludeSnatCidrs: string[];
  externalServiceCidrs: string[];
  nodePortSupport: boolean;
  connmark: number;
  /**
   * `ENABLE_V4_EGRESS` (IPv6 clusters; default true): egress-cni gives pods IPv4 egress through `v4if0`,
   * SNATed to the node's IPv4 address.
   */
  enableV4Egress: boolean;
  /**
   * `ENABLE_V6_EGRESS` (IPv4 clusters; default false): egress-cni gives pods IPv6 egress through `v6if0`,
   * SNATed to the node's IPv6 address (turned off with a warning when the node has none).
   */
  enableV6Egress: boolean;
  /** `AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE`: egress-cni's log in an IPv6 cluster. */
  egressV4PluginLogFile: string;
  /** `AWS_VPC_K8S_EGRESS_V6_PLUGIN_LOG_FILE`: egress-cni's log in an IPv4 cluster. */
  egressV6PluginLogFile: string;
  // EC2 and IMDS
  ec2Endpoint: string | undefined;
  imdsEndpoint: string | undefined;
  clusterName: string;
  additionalEniTags: Record<string, string>;
  disableLeakedEniCleanup: boolean;
  manageUntaggedEni: boolean;
  subnetDiscovery: boolean;
  /** `AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG`: new ENIs follow the node's ENIConfig; the primary ENI carries no pods. */
  customNetworking: boolean;
  /** `ENI_CONFIG_ANNOTATION_DEF`: the Node annotation naming its ENIConfig. */
  eniConfigAnnotationKey: string;
  /** `ENI_CONFIG_LABEL_DEF`: the Node label naming its ENIConfig (e.g. `topology.kubernetes.io/zone`). */
  eniConfigLabelKey: string;
  disableNetworkResourceProvisioning: boolean;
  /**
   * `AWS_MANAGE_ENIS_NON_SCHEDULABLE`: always true here. The daemon does not read the node's unschedulable taint
   * and grows and shrinks the pool on every node, as the reference does with `true`; an explicit `false` is
   * refused rather than ignored.
   */
  manageEnisNonSchedulable: true;
  /**
   * `NETWORK_POLICY_ENFORCING_MODE` (`none`, `strict` or `standard`; the reference's manifest sets `standard`):
   * validated as the reference does, for the network policy agent that reads it. This daemon enforces no network
   * policy itself. `undefined` when unset.
   */
  networkPolicyEnforcingMode: 'none' | 'strict' | 'standard' | undefined;
  imdsOnlyMode: boolean;
  httpTimeoutSeconds: number;
  /** `AWS_NODE_RECONCILE_INTERVAL_SECONDS`: period of the reconcile with IMDS and EC2 (the reference: 60). */
  reconcileIntervalSeconds: number;
  /**
   * `AWS_NODE_PREFIX_FALLBACK_SECONDS` (ours): with prefix delegation, how long growth stays in /32s after EC2
   * had no free /28 before it asks for prefixes again (default 120, the subnet-full back-off).
   */
  prefixFallbackSeconds: number;
  // Endpoints and files
  socketPath: string;
  backingStorePath: string;
  introspection: { enabled: boolean; bindAddress: string };
  metrics: { enabled: boolean; bindAddress: string };
  hostCniBinPath: string;
  hostCniConfDirPath: string;
  pluginLogFile: string;
  pluginLogLevel: string;
  /** `ENABLE_BANDWIDTH_PLUGIN`: chain the bandwidth plugin in the conflist. */
  bandwidthPlugin: boolean;
  logFile: string;
  logLevel: string;
  /** `VPC_CNI_VERSION`: the version string the plugin and daemon compare. */
  version: string;
  /** The Kubernetes API and this daemon's identity in it (see kube-settings.ts). */
  kube: KubeSettings;
  /** Security groups for pods (branch ENIs on a trunk); see {@link PodEniSettings}. */
  podEni: PodEniSettings;
}

/**
 * Security groups for pods: `ENABLE_POD_ENI`, `POD_SECURITY_GROUP_ENFORCING_MODE`, `DISABLE_TCP_EARLY_DEMUX`
 * (the reference's), and `AWS_NODE_BRANCH_LINK_KIND` (this daemon's own).
 */
export interface PodEniSettings {
  /** `ENABLE_POD_ENI`: reserve the trunk's ENI slot, ask for a trunk (CNINode), plumb branch pods. */
  enabled: boolean;
  /** `POD_SECURITY_GROUP_ENFORCING_MODE` (default `strict`, as the reference). */
  mode: EnforcingMode;
  /** `DISABLE_TCP_EARLY_DEMUX`: `net.ipv4.tcp_early_demux=0` so kubelet TCP probes reach strict-mode pods. */
  disableTcpEarlyDemux: boolean;
  /**
   * `AWS_NODE_BRANCH_LINK_KIND` (ours): the link a branch rides on the trunk. `vlan` (default) is the 802.1Q
   * sub-interface EC2 needs; `macvlan` is for the virtual VPC, whose kernel has no 802.1Q (ADR 0006).
   */
  linkKind: BranchLinkKind;
}

/** Variables the reference documents that this daemon does not implement yet; setting them is an error. */
export const UNSUPPORTED_FEATURES: Readonly<Record<string, string>> = {
  ENABLE_MULTI_NIC: 'multiple network cards',
};

/**
 * Parses the environment into an {@link AwsNodeConfig}, applying the reference's validation rules and
 * rejecting any unparsable value (where the reference silently falls back to a default, this daemon fails
 * closed so a typo never goes unnoticed).
 *
 * @throws {@link ConfigError} listing every invalid variable.
 */
/** The warm-pool targets of a configuration (what the pool loop hands the policy). */
export function poolTargets(config: AwsNodeConfig): PoolTargets {
  return {
    warmEniTarget: config.warmEniTarget,
    warmIpTarget: config.warmIpTarget,
    minimumIpTarget: config.minimumIpTarget,
    warmPrefixTarget: config.warmPrefixTarget,
    prefixDelegation: config.prefixDelegation,
  };
}

export function loadConfig(env: Readonly<Record<string, string | undefined>>): AwsNodeConfig {
  const r = new EnvReader(env);

  for (const [name, feature] of Object.entries(UNSUPPORTED_FEATURES)) {
    if (r.bool(name, false)) r.problem(name, `${feature} is not supported by this daemon yet`);
  }
  // The reference's code defaults ENABLE_IPv4 to false and its manifest sets true; unset here means "the
  // other family's opposite", so either variable alone picks the mode.
  const ipv6 = r.bool('ENABLE_IPv6', false);
  const ipv4 = r.bool('ENABLE_IPv4', !ipv6);
  if (ipv4 && ipv6)
    r.problem(
      'ENABLE_IPv6',
      'IPv4 and IPv6 are both enabled; dual stack is not supported (set ENABLE_IPv4=false)',
    );
  if (!ipv4 && !ipv6) r.problem('ENABLE_IPv4', 'IPv4 and IPv6 are both disabled; enable one of them');

  const eniMtu = r.int('AWS_VPC_ENI_MTU', 9001, 576, 9001);
  const podMtu = r.int('POD_MTU', eniMtu, 576, 9001);
  const vethPrefix = r.string('AWS_VPC_K8S_CNI_VETHPREFIX', 'eni');
  if (vethPrefix.length > 4) r.problem('AWS_VPC_K8S_CNI_VETHPREFIX', 'must be at most 4 characters');
  if (['eth', 'lo', 'vlan'].includes(vethPrefix))
    r.problem('AWS_VPC_K8S_CNI_VETHPREFIX', 'must not be eth, lo or vlan');
  if (!/^[A-Za-z0-9_-]*$/.test(vethPrefix))
    r.problem('AWS_VPC_K8S_CNI_VETHPREFIX', 'must be letters, digits, - or _');

  const pluginLogFile = r.string('AWS_VPC_K8S_PLUGIN_LOG_FILE', '/var/log/aws-routed-eni/plugin.log');
  if (pluginLogFile.toLowerCase() === 'stdout') {
    r.problem('AWS_VPC_K8S_PLUGIN_LOG_FILE', 'must not be stdout (the plugin writes its result there)');
  } else if (pluginLogFile !== 'stderr' && !isAbsolute(pluginLogFile)) {
    // The plugin runs with the runtime's working directory: a relative path would land wherever that is.
    r.problem('AWS_VPC_K8S_PLUGIN_LOG_FILE', 'must be stderr or an absolute path');
  }

  const egressLogs = {
    v4: r.string('AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE', '/var/log/aws-routed-eni/egress-v4-plugin.log'),
    v6: r.string('AWS_VPC_K8S_EGRESS_V6_PLUGIN_LOG_FILE', '/var/log/aws-routed-eni/egress-v6-plugin.log'),
  };
  for (const [name, value] of [
    ['AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE', egressLogs.v4],
    ['AWS_VPC_K8S_EGRESS_V6_PLUGIN_LOG_FILE', egressLogs.v6],
  ] as const) {
    if (value.toLowerCase() === 'stdout')
      r.problem(name, 'must not be stdout (egress-cni writes its result there); use stderr or a path');
    else if (value !== 'stderr' && !isAbsolute(value)) r.problem(name, 'must be stderr or an absolute path');
  }
  const logFile = r.string('AWS_VPC_K8S_CNI_LOG_FILE', '/host/var/log/aws-routed-eni/ipamd.log');
  if (logFile !== 'stdout' && logFile !== 'stderr' && !isAbsolute(logFile))
    r.problem('AWS_VPC_K8S_CNI_LOG_FILE', 'must be stdout, stderr or an absolute path');
  const eniConfigKeys = {
    annotation: r.string('ENI_CONFIG_ANNOTATION_DEF', DEFAULT_ENI_CONFIG_KEY),
    label: r.string('ENI_CONFIG_LABEL_DEF', DEFAULT_ENI_CONFIG_KEY),
  };
  for (const [name, key, kind] of [
    ['ENI_CONFIG_ANNOTATION_DEF', eniConfigKeys.annotation, 'an annotation'],
    ['ENI_CONFIG_LABEL_DEF', eniConfigKeys.label, 'a label'],
  ] as const) {
    const problem = qualifiedKeyProblem(key);
    if (problem !== undefined) r.problem(name, `is not ${kind} key: ${problem}`);
  }
  // The reference stops growing and shrinking the pool on an unschedulable node unless this is true; this daemon
  // never reads the taint, so it behaves as true and says so rather than ignore an explicit false.
  if (!r.bool('AWS_MANAGE_ENIS_NON_SCHEDULABLE', true))
    r.problem(
      'AWS_MANAGE_ENIS_NON_SCHEDULABLE',
      "false is not supported: aws-node does not read the node's unschedulable taint and manages ENIs on every node (as true); unset it",
    );
  const networkPolicyMode = r.raw('NETWORK_POLICY_ENFORCING_MODE');
  if (networkPolicyMode !== undefined && !['none', 'strict', 'standard'].includes(networkPolicyMode))
    r.problem('NETWORK_POLICY_ENFORCING_MODE', 'must be one of none, strict, standard');
  const enableV4Egress = r.bool('ENABLE_V4_EGRESS', true);
  const enableV6Egress = r.bool('ENABLE_V6_EGRESS', false);
  if (enableV6Egress && r.bool('ENABLE_IPv6', false))
    r.problem(
      'ENABLE_V6_EGRESS',
      'is for IPv4 clusters; with ENABLE_IPv6=true pods have IPv6 already (unset it)',
    );

  const prefixDelegation = r.bool('ENABLE_PREFIX_DELEGATION', false);
  const warmIpTarget = r.int('WARM_IP_TARGET', 0, 0);
  const minimumIpTarget = r.int('MINIMUM_IP_TARGET', 0, 0);
  const warmPrefixTarget = r.int('WARM_PREFIX_TARGET', 0, 0);
  if (ipv6 && !prefixDelegation)
    r.problem(
      'ENABLE_IPv6',
      'IPv6 mode needs ENABLE_PREFIX_DELEGATION=true (pods get /128s from a /80 prefix)',
    );
  const warmPoolPolicy = r.oneOf<'static' | 'adaptive'>('WARM_POOL_POLICY', 'static', ['static', 'adaptive']);
  // The adaptive policy sets its own warm target, so prefix delegation needs no static one with it; IPv6 mode
  // has no warm pool at all (the one /80 serves every pod).
  if (
    !ipv6 &&
    prefixDelegation &&
    warmPoolPolicy === 'static' &&
    warmIpTarget === 0 &&
    minimumIpTarget === 0 &&
    warmPrefixTarget === 0
  ) {
    r.problem(
      'ENABLE_PREFIX_DELEGATION',
      'needs WARM_PREFIX_TARGET, WARM_IP_TARGET or MINIMUM_IP_TARGET above 0 (or WARM_POOL_POLICY=adaptive)',
    );
  }
  // Read before the Kubernetes settings (which come later): an explicit true needs both the adaptive policy and
  // the API, so a switch that would do nothing is named rather than ignored.
  const problemsBefore = r.problems.length;
  const podWatch = r.bool('AWS_NODE_ADAPTIVE_POD_WATCH', true);
  // Set to a valid boolean (an invalid one is its own problem already).
  const podWatchSet =
    r.raw('AWS_NODE_ADAPTIVE_POD_WATCH') !== undefined && r.problems.length === problemsBefore;
  if (podWatchSet && podWatch && warmPoolPolicy !== 'adaptive')
    r.problem('AWS_NODE_ADAPTIVE_POD_WATCH', 'is only used with WARM_POOL_POLICY=adaptive (unset it)');
  const maxEniRaw = r.int('MAX_ENI', -1, Number.MIN_SAFE_INTEGER);
  const connmark = parseMark(r, 'AWS_VPC_K8S_CNI_CONNMARK', 0x80);
  const imdsOnlyMode = r.bool('ENABLE_IMDS_ONLY_MODE', false);

  const ec2Endpoint = r.raw('AWS_EC2_ENDPOINT');
  if (ec2Endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(ec2Endpoint))
    r.problem('AWS_EC2_ENDPOINT', 'must be an http(s) URL');
  const imdsEndpoint = r.raw('AWS_EC2_METADATA_SERVICE_ENDPOINT');
  if (imdsEndpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(imdsEndpoint)) {
    r.problem('AWS_EC2_METADATA_SERVICE_ENDPOINT', 'must be an http(s) URL');
  }
  const additionalEniTags = r.stringMap('ADDITIONAL_ENI_TAGS');
  for (const key of Object.keys(additionalEniTags)) {
    // The reference drops reserved keys; they would collide with the tags it manages.
    if (key.includes('k8s.amazonaws.com')) delete additionalEniTags[key];
  }

  const config: AwsNodeConfig = {
    warmEniTarget: r.int('WARM_ENI_TARGET', 1, 0),
    warmIpTarget,
    minimumIpTarget,
    warmPrefixTarget,
    prefixDelegation,
    ipv6,
    ipCooldownSeconds: r.int('IP_COOLDOWN_PERIOD', 30, 0),
    maxEni: maxEniRaw >= 1 ? maxEniRaw : undefined,
    warmPoolPolicy,
    adaptivePodWatch: false,
    eniMtu,
    podMtu,
    vethPrefix,
    externalSnat: r.bool('AWS_VPC_K8S_CNI_EXTERNALSNAT', false),
    randomizeSnat: r.oneOf<RandomizeSnat>('AWS_VPC_K8S_CNI_RANDOMIZESNAT', 'prng', [
      'prng',
      'hashrandom',
      'none',
    ]),
    excludeSnatCidrs: r.ipv4Cidrs('AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS'),
    externalServiceCidrs: r.ipv4Cidrs('AWS_EXTERNAL_SERVICE_CIDRS'),
    nodePortSupport: r.bool('AWS_VPC_CNI_NODE_PORT_SUPPORT', true),
    connmark,
    enableV4Egress,
    enableV6Egress,
    egressV4PluginLogFile: egressLogs.v4,
    egressV6PluginLogFile: egressLogs.v6,
    ec2Endpoint,
    imdsEndpoint,
    clusterName: r.string('CLUSTER_NAME', ''),
    additionalEniTags,
    disableLeakedEniCleanup: r.bool('DISABLE_LEAKED_ENI_CLEANUP', false) || imdsOnlyMode,
    manageUntaggedEni: r.bool('MANAGE_UNTAGGED_ENI', true),
    subnetDiscovery: r.bool('ENABLE_SUBNET_DISCOVERY', true),
    customNetworking: r.bool('AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG', false),
    eniConfigAnnotationKey: eniConfigKeys.annotation,
    eniConfigLabelKey: eniConfigKeys.label,
    disableNetworkResourceProvisioning:
      r.bool('DISABLE_NETWORK_RESOURCE_PROVISIONING', false) || imdsOnlyMode,
    manageEnisNonSchedulable: true,
    networkPolicyEnforcingMode: networkPolicyMode as AwsNodeConfig['networkPolicyEnforcingMode'],
    imdsOnlyMode,
    httpTimeoutSeconds: Math.max(10, r.int('HTTP_TIMEOUT', 10, 1)),
    reconcileIntervalSeconds: r.int('AWS_NODE_RECONCILE_INTERVAL_SECONDS', 60, 1),
    prefixFallbackSeconds: r.int('AWS_NODE_PREFIX_FALLBACK_SECONDS', 120, 1),
    socketPath: r.string('AWS_NODE_IPAMD_SOCKET', '/var/run/aws-node/ipamd.sock'),
    backingStorePath: r.string('AWS_VPC_K8S_CNI_BACKING_STORE', '/var/run/aws-node/ipam.json'),
    introspection: {
      enabled: !r.bool('DISABLE_INTROSPECTION', false),
      bindAddress: r.string('INTROSPECTION_BIND_ADDRESS', '127.0.0.1:61679'),
    },
    metrics: {
      enabled: !r.bool('DISABLE_METRICS', false),
      bindAddress: r.string('AWS_NODE_METRICS_BIND_ADDRESS', ':61678'),
    },
    hostCniBinPath: r.string('HOST_CNI_BIN_PATH', '/host/opt/cni/bin'),
    hostCniConfDirPath: r.string('HOST_CNI_CONFDIR_PATH', '/host/etc/cni/net.d'),
    pluginLogFile,
    pluginLogLevel: logLevelOf(r, 'AWS_VPC_K8S_PLUGIN_LOG_LEVEL', 'Debug'),
    bandwidthPlugin: r.bool('ENABLE_BANDWIDTH_PLUGIN', false),
    logFile,
    logLevel: logLevelOf(r, 'AWS_VPC_K8S_CNI_LOGLEVEL', 'DEBUG'),
    version: r.string('VPC_CNI_VERSION', ''),
    kube: readKubeSettings(r),
    podEni: {
      enabled: r.bool('ENABLE_POD_ENI', false),
      mode: r.oneOf<EnforcingMode>('POD_SECURITY_GROUP_ENFORCING_MODE', 'strict', ['strict', 'standard']),
      disableTcpEarlyDemux: r.bool('DISABLE_TCP_EARLY_DEMUX', false),
      linkKind: r.oneOf<BranchLinkKind>('AWS_NODE_BRANCH_LINK_KIND', 'vlan', ['vlan', 'macvlan']),
    },
  };
  for (const [name, address] of [
    ['INTROSPECTION_BIND_ADDRESS', config.introspection.bindAddress],
    ['AWS_NODE_METRICS_BIND_ADDRESS', config.metrics.bindAddress],
  ] as const) {
    const parsed = parseBindAddress(address);
    if ('problem' in parsed) r.problem(name, parsed.problem);
  }
  const socketProblem = unixSocketPathProblem(config.socketPath);
  if (socketProblem !== undefined) r.problem('AWS_NODE_IPAMD_SOCKET', socketProblem);
  for (const [name, path] of [
    ['AWS_VPC_K8S_CNI_BACKING_STORE', config.backingStorePath],
    ['HOST_CNI_BIN_PATH', config.hostCniBinPath],
    ['HOST_CNI_CONFDIR_PATH', config.hostCniConfDirPath],
  ] as const) {
    if (!isAbsolute(path)) r.problem(name, 'must be an absolute path');
  }
  config.adaptivePodWatch =
    podWatch && warmPoolPolicy === 'adaptive' && !ipv6 && config.kube.apiServer !== undefined;
  if (podWatchSet && podWatch && warmPoolPolicy === 'adaptive' && ipv6)
    r.problem(
      'AWS_NODE_ADAPTIVE_POD_WATCH',
      'is not used in IPv6 mode: the /80 needs no warm pool (unset it)',
    );
  else if (podWatchSet && podWatch && warmPoolPolicy === 'adaptive' && config.kube.apiServer === undefined)
    r.problem(
      'AWS_NODE_ADAPTIVE_POD_WATCH',
      'needs the Kubernetes API to watch pods (KUBERNETES_SERVICE_HOST or CLUSTER_ENDPOINT), or set it to false',
    );
  // The reference adds a trunk ENI in IPv6 mode for security groups for pods; this daemon does not (yet).
  if (ipv6 && config.podEni.enabled)
    r.problem('ENABLE_POD_ENI', 'security groups for pods are not supported in IPv6 mode');
  if (ipv6 && config.customNetworking)
    r.problem('AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG', 'custom networking is not supported in IPv6 mode');
  if (config.customNetworking && config.kube.apiServer === undefined) {
    r.problem(
      'AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG',
      'needs the Kubernetes API to read ENIConfigs (KUBERNETES_SERVICE_HOST or CLUSTER_ENDPOINT)',
    );
  }
  if (config.podEni.enabled && config.kube.apiServer === undefined) {
    r.problem(
      'ENABLE_POD_ENI',
      "needs the Kubernetes API to read pods' vpc.amazonaws.com/pod-eni annotation (KUBERNETES_SERVICE_HOST or CLUSTER_ENDPOINT)",
    );
  }
  if (config.podEni.enabled && config.imdsOnlyMode) {
    r.problem(
      'ENABLE_POD_ENI',
      'cannot find the trunk ENI without EC2 (ENABLE_IMDS_ONLY_MODE=true makes no EC2 call): unset one of them',
    );
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** A log level name as set (the conflist carries the plugin's as written); a name no level has is a problem. */
function logLevelOf(r: EnvReader, name: string, fallback: string): string {
  const v = r.string(name, fallback);
  if (readLogLevel(v) !== undefined) return v;
  r.problem(name, `must be one of ${LOG_LEVEL_NAMES.join(', ')} (any letter case)`);
  return fallback;
}

function parseMark(r: EnvReader, name: string, fallback: number): number {
  const v = r.raw(name);
  if (v === undefined) return fallback;
  // Go's ParseInt with base 0: 0x…, 0o…/0…, 0b… or decimal.
  const n = /^0x[0-9a-f]+$/i.test(v)
    ? Number.parseInt(v.slice(2), 16)
    : /^0b[01]+$/i.test(v)
      ? Number.parseInt(v.slice(2), 2)
      : /^0o?[0-7]+$/i.test(v)
        ? Number.parseInt(v.replace(/^0o?/i, ''), 8)
        : /^\d+$/.test(v)
          ? Number(v)
          : Number.NaN;
  if (!Number.isInteger(n) || n <= 0 || n > 0xffffffff) {
    r.problem(name, 'must be a mark from 1 to 0xffffffff');
    return fallback;
  }
  return n;
}
