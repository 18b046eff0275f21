/**
 * The VPC resource controller's branch side (security groups for pods), assembled from vpc-cni-kit packages: the
 * production adapters of `@vpc-cni-kit/sgp-branch`'s `BranchControllerPort` (EC2 through eni-manager's client of
 * `@aws-sdk/client-ec2`, Kubernetes through `@kubernetes/client-node`), trunk ENIs, Lease leader election and
 * the controller that runs them. The `vpc-resource-controller` program is what most users want. No type of
`@kubernetes/client-node` appears in this entry point's declarations: the Kubernetes client is the program's own.
 *
 * @packageDocumentation
 */

export { type ProgramIo, runProgram } from './cli/main.js';
export {
  type CommandLine,
  DEFAULT_METRICS_PORT,
  DEFAULT_WEBHOOK_CERT_DIR,
  parseDuration,
  readCommandLine,
  type Settings,
  USAGE,
} from './cli/options.js';
export { connectionDrops } from './connection-drops.js';
export {
  CONTROLLER_RATE_LIMITS,
  type ControllerOptions,
  type RunningController,
  startController,
} from './controller/controller.js';
export { jsonLogger, LOG_LEVELS, type Logger, type LogLevel } from './controller/logger.js';
export {
  BRANCH_OPERATIONS,
  ControllerMetrics,
  EC2_ACTION_METRICS,
  type HttpEndpointName,
  type TrunkOperation,
} from './controller/metrics.js';
export { SGP_FEATURE } from './controller/view.js';
export { type Ec2BranchPort, type Ec2BranchPortOptions, ec2BranchPort } from './ec2/branch-port.js';
export {
  describeInstance,
  type EnsureTrunkOptions,
  ensureTrunk,
  type InstanceFacts,
  instanceIdFromProviderId,
  trunkMismatch,
  withEniConfig,
} from './ec2/instances.js';
export {
  BRANCH_DESCRIPTION,
  clusterTagKey,
  INSTANCE_TAG,
  NODE_NAME_TAG,
  OWNER_TAG,
  OWNER_VALUE,
  ownedTags,
  POD_TAG,
  POD_UID_TAG,
  type TagList,
  TRUNK_DESCRIPTION,
  tagValue,
} from './ec2/tags.js';
export { type DropObserver, type HttpLimits, PROBE_HTTP_LIMITS, WEBHOOK_HTTP_LIMITS } from './http-limits.js';
export {
  type InClusterSource,
  KubeConfigError,
  type KubeConfigErrorCode,
  SERVICE_ACCOUNT_DIR,
} from './kube/apis.js';
export { createKubeBranchPort, type KubeBranchPort } from './kube/branch-port.js';
export { VPC_RESOURCES_GROUP } from './kube/caches.js';
export { CUSTOM_NETWORKING_FEATURE, ENI_CONFIG_NODE_LABEL } from './kube/eni-config.js';
export { EVENT_COMPONENT, EVENT_REASONS } from './kube/events.js';
export { kubeconfigList } from './kube/kubeconfig.js';
export { LEADER_ELECTION_ID, type LeaderElectionOptions, microTime } from './kube/leader.js';
export {
  BRANCH_ENI_COOLDOWN_KEY,
  type BranchEniCooldownSetting,
  MAX_BRANCH_ENI_COOLDOWN_MS,
  MIN_BRANCH_ENI_COOLDOWN_MS,
  readBranchEniCooldown,
  VPC_CNI_CONFIG_NAME,
  VPC_CNI_CONFIG_NAMESPACE,
} from './kube/vpc-cni-config.js';
export { VERSION } from './version.js';
export {
  ANNOTATION_VALIDATION_PATH,
  ANNOTATION_VALIDATION_WEBHOOK_NAME,
  DEFAULT_ANNOTATION_WRITERS,
  reviewPodAnnotation,
} from './webhook/annotation-validation.js';
export {
  type CertificatePair,
  CertificateReloader,
  type CertificateReloaderOptions,
} from './webhook/cert-reloader.js';
export {
  POD_ENI_QUANTITY,
  POD_MUTATION_PATH,
  POD_MUTATION_WEBHOOK_NAME,
  type PodToAdmit,
  type PolicyLookup,
  podEniPatch,
  type ReviewAnswer,
  reviewPod,
} from './webhook/pod-mutation.js';
export { serveWebhook, type WebhookServerOptions, WebhookStartError } from './webhook/server.js';
