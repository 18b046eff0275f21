import { EC2Client } from '@aws-sdk/client-ec2';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { afterEach } from 'vitest';
import {
  type Ec2Simulator,
  type Ec2SimulatorOptions,
  type Scenario,
  startEc2Simulator,
} from '../src/index.js';

export const VPC = 'vpc-0a000000000000001';
export const SUBNET_A = 'subnet-0a000000000000001';
export const SUBNET_B = 'subnet-0b000000000000002';
export const SUBNET_SMALL = 'subnet-0c000000000000003';
export const SG_NODE = 'sg-0a000000000000001';
export const SG_POD = 'sg-0b000000000000002';
export const NODE = 'i-0a000000000000001';
export const NODE_BIG = 'i-0b000000000000002';

/** Two AZ-a subnets, one tiny /26 in AZ-a for fragmentation, two nodes. */
export const scenario: Scenario = {
  region: 'us-west-2',
  vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16', '100.64.0.0/16'], ipv6CidrBlock: '2600:1f14:abc:de00::/56' }],
  subnets: [
    {
      id: SUBNET_A,
      cidrBlock: '10.0.0.0/24',
      ipv6CidrBlock: '2600:1f14:abc:de00::/64',
      availabilityZone: 'us-west-2a',
      tags: { Name: 'primary', 'kubernetes.io/role/cni': '1' },
    },
    {
      id: SUBNET_B,
      cidrBlock: '100.64.0.0/20',
      availabilityZone: 'us-west-2a',
      tags: { 'kubernetes.io/role/cni': '1' },
    },
    { id: SUBNET_SMALL, cidrBlock: '10.0.1.0/26', availabilityZone: 'us-west-2a' },
  ],
  securityGroups: [
    { id: SG_NODE, name: 'node', description: 'nodes' },
    { id: SG_POD, name: 'pods' },
  ],
  instances: [
    {
      id: NODE,
      instanceType: 'm5.large',
      subnetId: SUBNET_A,
      securityGroupIds: [SG_NODE],
      privateIpAddress: '10.0.0.10',
    },
    { id: NODE_BIG, instanceType: 'p5.48xlarge', subnetId: SUBNET_A, securityGroupIds: [SG_NODE] },
  ],
};

/** Starts a simulator on loopback (no rate limits unless asked). */
export function start(extra: Partial<Ec2SimulatorOptions> = {}): Promise<Ec2Simulator> {
  return startEc2Simulator({ scenario, rateLimits: false, ...extra });
}

/** The real SDK client pointed at the simulator: explicit region and credentials, fast retries. */
export function client(sim: Ec2Simulator, maxAttempts = 3): EC2Client {
  return new EC2Client({
    endpoint: sim.endpoint,
    region: sim.region,
    credentials: { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator-secret' },
    retryStrategy: new ConfiguredRetryStrategy(maxAttempts, () => 1),
  });
}

/** Captures the error of a promise (fails the test if it resolves). */
export async function errorOf(
  p: Promise<unknown>,
): Promise<{ name: string; message: string; status: number | undefined; attempts: number | undefined }> {
  try {
    await p;
  } catch (e) {
    const err = e as {
      name: string;
      message: string;
      $metadata?: { httpStatusCode?: number; attempts?: number };
    };
    return {
      name: err.name,
      message: err.message,
      status: err.$metadata?.httpStatusCode,
      attempts: err.$metadata?.attempts,
    };
  }
  throw new Error('expected the call to fail');
}

/**
 * Registers an `afterEach` that closes what the returned `boot` started: a simulator and an SDK client per
 * test.
 */
export function useSimulator(): (
  extra?: Partial<Ec2SimulatorOptions>,
  maxAttempts?: number,
) => Promise<{ sim: Ec2Simulator; ec2: EC2Client }> {
  let sim: Ec2Simulator | undefined;
  let ec2: EC2Client | undefined;
  afterEach(async () => {
    ec2?.destroy();
    await sim?.close();
    sim = undefined;
    ec2 = undefined;
  });
  return async (extra = {}, maxAttempts = 3) => {
    sim = await start(extra);
    ec2 = client(sim, maxAttempts);
    return { sim, ec2 };
  };
}
