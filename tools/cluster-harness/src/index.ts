/**
 * Test and demo infrastructure for aws-node (private, not published): a cluster of simulated EC2 instances on
 * the virtual VPC, aws-node and aws-vpc-cni-init run inside each, pods created through a real libcni runtime.
 *
 * @packageDocumentation
 */

export { awsNodeBinDir } from './bin-dir.js';
export { Cluster, type ClusterNode, type ClusterOptions, type ClusterPod, PodError } from './cluster.js';
export { inNetns, type Ran } from './exec.js';
export {
  awsNodeRbacManifest,
  ClusterKubeApi,
  type DaemonKubeAccess,
  KUBE_API_PORT,
  nodeName,
} from './kube-api.js';
