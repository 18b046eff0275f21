/**
 * Test and demo infrastructure for aws-node (private, not published): a cluster of simulated EC2 instances on
 * the virtual VPC, aws-node and aws-vpc-cni-init run inside each, pods created through a real libcni runtime.
 *
 * @packageDocumentation
 */

export { awsNodeBinDir } from './bin-dir.js';
export {
  type AddPodOptions,
  Cluster,
  type ClusterNetwork,
  type ClusterNode,
  type ClusterOptions,
  type ClusterPod,
  DUAL_STACK_NETWORK,
  PodError,
  type SecurityGroupRule,
} from './cluster.js';
export { type Containerd, containerdLauncher, startContainerd } from './containerd.js';
export { CN, customNetworkingEnv, customNetworkingLayout, eniConfigObject } from './custom-networking.js';
export { type ClusterDatabase, type DatabaseOptions, databaseHello, startDatabase } from './database.js';
export { inNetns, type Ran } from './exec.js';
export { buildImage, type ImageBuild, type ImageName } from './image.js';
export {
  awsNodeRbacManifest,
  ClusterKubeApi,
  CONTROLLER_SERVICE_ACCOUNT,
  type DaemonKubeAccess,
  KUBE_API_PORT,
  nodeName,
  type PodObjectOptions,
  type PodOwnerReference,
  type SecurityGroupPolicySpec,
  SGP_API,
} from './kube-api.js';
export { type NodeLauncher, processLauncher } from './launcher.js';
export {
  HARNESS_CLUSTER_NAME,
  ResourceController,
  type ResourceControllerOptions,
  resourceControllerBin,
} from './resource-controller.js';
export { SGP, SMALL_TRUNK_TYPE, sgpLayout, sgpPolicies } from './sgp-layout.js';
