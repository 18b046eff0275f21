/**
 * The custom-networking layout the end-to-end test and `npm run demo -- --custom-networking` share: VPC
 * 10.20.0.0/16 + 100.64.0.0/16, nodes in 10.20.x of two zones, a pod subnet per zone in 100.64.0.0/16 (plus a
 * second one in us-west-2a to move a node to), every group admitting the whole VPC.
 */
import type { ClusterNetwork } from './cluster.js';

/** Subnet and group ids of the layout. */
export const CN = {
  nodeSubnetA: 'subnet-0a200000000000001',
  nodeSubnetB: 'subnet-0b200000000000001',
  podSubnetA: 'subnet-0a640000000000001',
  podSubnetB: 'subnet-0b640000000000001',
  podSubnetA2: 'subnet-0c640000000000001',
  nodesGroup: 'sg-0a200000000000001',
  podsGroup: 'sg-0a640000000000001',
  altGroup: 'sg-0b640000000000001',
} as const;

const FROM_VPC = [
  { ipProtocol: '-1', cidrIpv4: '10.20.0.0/16' },
  { ipProtocol: '-1', cidrIpv4: '100.64.0.0/16' },
];

/** The VPC layout. */
export const customNetworkingLayout: ClusterNetwork = {
  vpcCidrs: ['10.20.0.0/16', '100.64.0.0/16'],
  subnets: [
    { id: CN.nodeSubnetA, cidrBlock: '10.20.0.0/20', availabilityZone: 'us-west-2a' },
    { id: CN.nodeSubnetB, cidrBlock: '10.20.16.0/20', availabilityZone: 'us-west-2b' },
    { id: CN.podSubnetA, cidrBlock: '100.64.0.0/19', availabilityZone: 'us-west-2a' },
    { id: CN.podSubnetB, cidrBlock: '100.64.32.0/19', availabilityZone: 'us-west-2b' },
    { id: CN.podSubnetA2, cidrBlock: '100.64.64.0/19', availabilityZone: 'us-west-2a' },
  ],
  nodeSubnets: [CN.nodeSubnetA, CN.nodeSubnetB],
  securityGroups: [
    { id: CN.nodesGroup, name: 'default', ingress: FROM_VPC },
    { id: CN.podsGroup, name: 'pods', ingress: FROM_VPC },
    { id: CN.altGroup, name: 'pods-alt', ingress: FROM_VPC },
  ],
};

/** aws-node's environment for it: custom networking, ENIConfig chosen by the zone label. */
export const customNetworkingEnv: Record<string, string> = {
  AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: 'true',
  ENI_CONFIG_LABEL_DEF: 'topology.kubernetes.io/zone',
};

/** An ENIConfig object. */
export function eniConfigObject(name: string, subnet: string, securityGroups: readonly string[]) {
  return {
    apiVersion: 'crd.k8s.amazonaws.com/v1alpha1',
    kind: 'ENIConfig',
    metadata: { name },
    spec: { subnet, securityGroups: [...securityGroups] },
  };
}
