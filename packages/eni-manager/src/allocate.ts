import { randomUUID } from 'node:crypto';
import type { AttachNetworkInterfaceCommandOutput } from '@aws-sdk/client-ec2';
import type { EniContext } from './context.js';
import { describeEni } from './describe.js';
import { type Ec2Eni, toEc2Eni } from './ec2/eni.js';
import { Ec2Fields, invalidEc2Response } from './ec2/response.js';
import { type EniManagerError, eniError, isEniManagerError } from './errors.js';
import { rollbackCreatedEni } from './free.js';
import type { NodeMetadata } from './imds/discovery.js';
import type { ImdsEni, NodeInfo } from './imds/node-info.js';
import { pollUntil } from './poll.js';
import { awsId, index } from './shapes.js';
import { discoverSubnets } from './subnets.js';
import { type EniTagOptions, eniDescriptionPrefix, newEniTags } from './tags.js';

/** What a new ENI should look like. Give exactly one of `ipv4Count` and `prefixCount` (or neither). */
export interface AllocateEniRequest {
  /** Secondary addresses to create the ENI with (the reference caps this at IPv4-per-ENI − 1). */
  readonly ipv4Count?: number;
  /** /28 prefixes to create the ENI with (prefix delegation). */
  readonly prefixCount?: number;
  /** Subnet to use (custom networking's ENIConfig subnet); default: discovery, or the primary subnet. */
  readonly subnetId?: string;
  /** Security groups; default: the primary ENI's, sorted. */
  readonly securityGroupIds?: readonly string[];
  /** Network card to attach on. Default 0. */
  readonly networkCard?: number;
}

/** A new ENI, attached, `DeleteOnTermination` set, and visible in IMDS. */
export interface AllocatedEni {
  /** `eni-…` id. */
  readonly eniId: string;
  /** Its attachment id. */
  readonly attachmentId: string;
  /** Device index it was attached at. */
  readonly deviceIndex: number;
  /** Network card it was attached on. */
  readonly networkCard: number;
  /** Subnet it was created in. */
  readonly subnetId: string;
  /** The ENI as EC2 created it. */
  readonly ec2: Ec2Eni;
  /** The ENI as IMDS shows it once visible (what routing and the datastore should use). */
  readonly imds: ImdsEni;
}

/** The node facts allocation needs (all from {@link NodeInfo}). */
export interface AllocationNode {
  /** This instance. */
  readonly instanceId: string;
  /** This node's VPC. */
  readonly vpcId: string;
  /** This node's zone (for subnet discovery). */
  readonly availabilityZone: string;
  /** The primary ENI's subnet. */
  readonly primarySubnetId: string;
  /** The primary ENI's security groups. */
  readonly securityGroupIds: readonly string[];
}

/** The {@link AllocationNode} of a node as {@link NodeMetadata.discoverNode} found it (its primary ENI's VPC, subnet and groups). */
export function allocationNodeOf(node: NodeInfo): AllocationNode {
  return {
    instanceId: node.instanceId,
    vpcId: node.primaryEni.vpcId,
    availabilityZone: node.availabilityZone,
    primarySubnetId: node.primaryEni.subnetId,
    securityGroupIds: node.primaryEni.securityGroupIds,
  };
}

/** Allocation settings fixed for the life of a node. */
export interface AllocationSettings extends EniTagOptions {
  /** The reference's `ENABLE_SUBNET_DISCOVERY` (default true). */
  readonly subnetDiscovery?: boolean;
  /** Highest device index to try (default 99, as the reference). */
  readonly maxDeviceIndex?: number;
  /** Source of `ClientToken`s for idempotent creates. Default `crypto.randomUUID`. */
  readonly newClientToken?: () => string;
}

const MOVE_ON = ['InsufficientFreeAddressesInSubnet', 'InsufficientCidrBlocks'] as const;

function checkRequest(request: AllocateEniRequest): void {
  const { ipv4Count, prefixCount } = request;
  if (ipv4Count !== undefined && prefixCount !== undefined) {
    throw eniError('InvalidInput', 'give ipv4Count or prefixCount, not both');
  }
  for (const [name, v] of [
    ['ipv4Count', ipv4Count],
    ['prefixCount', prefixCount],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 64)) {
      throw eniError('InvalidInput', `${name} must be an integer in 0..64, got ${v}`);
    }
  }
  if (request.subnetId !== undefined && awsId('subnet', request.subnetId) === undefined) {
    throw eniError('InvalidInput', `not a subnet id: ${JSON.stringify(request.subnetId)}`);
  }
  for (const sg of request.securityGroupIds ?? []) {
    if (awsId('sg', sg) === undefined)
      throw eniError('InvalidInput', `not a security group id: ${JSON.stringify(sg)}`);
  }
  const card = request.networkCard ?? 0;
  if (!Number.isInteger(card) || card < 0 || card > 31) {
    throw eniError('InvalidInput', `networkCard must be an integer in 0..31, got ${card}`);
  }
}

/**
 * Creates, attaches and readies one ENI the way the reference does (§4.5), and undoes everything on any failure:
 * `CreateNetworkInterface` (tags, groups, count; next subnet on a full one) → `DescribeInstances` (first free
 * device index on the card) → `AttachNetworkInterface` → `ModifyNetworkInterfaceAttribute`
 * (`DeleteOnTermination`) → wait until IMDS lists it with its addresses. Three mutating calls when all goes well.
 */
export async function allocateEni(
  ctx: EniContext,
  metadata: NodeMetadata,
  node: AllocationNode,
  settings: AllocationSettings,
  request: AllocateEniRequest,
): Promise<AllocatedEni> {
  checkRequest(request);
  const card = request.networkCard ?? 0;
  const created = await createInFirstSubnetWithRoom(ctx, node, settings, request);
  const progress: { attachmentId?: string } = {};
  try {
    return await attachAndReady(ctx, metadata, node, settings, request, created, card, progress);
  } catch (error) {
    try {
      await rollbackCreatedEni(ctx, created.eniId, progress.attachmentId);
    } catch (rollbackError) {
      // The ENI stays tagged with this instance id, so leaked-ENI GC deletes it later; report both failures.
      const primary = isEniManagerError(error) ? error : undefined;
      throw eniError(
        primary?.code ?? 'Ec2Unknown',
        `${String(error)}; rollback of ${created.eniId} failed too`,
        {
          ...(primary?.action === undefined ? {} : { action: primary.action }),
          cause: new AggregateError([error, rollbackError]),
        },
      );
    }
    throw error;
  }
}

async function createInFirstSubnetWithRoom(
  ctx: EniContext,
  node: AllocationNode,
  settings: AllocationSettings,
  request: AllocateEniRequest,
): Promise<Ec2Eni> {
  const subnets =
    request.subnetId !== undefined
      ? [request.subnetId]
      : (settings.subnetDiscovery ?? true)
        ? (
            await discoverSubnets(ctx.ec2, {
              vpcId: node.vpcId,
              availabilityZone: node.availabilityZone,
              primarySubnetId: node.primarySubnetId,
              ...(settings.clusterName === undefined ? {} : { clusterName: settings.clusterName }),
            })
          ).map((s) => s.subnetId)
        : [node.primarySubnetId];
  if (subnets.length === 0)
    throw eniError('NoEligibleSubnet', `no subnet in ${node.availabilityZone} may hold pod ENIs`);
  const tags = newEniTags(node.instanceId, ctx.clock.now(), settings);
  const groups = [...(request.securityGroupIds ?? node.securityGroupIds)].sort();
  let last: EniManagerError | undefined;
  for (const subnetId of subnets) {
    try {
      const out = await ctx.ec2.call('CreateNetworkInterface', {
        SubnetId: subnetId,
        Description: `${eniDescriptionPrefix}${node.instanceId}`,
        Groups: groups,
        ClientToken: (settings.newClientToken ?? randomUUID)(),
        TagSpecifications: [
          {
            ResourceType: 'network-interface',
            Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
          },
        ],
        ...(request.ipv4Count ? { SecondaryPrivateIpAddressCount: request.ipv4Count } : {}),
        ...(request.prefixCount ? { Ipv4PrefixCount: request.prefixCount } : {}),
      });
      const created = new Ec2Fields('CreateNetworkInterface').present(
        'NetworkInterface',
        out.NetworkInterface,
      );
      try {
        return toEc2Eni(created, 'CreateNetworkInterface');
      } catch (invalid) {
        // EC2 made an ENI whose description cannot be trusted: delete it when at least its id is usable (else
        // leaked-ENI GC finds it: it carries this node's tags), and report the malformed field.
        const eniId = created.NetworkInterfaceId;
        if (eniId !== undefined && awsId('eni', eniId) !== undefined) {
          await rollbackCreatedEni(ctx, eniId, undefined).catch(() => undefined);
        }
        throw invalid;
      }
    } catch (error) {
      if (!isEniManagerError(error, ...MOVE_ON)) throw error;
      last = error;
    }
  }
  throw last!;
}

async function attachAndReady(
  ctx: EniContext,
  metadata: NodeMetadata,
  node: AllocationNode,
  settings: AllocationSettings,
  request: AllocateEniRequest,
  eni: Ec2Eni,
  card: number,
  progress: { attachmentId?: string },
): Promise<AllocatedEni> {
  const free = await firstFreeDeviceIndex(ctx, node.instanceId, card, settings.maxDeviceIndex ?? 99);
  const { attachmentId, deviceIndex } = await attach(ctx, eni.eniId, node.instanceId, free, card);
  progress.attachmentId = attachmentId;
  await ctx.ec2.call('ModifyNetworkInterfaceAttribute', {
    NetworkInterfaceId: eni.eniId,
    Attachment: { AttachmentId: attachmentId, DeleteOnTermination: true },
  });
  const imds = await waitForImds(ctx, metadata, eni, request);
  return {
    eniId: eni.eniId,
    attachmentId,
    deviceIndex,
    networkCard: card,
    subnetId: eni.subnetId,
    ec2: eni,
    imds,
  };
}

/**
 * `AttachNetworkInterface` at `deviceIndex`; when it fails, the attachment EC2 shows anyway (see
 * {@link attachedToUs}). A reply whose `AttachmentId` is malformed is an `Ec2InvalidResponse`: the caller's rollback
 * then finds the attachment itself (Delete answers InUse, the ENI is described and detached).
 */
async function attach(
  ctx: EniContext,
  eniId: string,
  instanceId: string,
  deviceIndex: number,
  card: number,
): Promise<{ attachmentId: string; deviceIndex: number }> {
  let reply: AttachNetworkInterfaceCommandOutput;
  try {
    reply = await ctx.ec2.call('AttachNetworkInterface', {
      NetworkInterfaceId: eniId,
      InstanceId: instanceId,
      DeviceIndex: deviceIndex,
      NetworkCardIndex: card,
    });
  } catch (error) {
    // The reply may be lost while the attach went through (or a retry met it: InUse): adopt what EC2 has.
    const adopted = await attachedToUs(ctx, eniId, instanceId, card);
    if (adopted === undefined) throw error;
    return adopted;
  }
  const attachmentId = new Ec2Fields('AttachNetworkInterface').required(
    'AttachmentId',
    reply.AttachmentId,
    (v) => awsId('eni-attach', v),
    'an attachment id',
  );
  return { attachmentId, deviceIndex };
}

/**
 * After a failed attach: the ENI's attachment when EC2 shows it attached (or attaching) to this instance on
 * this card, or `undefined` (then the failure stands). A describe that fails leaves the failure standing too.
 */
async function attachedToUs(
  ctx: EniContext,
  eniId: string,
  instanceId: string,
  card: number,
): Promise<{ attachmentId: string; deviceIndex: number } | undefined> {
  const now = await describeEni(ctx.ec2, eniId).catch(() => undefined);
  const a = now?.attachment;
  if (a === undefined || a.instanceId !== instanceId || a.networkCardIndex !== card) return undefined;
  if (a.status !== 'attached' && a.status !== 'attaching') return undefined;
  return { attachmentId: a.attachmentId, deviceIndex: a.deviceIndex };
}

async function firstFreeDeviceIndex(
  ctx: EniContext,
  instanceId: string,
  card: number,
  max: number,
): Promise<number> {
  const out = await ctx.ec2.call('DescribeInstances', { InstanceIds: [instanceId] });
  const instance = out.Reservations?.flatMap((r) => r.Instances ?? []).find(
    (i) => i.InstanceId === instanceId,
  );
  if (instance === undefined) {
    throw invalidEc2Response('DescribeInstances', 'Reservations[].Instances[]', `no instance ${instanceId}`);
  }
  const f = new Ec2Fields('DescribeInstances', 'Reservations[].Instances[]');
  const used = new Set(
    f.list('NetworkInterfaces', instance.NetworkInterfaces, (ni, nf) => {
      const a = ni.Attachment;
      if (a === undefined) return undefined;
      const af = nf.at('Attachment');
      const onCard = af.optional('NetworkCardIndex', a.NetworkCardIndex, index, 'a network card index') ?? 0;
      return onCard === card ? af.required('DeviceIndex', a.DeviceIndex, index, 'a device index') : undefined;
    }),
  );
  for (let i = 0; i <= max; i++) if (!used.has(i)) return i;
  throw eniError('NoFreeDeviceIndex', `every device index 0..${max} on network card ${card} is taken`, {
    action: 'DescribeInstances',
  });
}

async function waitForImds(
  ctx: EniContext,
  metadata: NodeMetadata,
  eni: Ec2Eni,
  request: AllocateEniRequest,
): Promise<ImdsEni> {
  const wantPrefixes = request.prefixCount ?? 0;
  const wantAddresses = request.ipv4Count ?? 0;
  const result = await pollUntil(
    async () => {
      const seen = await metadata.readEni(eni.mac);
      const ready =
        seen !== undefined &&
        seen.eniId === eni.eniId &&
        seen.ipv4Addresses.length - 1 >= wantAddresses &&
        seen.ipv4Prefixes.length >= wantPrefixes;
      return { done: ready, value: seen };
    },
    {
      backoff: ctx.timings.imdsBackoff,
      deadlineMs: ctx.timings.imdsWaitMs,
      clock: ctx.clock,
      random: ctx.random,
    },
  );
  const seen = result.value;
  // The reference accepts a partial view once at least one secondary address (or prefix) shows.
  const partialOk =
    seen !== undefined &&
    seen.eniId === eni.eniId &&
    (wantAddresses + wantPrefixes === 0 || seen.ipv4Addresses.length > 1 || seen.ipv4Prefixes.length > 0);
  if (result.done || partialOk) return seen!;
  throw eniError(
    'EniNotVisible',
    `${eni.eniId} (${eni.mac}) not visible in IMDS after ${ctx.timings.imdsWaitMs} ms`,
    {
      action: `network/interfaces/macs/${eni.mac}/`,
    },
  );
}
