import { randomUUID } from 'node:crypto';
import {
  ambiguousErrorCodes,
  type Ec2Api,
  Ec2Fields,
  eniError,
  type InstanceLimitsSource,
  invalidEc2Response,
  isEniManagerError,
  publishedBranchLimit,
  shapes,
} from '@vpc-cni-kit/eni-manager';
import { clusterTagKey, INSTANCE_TAG, ownedTags, TRUNK_DESCRIPTION } from './tags.js';

/** What the controller needs to know about a node's EC2 instance. */
export interface InstanceFacts {
  /** `i-…`. */
  readonly instanceId: string;
  /** Instance type. */
  readonly instanceType: string;
  /** Where its trunk and branch ENIs go: the subnet of its primary ENI, or its ENIConfig's. */
  readonly subnetId: string;
  /** The trunk's security groups: its primary ENI's, or its ENIConfig's (as in the reference). */
  readonly groupIds: readonly string[];
  /** Its attached trunk ENI, if any. */
  readonly trunkEniId?: string | undefined;
  /** The subnet of that trunk. */
  readonly trunkSubnetId?: string | undefined;
  /** The security groups of that trunk. */
  readonly trunkGroupIds?: readonly string[] | undefined;
  /**
   * The ENIConfig whose subnet and groups replaced the instance's in `subnetId` and `groupIds` (custom
   * networking), if any.
   */
  readonly eniConfig?: string | undefined;
  /** Device indexes in use on network card 0. */
  readonly usedDeviceIndexes: readonly number[];
  /** Branches one trunk of this type carries (the published table; 0 = cannot trunk or unlisted). */
  readonly branchLimit: number;
}

/**
 * The instance id in a node's `spec.providerID` (`aws:///<az>/i-…`), or `undefined` when it is not an EC2
 * provider id.
 */
export function instanceIdFromProviderId(providerId: string | undefined): string | undefined {
  const m = /^aws:\/\/\/[^/]*\/(i-[0-9a-f]{8,17})$/.exec(providerId ?? '');
  return m?.[1];
}

/**
 * Describes one instance: type, subnet, groups, trunk, device indexes in use. Every field read passes
 * eni-manager's shape checks (`Ec2Fields`): a missing or malformed one is an `Ec2InvalidResponse` naming it.
 */
export async function describeInstance(ec2: Ec2Api, instanceId: string): Promise<InstanceFacts> {
  const out = await ec2.call('DescribeInstances', { InstanceIds: [instanceId] });
  const inst = out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId);
  const path = 'Reservations[].Instances[]';
  if (inst === undefined) throw invalidEc2Response('DescribeInstances', path, `no instance ${instanceId}`);
  const f = new Ec2Fields('DescribeInstances', path);
  const instanceType = f.required('InstanceType', inst.InstanceType, shapes.instanceType, 'an instance type');
  const instanceSubnetId = f.required('SubnetId', inst.SubnetId, subnetIdOf, 'a subnet id');
  const enis = f.list('NetworkInterfaces', inst.NetworkInterfaces, (e, ef) => {
    const att = e.Attachment;
    const af = ef.at('Attachment');
    return {
      eniId: ef.required(
        'NetworkInterfaceId',
        e.NetworkInterfaceId,
        (v) => shapes.awsId('eni', v),
        'an ENI id',
      ),
      subnetId: ef.required('SubnetId', e.SubnetId, subnetIdOf, 'a subnet id'),
      groupIds: ef.list('Groups', e.Groups, (g, gf) =>
        gf.required('GroupId', g.GroupId, groupIdOf, 'a group id'),
      ),
      interfaceType: e.InterfaceType,
      attachment:
        att === undefined
          ? undefined
          : {
              status: att.Status,
              deviceIndex: af.required('DeviceIndex', att.DeviceIndex, shapes.index, 'a device index'),
              networkCardIndex:
                af.optional('NetworkCardIndex', att.NetworkCardIndex, shapes.index, 'a network card index') ??
                0,
            },
    };
  });
  const primary = enis.find((e) => e.attachment?.deviceIndex === 0 && e.attachment.networkCardIndex === 0);
  // Attaching counts: a second trunk would be refused, and left behind.
  const trunk = enis.find(
    (e) =>
      e.interfaceType === 'trunk' &&
      (e.attachment?.status === 'attached' || e.attachment?.status === 'attaching'),
  );
  return {
    instanceId,
    instanceType,
    subnetId: primary?.subnetId ?? instanceSubnetId,
    groupIds:
      primary?.groupIds ??
      f.list('SecurityGroups', inst.SecurityGroups, (g, gf) =>
        gf.required('GroupId', g.GroupId, groupIdOf, 'a group id'),
      ),
    trunkEniId: trunk?.eniId,
    trunkSubnetId: trunk?.subnetId,
    trunkGroupIds: trunk?.groupIds,
    usedDeviceIndexes: enis.flatMap((e) =>
      e.attachment?.networkCardIndex === 0 ? [e.attachment.deviceIndex] : [],
    ),
    branchLimit: publishedBranchLimit(instanceType) ?? 0,
  };
}

function subnetIdOf(value: string): string | undefined {
  return shapes.awsId('subnet', value);
}

function groupIdOf(value: string): string | undefined {
  return shapes.awsId('sg', value);
}

/**
 * The facts of a node using custom networking, as the reference controller applies its ENIConfig: with a subnet,
 * the trunk and branches go into it and the trunk gets the ENIConfig's groups (the primary ENI's when it names
 * none); an ENIConfig without a subnet changes nothing.
 */
export function withEniConfig(
  facts: InstanceFacts,
  eniConfig: string,
  spec: { readonly subnet: string; readonly securityGroups: readonly string[] },
): InstanceFacts {
  if (spec.subnet === '') return { ...facts, eniConfig };
  return {
    ...facts,
    eniConfig,
    subnetId: spec.subnet,
    groupIds: spec.securityGroups.length > 0 ? [...spec.securityGroups] : facts.groupIds,
  };
}

/**
 * How a node's attached trunk differs from what its facts ask for (custom networking chosen after the trunk was
 * made): the reference reports these and leaves the trunk as it is, since replacing it would cut every branch.
 */
export function trunkMismatch(facts: InstanceFacts): ('subnet' | 'security_groups')[] {
  if (facts.trunkEniId === undefined) return [];
  const out: ('subnet' | 'security_groups')[] = [];
  if (facts.trunkSubnetId !== undefined && facts.trunkSubnetId !== facts.subnetId) out.push('subnet');
  const have = [...(facts.trunkGroupIds ?? [])].sort().join(',');
  const want = [...facts.groupIds].sort().join(',');
  if (facts.trunkGroupIds !== undefined && have !== want) out.push('security_groups');
  return out;
}

/** Options of {@link ensureTrunk}. */
export interface EnsureTrunkOptions {
  /** Cluster name (tag). */
  readonly clusterName: string;
  /** The node's name (tag). */
  readonly nodeName: string;
  /** ENI limits per instance type (for the highest device index). */
  readonly limits: InstanceLimitsSource;
}

/**
 * Gives the instance a trunk ENI as the reference does: `InterfaceType` `trunk`, description `aws-k8s-trunk-eni`,
 * the instance's subnet and security groups, attached at the highest free device index of network card 0 (the
 * daemon takes indexes from the bottom) and deleted with the instance. A trunk this controller created for the
 * instance earlier but did not get to attach (a crash, a failed attach) is found by its tags and attached
 * instead of creating another, so none leaks. Returns the trunk's ENI id.
 */
export async function ensureTrunk(
  ec2: Ec2Api,
  facts: InstanceFacts,
  options: EnsureTrunkOptions,
): Promise<string> {
  if (facts.trunkEniId !== undefined) return facts.trunkEniId;
  const { maxEnis } = await options.limits.limits(facts.instanceType);
  const used = new Set(facts.usedDeviceIndexes);
  let deviceIndex: number | undefined;
  for (let i = maxEnis - 1; i > 0; i--)
    if (!used.has(i)) {
      deviceIndex = i;
      break;
    }
  if (deviceIndex === undefined)
    throw eniError(
      'NoFreeDeviceIndex',
      `${facts.instanceId}: every device index is in use; no room for a trunk`,
    );

  const leftover = await ec2.call('DescribeNetworkInterfaces', {
    Filters: [
      { Name: 'interface-type', Values: ['trunk'] },
      { Name: `tag:${INSTANCE_TAG}`, Values: [facts.instanceId] },
      { Name: `tag:${clusterTagKey(options.clusterName)}`, Values: ['owned'] },
      { Name: 'status', Values: ['available'] },
    ],
  });
  const eniIdOf = (v: string) => shapes.awsId('eni', v);
  const first = leftover.NetworkInterfaces?.[0];
  let trunkEniId =
    first === undefined
      ? undefined
      : new Ec2Fields('DescribeNetworkInterfaces', 'NetworkInterfaces[0]').required(
          'NetworkInterfaceId',
          first.NetworkInterfaceId,
          eniIdOf,
          'an ENI id',
        );
  if (trunkEniId === undefined) {
    const out = await ec2.call('CreateNetworkInterface', {
      SubnetId: facts.subnetId,
      Groups: [...facts.groupIds],
      InterfaceType: 'trunk',
      Description: TRUNK_DESCRIPTION,
      TagSpecifications: [
        {
          ResourceType: 'network-interface',
          Tags: ownedTags(options.clusterName, facts.instanceId, options.nodeName),
        },
      ],
      ClientToken: randomUUID(),
    });
    // Only the id is read: when it is malformed there is nothing to delete the trunk by; it carries this
    // instance's tags and is found as a leftover (and attached) on the next try.
    trunkEniId = new Ec2Fields('CreateNetworkInterface')
      .at('NetworkInterface')
      .required('NetworkInterfaceId', out.NetworkInterface?.NetworkInterfaceId, eniIdOf, 'an ENI id');
  }
  let attached: Awaited<ReturnType<typeof ec2.call<'AttachNetworkInterface'>>>;
  try {
    attached = await ec2.call('AttachNetworkInterface', {
      NetworkInterfaceId: trunkEniId,
      InstanceId: facts.instanceId,
      DeviceIndex: deviceIndex,
      NetworkCardIndex: 0,
    });
  } catch (e) {
    // Refused for sure: delete the trunk (best effort; found and attached next time otherwise). An answer that
    // may have been lost leaves it: the next try reads the instance and sees it attached.
    if (isEniManagerError(e) && !ambiguousErrorCodes.has(e.code))
      await ec2.call('DeleteNetworkInterface', { NetworkInterfaceId: trunkEniId }).catch(() => undefined);
    throw e;
  }
  const attachmentId = new Ec2Fields('AttachNetworkInterface').required(
    'AttachmentId',
    attached.AttachmentId,
    (v) => shapes.awsId('eni-attach', v),
    'an attachment id',
  );
  await ec2.call('ModifyNetworkInterfaceAttribute', {
    NetworkInterfaceId: trunkEniId,
    Attachment: { AttachmentId: attachmentId, DeleteOnTermination: true },
  });
  return trunkEniId;
}
