/**
 * One m5.large node on an in-process ec2-simulator on a manual clock: EC2 through the real AWS SDK, IMDSv2
 * over HTTP, and the eni-manager the daemon builds over them. For daemon-level tests that need real EC2
 * behaviour (lost replies, IMDS lag) without network namespaces.
 */
import { type Ec2Simulator, ManualClock, startEc2Simulator } from '@vpc-cni-kit/ec2-simulator';
import {
  allocationNodeOf,
  createEc2Api,
  createEniManager,
  createImdsNodeMetadata,
  type Ec2Api,
  type EniManager,
  ImdsClient,
  type NodeInfo,
  type NodeMetadata,
} from '@vpc-cni-kit/eni-manager';

const INSTANCE = 'i-0b000000000000001';
const SUBNET = 'subnet-0b000000000000001';
const scenario = {
  region: 'us-west-2',
  vpcs: [{ id: 'vpc-0b000000000000001', cidrBlocks: ['10.0.0.0/16'] }],
  subnets: [{ id: SUBNET, cidrBlock: '10.0.0.0/24', availabilityZone: 'us-west-2a' }],
  instances: [{ id: INSTANCE, instanceType: 'm5.large', subnetId: SUBNET }],
};
const credentials = { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator' };

/** A simulated node and the daemon's EC2/IMDS ports to it. */
export interface SimNode {
  sim: Ec2Simulator;
  clock: ManualClock;
  node: NodeInfo;
  metadata: NodeMetadata;
  eni: EniManager;
  /** A client that is not the daemon's (someone else acting on EC2, or assertions). */
  admin: Ec2Api;
  close(): Promise<void>;
}

/** Options of {@link startSimNode}. */
export interface SimNodeOptions {
  /** The node's instance type. Default `m5.large`. */
  instanceType?: string;
  /** Client-side token buckets of both EC2 clients (a test making many calls raises them). */
  rateLimits?: Parameters<typeof createEc2Api>[0]['rateLimits'];
}

/**
 * Starts the simulator and discovers the node. The daemon's EC2 client makes one attempt per call.
 */
export async function startSimNode(options: SimNodeOptions = {}): Promise<SimNode> {
  const clock = new ManualClock();
  const instances = scenario.instances.map((i) => ({
    ...i,
    instanceType: options.instanceType ?? i.instanceType,
  }));
  const sim = await startEc2Simulator({ scenario: { ...scenario, instances }, clock, rateLimits: false });
  const client = {
    region: sim.region,
    endpoint: sim.endpoint,
    credentials,
    maxAttempts: 1,
    ...(options.rateLimits !== undefined ? { rateLimits: options.rateLimits } : {}),
  };
  const ec2 = createEc2Api(client);
  const admin = createEc2Api(client);
  const metadata = createImdsNodeMetadata(new ImdsClient({ endpoint: sim.imdsEndpoint(INSTANCE) }));
  const close = async () => {
    ec2.destroy();
    admin.destroy();
    await sim.close();
  };
  try {
    const node = await metadata.discoverNode();
    const eni = createEniManager({
      ec2,
      metadata,
      node: allocationNodeOf(node),
    });
    return { sim, clock, node, metadata, eni, admin, close };
  } catch (e) {
    await close();
    throw e;
  }
}
