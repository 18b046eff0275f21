export { TokenBucket, type TokenBucketConfig } from '@vpc-cni-kit/token-bucket';
export type {
  AssignAddresses,
  Assigned,
  AssignPrefixes,
  AssignRequest,
  UnassignAddresses,
  UnassignPrefixes,
  UnassignRequest,
} from './addresses.js';
export {
  type AllocatedEni,
  type AllocateEniRequest,
  type AllocationNode,
  type AllocationSettings,
  allocationNodeOf,
} from './allocate.js';
export { type BackoffPolicy, backoffDelay, ec2RetryBackoff, imdsWaitBackoff } from './backoff.js';
export { type ClassifiableEni, type ClassifyOptions, classifyEni, type EniClass } from './classification.js';
export { type Clock, type RandomSource, systemClock } from './clock.js';
export { defaultEniTimings, type EniTimings } from './context.js';
export { ambiguousErrorCodes, type Ec2Action, type Ec2Actions, mutatingActions } from './ec2/actions.js';
export { createEc2Api, type Ec2Api, type Ec2ApiOptions, type Ec2Credentials } from './ec2/client.js';
export type { Ec2Eni, Ec2EniAttachment } from './ec2/eni.js';
export { Ec2Fields, invalidEc2Response } from './ec2/response.js';
export {
  DEFAULT_ENI_CONFIG_KEY,
  DEFAULT_ENI_CONFIG_NAME,
  ENI_CONFIG_RESOURCE,
  type EniConfigChoice,
  type EniConfigKeys,
  type EniConfigNode,
  type EniConfigParse,
  type EniConfigSpec,
  EXTERNAL_ENI_CONFIG_LABEL,
  MAX_SECURITY_GROUPS_PER_ENI,
  parseEniConfig,
  resolveEniConfigName,
} from './eni-config.js';
export {
  type EniErrorCode,
  type EniErrorCodeInfo,
  type EniErrorDetails,
  EniManagerError,
  eniError,
  errorCodeInfo,
  isEniErrorCode,
  isEniManagerError,
} from './errors.js';
export type { FreeEniOutcome } from './free.js';
export type { CallEvent, CallHooks } from './hooks.js';
export { ImdsClient, type ImdsClientOptions } from './imds/client.js';
export { createImdsNodeMetadata, type NodeMetadata } from './imds/discovery.js';
export type { ImdsEni, NodeInfo } from './imds/node-info.js';
export type { LeakGcFailure, LeakGcOptions, LeakGcReport } from './leak-gc.js';
export {
  createInstanceLimitsSource,
  type InstanceLimits,
  type InstanceLimitsSource,
  type InstanceLimitsSourceOptions,
  type MaxPodsOptions,
  maxPods,
  type NetworkCardLimit,
  publishedBranchLimit,
  publishedInstanceLimits,
} from './limits.js';
export { createEniManager, type EniManager, type EniManagerOptions } from './manager.js';
export { type ActionFamily, actionFamily, defaultRateLimits, RateLimiter } from './rate-limiter.js';
export * as shapes from './shapes.js';
export {
  type DiscoverSubnetsOptions,
  discoverSubnets,
  type RankSubnetsOptions,
  rankSubnets,
  type SubnetCandidate,
  subnetClusterTagPrefix,
  subnetExcludedForPods,
  subnetRoleTag,
} from './subnets.js';
export { type EniTagOptions, eniDescriptionPrefix, eniTagKeys, newEniTags, tagsToAdd } from './tags.js';
