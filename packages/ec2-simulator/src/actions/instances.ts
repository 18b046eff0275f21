import { Ec2SimError } from '../errors.js';
import type { InstanceTypeInfo } from '../instance-types.js';
import type { Instance } from '../model.js';
import {
  type ActionHandler,
  applyFilters,
  dryRun,
  dryRunSucceeded,
  isoTime,
  paginate,
  rejectIdsWithMaxResults,
  selectByKey,
  tagSet,
} from './common.js';
import { renderEni } from './render.js';

const INSTANCE_FILTERS = [
  'instance-id',
  'instance-type',
  'vpc-id',
  'subnet-id',
  'availability-zone',
  'instance-state-name',
  'private-ip-address',
  'network-interface.network-interface-id',
];

/** DescribeInstances: ids, filters, MaxResults 5–1000; one reservation per instance. */
export const describeInstances: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('InstanceId');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'InstanceIds');
  const instances = selectByKey(
    state.instances(),
    ids,
    (i) => i.id,
    (missing) =>
      new Ec2SimError('InvalidInstanceID.NotFound', `The instance ID '${missing[0]}' does not exist`),
  );
  const fields = (i: Instance, name: string): string[] => {
    switch (name) {
      case 'instance-id':
        return [i.id];
      case 'instance-type':
        return [i.type.name];
      case 'vpc-id':
        return [i.vpcId];
      case 'subnet-id':
        return [i.subnetId];
      case 'availability-zone':
        return [i.availabilityZone];
      case 'instance-state-name':
        return ['running'];
      case 'private-ip-address':
        return [state.eni(i.primaryEniId)!.privateIps[0]!.value];
      case 'network-interface.network-interface-id':
        return state.attachedEnis(i.id).map((e) => e.id);
      default:
        return [];
    }
  };
  const matched = applyFilters(instances, filters, INSTANCE_FILTERS, fields, (i) => i.tags);
  const { page, nextToken } = paginate(matched, params, { min: 5, max: 1000, action: 'DescribeInstances' });
  params.finish();
  if (dry) dryRunSucceeded();
  return {
    reservationSet: page.map((i) => {
      const primary = state.eni(i.primaryEniId)!;
      const enis = state.attachedEnis(i.id).filter((e) => state.isVisible(e));
      const sgs = primary.groups.map((g) => ({ groupId: g, groupName: state.securityGroup(g)?.name ?? g }));
      return {
        reservationId: `r-${i.id.slice(2)}`,
        ownerId: state.accountId,
        groupSet: [],
        instancesSet: [
          {
            instanceId: i.id,
            imageId: 'ami-00000000000000000',
            instanceState: { code: 16, name: 'running' },
            privateDnsName: `ip-${primary.privateIps[0]!.value.replaceAll('.', '-')}.ec2.internal`,
            instanceType: i.type.name,
            launchTime: isoTime(i.launchTime),
            placement: { availabilityZone: i.availabilityZone, tenancy: 'default' },
            subnetId: i.subnetId,
            vpcId: i.vpcId,
            privateIpAddress: primary.privateIps[0]!.value,
            sourceDestCheck: primary.sourceDestCheck,
            groupSet: sgs,
            architecture: 'x86_64',
            hypervisor: i.type.hypervisor,
            virtualizationType: 'hvm',
            tagSet: tagSet(i.tags),
            networkInterfaceSet: enis.map((e) => {
              const r = renderEni(state, e);
              return {
                attachment: r['attachment'],
                description: r['description'],
                groupSet: r['groupSet'],
                ipv6AddressesSet: r['ipv6AddressesSet'],
                macAddress: r['macAddress'],
                networkInterfaceId: r['networkInterfaceId'],
                ownerId: r['ownerId'],
                privateDnsName: r['privateDnsName'],
                privateIpAddress: r['privateIpAddress'],
                privateIpAddressesSet: r['privateIpAddressesSet'],
                sourceDestCheck: r['sourceDestCheck'],
                status: r['status'],
                subnetId: r['subnetId'],
                vpcId: r['vpcId'],
                interfaceType: r['interfaceType'],
                ipv4PrefixSet: r['ipv4PrefixSet'],
                ipv6PrefixSet: r['ipv6PrefixSet'],
              };
            }),
          },
        ],
      };
    }),
    nextToken,
  };
};

const TYPE_FILTERS = [
  'instance-type',
  'hypervisor',
  'bare-metal',
  'network-info.maximum-network-interfaces',
  'network-info.ipv4-addresses-per-interface',
  'network-info.maximum-network-cards',
];

/** Renders an instance type's network facts as EC2's `InstanceTypeInfo`. */
function renderType(t: InstanceTypeInfo) {
  return {
    instanceType: t.name,
    currentGeneration: true,
    bareMetal: t.bareMetal,
    hypervisor: t.hypervisor,
    networkInfo: {
      networkPerformance: t.networkPerformance,
      maximumNetworkInterfaces: t.maximumNetworkInterfaces,
      maximumNetworkCards: t.networkCards.length,
      defaultNetworkCardIndex: t.defaultNetworkCardIndex,
      networkCards: t.networkCards.map((c) => ({
        networkCardIndex: c.index,
        networkPerformance: t.networkPerformance,
        maximumNetworkInterfaces: c.maximumNetworkInterfaces,
      })),
      ipv4AddressesPerInterface: t.ipv4AddressesPerInterface,
      ipv6AddressesPerInterface: t.ipv6AddressesPerInterface,
      ipv6Supported: true,
      enaSupport: t.hypervisor === 'nitro' ? 'required' : 'unsupported',
    },
  };
}

/** DescribeInstanceTypes: `InstanceType.N`, filters, MaxResults 5–100. Unknown types are `InvalidInstanceType`. */
export const describeInstanceTypes: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const names = params.list('InstanceType');
  const filters = params.filters();
  const table = state.instanceTypes();
  let types = [...table.values()];
  if (names.length > 0) {
    const unknown = names.filter((n) => !table.has(n));
    if (unknown.length > 0) {
      throw new Ec2SimError(
        'InvalidInstanceType',
        `The following supplied instance types do not exist: [${unknown.join(', ')}]`,
      );
    }
    types = types.filter((t) => names.includes(t.name));
  }
  const fields = (t: InstanceTypeInfo, name: string): string[] => {
    switch (name) {
      case 'instance-type':
        return [t.name];
      case 'hypervisor':
        return [t.hypervisor];
      case 'bare-metal':
        return [String(t.bareMetal)];
      case 'network-info.maximum-network-interfaces':
        return [String(t.maximumNetworkInterfaces)];
      case 'network-info.ipv4-addresses-per-interface':
        return [String(t.ipv4AddressesPerInterface)];
      case 'network-info.maximum-network-cards':
        return [String(t.networkCards.length)];
      default:
        return [];
    }
  };
  const matched = applyFilters(types, filters, TYPE_FILTERS, fields);
  const { page, nextToken } = paginate(matched, params, {
    min: 5,
    max: 100,
    action: 'DescribeInstanceTypes',
  });
  params.finish();
  if (dry) dryRunSucceeded();
  return { instanceTypeSet: page.map(renderType), nextToken };
};
