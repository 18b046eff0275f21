import {
  type Ec2Simulator,
  type Clock as SimClock,
  startEc2Simulator,
  type Timing,
} from '@vpc-cni-kit/ec2-simulator';
import {
  allocationNodeOf,
  type CallEvent,
  createEc2Api,
  createEniManager,
  createImdsNodeMetadata,
  type Ec2Api,
  type Ec2ApiOptions,
  type EniManager,
  type EniManagerOptions,
  ImdsClient,
  type NodeInfo,
  type NodeMetadata,
} from '../../src/index.js';

export const VPC = 'vpc-0a000000000000001';
export const PRIMARY_SUBNET = 'subnet-0a000000000000001'; // 10.0.0.0/24, us-west-2a
export const FRAG_SUBNET = 'subnet-0a000000000000002'; // 10.0.1.0/26, us-west-2a, role/cni
export const TINY_SUBNET = 'subnet-0a000000000000003'; // 10.0.2.0/28, us-west-2a, role/cni
export const OTHER_AZ_SUBNET = 'subnet-0a000000000000004'; // 10.0.3.0/24, us-west-2b, role/cni
export const UNTAGGED_SUBNET = 'subnet-0a000000000000005'; // 10.0.4.0/22, us-west-2a, no role tag
export const SG = 'sg-0a000000000000001';
export const INSTANCE = 'i-0a000000000000001';
export const OTHER_INSTANCE = 'i-0a000000000000002';

export const scenario = {
  region: 'us-west-2',
  vpcs: [{ id: VPC, cidrBlocks: ['10.0.0.0/16', '10.1.0.0/16'], ipv6CidrBlock: '2001:db8:c00::/56' }],
  subnets: [
    {
      id: PRIMARY_SUBNET,
      cidrBlock: '10.0.0.0/24',
      ipv6CidrBlock: '2001:db8:c00:1::/64',
      availabilityZone: 'us-west-2a',
    },
    {
      id: FRAG_SUBNET,
      cidrBlock: '10.0.1.0/26',
      availabilityZone: 'us-west-2a',
      tags: { 'kubernetes.io/role/cni': '1' },
    },
    {
      id: TINY_SUBNET,
      cidrBlock: '10.0.2.0/28',
      availabilityZone: 'us-west-2a',
      tags: { 'kubernetes.io/role/cni': '1' },
    },
    {
      id: OTHER_AZ_SUBNET,
      cidrBlock: '10.0.3.0/24',
      availabilityZone: 'us-west-2b',
      tags: { 'kubernetes.io/role/cni': '1' },
    },
    { id: UNTAGGED_SUBNET, cidrBlock: '10.0.4.0/22', availabilityZone: 'us-west-2a' },
  ],
  securityGroups: [{ id: SG, name: 'nodes' }],
  instances: [
    {
      id: INSTANCE,
      instanceType: 'm5.large',
      subnetId: PRIMARY_SUBNET,
      securityGroupIds: [SG],
      ipv6AddressCount: 1,
    },
    { id: OTHER_INSTANCE, instanceType: 't3.small', subnetId: PRIMARY_SUBNET, securityGroupIds: [SG] },
  ],
};

const credentials = { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator' };
const generous = { capacity: 1000, refillPerSecond: 1000 };

/** Fast waits for tests: real time, small delays. */
export const fastBackoff = { baseMs: 5, maxMs: 40, factor: 2, jitter: 0.2 };

export interface World {
  readonly sim: Ec2Simulator;
  /** Every EC2/IMDS attempt the code under test made, via the hooks. */
  readonly events: CallEvent[];
  readonly ec2: Ec2Api;
  /** A second client for assertions (not hooked, not counted). */
  readonly admin: Ec2Api;
  readonly metadata: NodeMetadata;
  readonly node: NodeInfo;
  readonly manager: EniManager;
  /** EC2 attempts seen by the hooks, optionally of one action. */
  ec2Calls(action?: string): CallEvent[];
  /** ENIs in the VPC whose description starts `aws-K8S-` (what a leak would look like). */
  ourEnis(): Promise<string[]>;
  close(): Promise<void>;
}

export interface WorldOptions {
  readonly timing?: Partial<Timing>;
  readonly simRateLimits?: boolean;
  /** The simulator's clock (its token buckets and delays run on it). */
  readonly simClock?: SimClock;
  readonly ec2?: Partial<Ec2ApiOptions>;
  readonly manager?: Partial<EniManagerOptions>;
}

export function newApi(sim: Ec2Simulator, extra: Partial<Ec2ApiOptions> = {}): Ec2Api {
  return createEc2Api({
    region: sim.region,
    endpoint: sim.endpoint,
    credentials,
    backoff: fastBackoff,
    maxAttempts: 6,
    rateLimits: {
      describe: generous,
      attachDetach: generous,
      createDelete: generous,
      assignUnassign: generous,
      modify: generous,
      tags: generous,
    },
    ...extra,
  });
}

/** A fresh simulator, an m5.large node's IMDS, and an EniManager wired to both with hooks recording calls. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const sim = await startEc2Simulator({
    scenario,
    ...(options.simRateLimits === true ? {} : { rateLimits: false as const }),
    ...(options.timing === undefined ? {} : { timing: options.timing }),
    ...(options.simClock === undefined ? {} : { clock: options.simClock }),
  });
  const events: CallEvent[] = [];
  const hooks = { onCall: (e: CallEvent) => events.push(e) };
  const metadata = createImdsNodeMetadata(new ImdsClient({ endpoint: sim.imdsEndpoint(INSTANCE), hooks }));
  const ec2 = newApi(sim, { hooks, ...options.ec2 });
  const admin = newApi(sim);
  const node = await metadata.discoverNode();
  const manager = createEniManager({
    ec2,
    metadata,
    node: allocationNodeOf(node),
    clusterName: 'test-cluster',
    additionalTags: { team: 'net', 'k8s.amazonaws.com/reserved': 'dropped' },
    ...options.manager,
    timings: {
      imdsWaitMs: 3000,
      imdsBackoff: fastBackoff,
      detachWaitMs: 3000,
      detachBackoff: fastBackoff,
      ...options.manager?.timings,
    },
  });
  events.length = 0;
  return {
    sim,
    events,
    ec2,
    admin,
    metadata,
    node,
    manager,
    ec2Calls: (action) =>
      events.filter((e) => e.service === 'ec2' && (action === undefined || e.action === action)),
    async ourEnis() {
      const out = await admin.call('DescribeNetworkInterfaces', {
        Filters: [{ Name: 'vpc-id', Values: [VPC] }],
      });
      return (out.NetworkInterfaces ?? [])
        .filter((ni) => ni.Description?.startsWith('aws-K8S-'))
        .map((ni) => ni.NetworkInterfaceId!);
    },
    async close() {
      ec2.destroy();
      admin.destroy();
      await sim.close();
    },
  };
}

/** RFC 3339 text (seconds, UTC) for a time in ms, as ENI `createdAt` tags are written. */
export function rfc3339Text(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}
