import { Ec2SimError } from '../errors.js';
import type { InstanceTypeInfo } from '../instance-types.js';
import type { Eni, Instance } from '../model.js';
import { createNetworkInterface } from './enis.js';
import type { StateStore } from './store.js';
import { checkTrunkAttach } from './trunks.js';

/** Launches an instance with its primary ENI (device 0 on the default card). */
export function addInstance(
  store: StateStore,
  spec: {
    id?: string | undefined;
    type: InstanceTypeInfo;
    subnetId: string;
    securityGroupIds: readonly string[];
    privateIpAddress?: string | undefined;
    /** IPv6 addresses on the primary interface (from the subnet's IPv6 CIDR). */
    ipv6AddressCount?: number | undefined;
    tags?: Map<string, string> | undefined;
  },
): Instance {
  const subnet = store.requireSubnet(spec.subnetId);
  const id = spec.id ?? store.ids.id('i');
  store.ids.reserve(id);
  const eni = createNetworkInterface(
    store,
    {
      subnetId: spec.subnetId,
      description: 'Primary network interface',
      groups: spec.securityGroupIds.length > 0 ? spec.securityGroupIds : undefined,
      primaryAddress: spec.privateIpAddress,
      ...(spec.ipv6AddressCount ? { ipv6Count: spec.ipv6AddressCount } : {}),
    },
    { primary: true },
  );
  const now = store.now();
  const instance: Instance = {
    id,
    type: spec.type,
    subnetId: subnet.id,
    vpcId: subnet.vpcId,
    availabilityZone: subnet.availabilityZone,
    launchTime: now,
    primaryEniId: eni.id,
    tags: spec.tags ?? new Map(),
  };
  store.instances.set(id, instance);
  eni.attachment = {
    id: store.ids.id('eni-attach'),
    instanceId: id,
    deviceIndex: 0,
    networkCardIndex: spec.type.defaultNetworkCardIndex,
    attachTime: now,
    attachedAt: now,
    imdsVisibleAt: now,
    detachingUntil: undefined,
    deleteOnTermination: true,
  };
  store.emit({
    type: 'eni-attached',
    eniId: eni.id,
    instanceId: id,
    attachmentId: eni.attachment.id,
    deviceIndex: 0,
    networkCardIndex: eni.attachment.networkCardIndex,
    mac: eni.mac,
  });
  return instance;
}

/** ENIs attached to an instance (attaching, attached or detaching), by card then device index. */
export function attachedEnis(store: StateStore, instanceId: string): Eni[] {
  store.settle();
  return [...store.enis.values()]
    .filter((e) => e.attachment?.instanceId === instanceId)
    .sort(
      (a, b) =>
        a.attachment!.networkCardIndex - b.attachment!.networkCardIndex ||
        a.attachment!.deviceIndex - b.attachment!.deviceIndex,
    );
}

/** AttachNetworkInterface: returns the attachment id. */
export function attach(
  store: StateStore,
  eniId: string,
  instanceId: string,
  deviceIndex: number,
  networkCardIndex: number | undefined,
): string {
  const eni = store.requireEni(eniId);
  const instance = store.requireInstance(instanceId);
  const card = networkCardIndex ?? instance.type.defaultNetworkCardIndex;
  const cardInfo = instance.type.networkCards.find((c) => c.index === card);
  if (!cardInfo) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Network card index ${card} is not valid for instance type ${instance.type.name}.`,
    );
  }
  if (eni.attachment) {
    throw new Ec2SimError('InvalidNetworkInterface.InUse', `Interface: [${eni.id}] in use.`);
  }
  checkTrunkAttach(store, eni, instance);
  if (eni.vpcId !== instance.vpcId) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `The network interface ${eni.id} and instance ${instance.id} are in different VPCs.`,
    );
  }
  if (eni.availabilityZone !== instance.availabilityZone) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `The network interface ${eni.id} and instance ${instance.id} are in different availability zones.`,
    );
  }
  const onInstance = attachedEnis(store, instance.id);
  const onCard = onInstance.filter((e) => e.attachment!.networkCardIndex === card);
  if (onCard.some((e) => e.attachment!.deviceIndex === deviceIndex)) {
    throw new Ec2SimError(
      'InvalidParameterValue',
      `Instance '${instance.id}' already has an interface attached at device index '${deviceIndex}'.`,
    );
  }
  if (
    onCard.length >= cardInfo.maximumNetworkInterfaces ||
    onInstance.length >= instance.type.maximumNetworkInterfaces
  ) {
    throw new Ec2SimError(
      'AttachmentLimitExceeded',
      `Interface count ${onInstance.length + 1} exceeds the limit for ${instance.type.name}`,
    );
  }
  const ipv4Slots = eni.privateIps.length + eni.ipv4Prefixes.length;
  if (ipv4Slots > instance.type.ipv4AddressesPerInterface) {
    throw new Ec2SimError(
      'PrivateIpAddressLimitExceeded',
      `Number of private addresses ${ipv4Slots} exceeds limit of ${instance.type.ipv4AddressesPerInterface} for ${instance.type.name}.`,
    );
  }
  const now = store.now();
  const attachment = {
    id: store.ids.id('eni-attach'),
    instanceId: instance.id,
    deviceIndex,
    networkCardIndex: card,
    attachTime: now,
    attachedAt: now + store.timing.attachDelayMs,
    imdsVisibleAt: now + store.timing.attachDelayMs + store.timing.imdsDelayMs,
    detachingUntil: undefined,
    deleteOnTermination: false,
  };
  eni.attachment = attachment;
  store.emit({
    type: 'eni-attached',
    eniId: eni.id,
    instanceId: instance.id,
    attachmentId: attachment.id,
    deviceIndex,
    networkCardIndex: card,
    mac: eni.mac,
  });
  return attachment.id;
}

/** DetachNetworkInterface. The primary interface (device 0) cannot be detached. */
export function detach(store: StateStore, attachmentId: string): void {
  store.settle();
  const eni = [...store.enis.values()].find((e) => e.attachment?.id === attachmentId);
  if (!eni?.attachment) {
    throw new Ec2SimError(
      'InvalidAttachmentID.NotFound',
      `The attachment ID '${attachmentId}' does not exist`,
    );
  }
  if (eni.primary) {
    throw new Ec2SimError(
      'OperationNotPermitted',
      'The network interface at device index 0 cannot be detached.',
    );
  }
  if (eni.attachment.detachingUntil !== undefined) return;
  eni.attachment.detachingUntil = store.now() + store.timing.detachDelayMs;
  store.settle();
  // Complete a slow detach on time even if nobody calls in between, so subscribers see `eni-detached`.
  if (store.timing.detachDelayMs > 0)
    void store.clock.sleep(store.timing.detachDelayMs).then(() => store.settle());
}
