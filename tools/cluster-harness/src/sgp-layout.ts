/**
 * The security-groups-for-pods layout the end-to-end test, `npm run demo -- --sgp` and the benchmarks share:
 * VPC 10.0.0.0/16 with one /20; the nodes' group (the VPC's `default`); the pods' group `db-client`, which admits
 * itself and the nodes; a group `isolated` that admits nothing; and a database whose group admits TCP 5432 from
 * `db-client` only. Two SecurityGroupPolicies in `default` give pods labelled `app=db-client` and `app=isolated`
 * those groups.
 */
import type { InstanceTypeSpec } from '@vpc-cni-kit/ec2-simulator';
import type { ClusterNetwork } from './cluster.js';
import type { SecurityGroupPolicySpec } from './kube-api.js';

/** Subnet and group ids of the layout. */
export const SGP = {
  subnet: 'subnet-0c000000000000001',
  nodesGroup: 'sg-0c000000000000001',
  dbClientGroup: 'sg-0c0000000000000a1',
  isolatedGroup: 'sg-0c0000000000000a2',
  databaseGroup: 'sg-0c0000000000000db',
  databasePort: 5432,
} as const;

/** The VPC layout. */
export const sgpLayout: ClusterNetwork = {
  vpcCidrs: ['10.0.0.0/16'],
  subnets: [{ id: SGP.subnet, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-west-2a' }],
  nodeSubnets: [SGP.subnet],
  securityGroups: [
    // The nodes' group: admits its own members (nodes, ordinary pods, trunks).
    { id: SGP.nodesGroup, name: 'default' },
    {
      id: SGP.dbClientGroup,
      name: 'db-client',
      ingress: [
        { ipProtocol: '-1', referencedGroupId: SGP.dbClientGroup },
        { ipProtocol: '-1', referencedGroupId: SGP.nodesGroup },
      ],
    },
    { id: SGP.isolatedGroup, name: 'isolated' },
    {
      id: SGP.databaseGroup,
      name: 'database',
      ingress: [
        {
          ipProtocol: 'tcp',
          fromPort: SGP.databasePort,
          toPort: SGP.databasePort,
          referencedGroupId: SGP.dbClientGroup,
        },
      ],
    },
  ],
};

/** The policies: `app=db-client` → `db-client`, `app=isolated` → `isolated` (namespace `default`). */
export const sgpPolicies: readonly SecurityGroupPolicySpec[] = [
  { name: 'db-client', podLabels: { app: 'db-client' }, groupIds: [SGP.dbClientGroup] },
  { name: 'isolated', podLabels: { app: 'isolated' }, groupIds: [SGP.isolatedGroup] },
];

/**
 * A small trunking-compatible type whose branch limit a test reaches with three pods: c7i-flex.large (3 ENIs ×
 * 10 IPv4, 3 branches), as the VPC resource controller's published table and aws-node's limits table list it.
 */
export const SMALL_TRUNK_TYPE: InstanceTypeSpec = {
  name: 'c7i-flex.large',
  maximumNetworkInterfaces: 3,
  ipv4AddressesPerInterface: 10,
  branchInterfaces: 3,
  hypervisor: 'nitro',
};
