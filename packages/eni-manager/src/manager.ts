import {
  type Assigned,
  type AssignRequest,
  assignIpv4,
  assignIpv6Prefixes,
  type UnassignRequest,
  unassignIpv4,
} from './addresses.js';
import {
  type AllocatedEni,
  type AllocateEniRequest,
  type AllocationNode,
  type AllocationSettings,
  allocateEni,
} from './allocate.js';
import { type Clock, type RandomSource, systemClock } from './clock.js';
import { defaultEniTimings, type EniContext, type EniTimings } from './context.js';
import { checkEniId, describeEnisByFilter, describeEnisById } from './describe.js';
import type { Ec2Api } from './ec2/client.js';
import type { Ec2Eni } from './ec2/eni.js';
import { eniError } from './errors.js';
import { type FreeEniOutcome, freeEniSteps } from './free.js';
import type { NodeMetadata } from './imds/discovery.js';
import { collectLeakedEnis, type LeakGcReport } from './leak-gc.js';

/**
 * The ENI port: everything the pool loop and reconciler ask of EC2. Implemented by {@link createEniManager};
 * every method rejects with an {@link EniManagerError}.
 */
export interface EniManager {
  /**
   * Creates, attaches and readies a new ENI; on any failure nothing is left behind. Concurrent calls are queued
   * and run one at a time (each needs its own free device index).
   */
  allocateEni(request?: AllocateEniRequest): Promise<AllocatedEni>;
  /** Detaches and deletes an ENI; an ENI that is already gone is success. Refuses the primary ENI. */
  freeEni(eniId: string): Promise<FreeEniOutcome>;
  /** One `AssignPrivateIpAddresses` call (a top-up). */
  assignIpv4(eniId: string, request: AssignRequest): Promise<Assigned>;
  /** One `UnassignPrivateIpAddresses` call. */
  unassignIpv4(eniId: string, request: UnassignRequest): Promise<void>;
  /** One `AssignIpv6Addresses` call delegating `count` /80 prefixes (IPv6 mode's one prefix per node). */
  assignIpv6Prefixes(eniId: string, count: number): Promise<string[]>;
  /** ENIs by id (missing ones left out), or every ENI attached to this instance when `eniIds` is omitted. */
  describeEnis(eniIds?: readonly string[]): Promise<Ec2Eni[]>;
  /** Adds or overwrites tags on an ENI (the reference's `TagENI`). */
  tagEni(eniId: string, tags: Readonly<Record<string, string>>): Promise<void>;
  /** Deletes leaked ENIs (ours, `available`, older than 5 minutes) in this node's VPC. */
  collectLeakedEnis(): Promise<LeakGcReport>;
}

/** Options for {@link createEniManager}. */
export interface EniManagerOptions extends AllocationSettings {
  /** The EC2 port (see {@link createEc2Api}). */
  readonly ec2: Ec2Api;
  /** The IMDS port, used to wait for new ENIs. */
  readonly metadata: NodeMetadata;
  /** This node (from {@link NodeInfo} and its primary ENI). */
  readonly node: AllocationNode;
  /** Clock for waits and leak ages. Default {@link systemClock}. */
  readonly clock?: Clock;
  /** Jitter source. Default `Math.random`. */
  readonly random?: RandomSource;
  /** Deadlines and pacing; missing fields take {@link defaultEniTimings}. */
  readonly timings?: Partial<EniTimings>;
  /** Minimum age before a leaked ENI is deleted. Default 5 minutes. */
  readonly leakMinAgeMs?: number;
}

/** An {@link EniManager} over an {@link Ec2Api} and a {@link NodeMetadata}. */
export function createEniManager(options: EniManagerOptions): EniManager {
  const ctx: EniContext = {
    ec2: options.ec2,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    timings: { ...defaultEniTimings, ...options.timings },
  };
  const { node } = options;
  // Allocations run one at a time: two at once would both pick the same free device index.
  let allocations: Promise<unknown> = Promise.resolve();
  return {
    allocateEni(request = {}) {
      const run = allocations.then(() => allocateEni(ctx, options.metadata, node, options, request));
      allocations = run.catch(() => undefined);
      return run;
    },
    async freeEni(eniId) {
      const [eni] = await describeEnisById(ctx.ec2, [checkEniId(eniId)]);
      if (eni === undefined) return 'already-gone';
      if (eni.attachment?.deviceIndex === 0 && eni.attachment.networkCardIndex === 0) {
        throw eniError('InvalidInput', `${eniId} is a primary ENI (device index 0); it is never freed`);
      }
      return freeEniSteps(ctx, eniId, eni);
    },
    assignIpv4: (eniId, request) => assignIpv4(ctx.ec2, eniId, request),
    unassignIpv4: (eniId, request) => unassignIpv4(ctx.ec2, eniId, request),
    assignIpv6Prefixes: (eniId, count) => assignIpv6Prefixes(ctx.ec2, eniId, count),
    describeEnis: (eniIds) =>
      eniIds === undefined
        ? describeEnisByFilter(ctx.ec2, [{ Name: 'attachment.instance-id', Values: [node.instanceId] }])
        : describeEnisById(ctx.ec2, eniIds),
    async tagEni(eniId, tags) {
      checkEniId(eniId);
      const entries = Object.entries(tags);
      if (entries.length === 0) return;
      await ctx.ec2.call('CreateTags', {
        Resources: [eniId],
        Tags: entries.map(([Key, Value]) => ({ Key, Value })),
      });
    },
    collectLeakedEnis: () =>
      collectLeakedEnis(ctx, {
        vpcId: node.vpcId,
        ...(options.clusterName === undefined ? {} : { clusterName: options.clusterName }),
        ...(options.leakMinAgeMs === undefined ? {} : { minAgeMs: options.leakMinAgeMs }),
      }),
  };
}
