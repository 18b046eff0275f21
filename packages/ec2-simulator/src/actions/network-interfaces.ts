import { Ec2SimError } from '../errors.js';
import type { Eni, InterfaceType } from '../model.js';
import type { QueryParams } from '../query.js';
import {
  type ActionHandler,
  applyFilters,
  dryRun,
  dryRunSucceeded,
  paginate,
  rejectIdsWithMaxResults,
  selectByKey,
} from './common.js';
import { attachmentStatus, renderEni } from './render.js';

/** Reads `TagSpecification.N` for one resource type into tag pairs. */
export function readTagSpecifications(params: QueryParams, resourceType: string): [string, string][] {
  const tags: [string, string][] = [];
  for (const spec of params.structs('TagSpecification', (p) => ({
    type: params.required(`${p}ResourceType`),
    tags: params.structs(
      `${p}Tag`,
      (t) => [params.required(`${t}Key`), params.string(`${t}Value`) ?? ''] as [string, string],
    ),
  }))) {
    if (spec.type !== resourceType) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `'${spec.type}' is not a valid taggable resource type for this operation.`,
      );
    }
    tags.push(...spec.tags);
  }
  return tags;
}

const INTERFACE_TYPES = ['efa', 'efa-only', 'trunk', 'branch'] as const;

/** CreateNetworkInterface. */
export const createNetworkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const subnetId = params.required('SubnetId');
  const req = {
    subnetId,
    description: params.string('Description'),
    groups: params.list('SecurityGroupId'),
    primaryAddress: params.string('PrivateIpAddress'),
    addresses: params.structs('PrivateIpAddresses', (p) => ({
      address: params.required(`${p}PrivateIpAddress`),
      primary: params.bool(`${p}Primary`) ?? false,
    })),
    secondaryCount: params.int('SecondaryPrivateIpAddressCount', 1, 49),
    ipv4Prefixes: params.structs('Ipv4Prefix', (p) => params.required(`${p}Ipv4Prefix`)),
    ipv4PrefixCount: params.int('Ipv4PrefixCount', 1, 49),
    ipv6Addresses: params.structs('Ipv6Addresses', (p) => params.required(`${p}Ipv6Address`)),
    ipv6Count: params.int('Ipv6AddressCount', 1, 50),
    ipv6Prefixes: params.structs('Ipv6Prefix', (p) => params.required(`${p}Ipv6Prefix`)),
    ipv6PrefixCount: params.int('Ipv6PrefixCount', 1, 50),
    interfaceType: params.oneOf('InterfaceType', INTERFACE_TYPES) as InterfaceType | undefined,
    tags: readTagSpecifications(params, 'network-interface'),
    clientToken: params.string('ClientToken'),
  };
  if (req.clientToken !== undefined && req.clientToken.length > 64) {
    throw new Ec2SimError('InvalidParameterValue', 'ClientToken must be at most 64 characters.');
  }
  params.finish();
  if (dry) dryRunSucceeded();
  const eni = state.createNetworkInterface(req);
  return { networkInterface: renderEni(state, eni), clientToken: req.clientToken };
};

/** DeleteNetworkInterface. */
export const deleteNetworkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const id = params.required('NetworkInterfaceId');
  params.finish();
  if (dry) dryRunSucceeded();
  state.deleteNetworkInterface(id);
  return { return: true };
};

const ENI_FILTERS = [
  'network-interface-id',
  'status',
  'vpc-id',
  'subnet-id',
  'availability-zone',
  'description',
  'interface-type',
  'mac-address',
  'owner-id',
  'private-ip-address',
  'addresses.private-ip-address',
  'addresses.primary',
  'ipv6-addresses.ipv6-address',
  'group-id',
  'group-name',
  'requester-managed',
  'source-dest-check',
  'attachment.instance-id',
  'attachment.attachment-id',
  'attachment.device-index',
  'attachment.network-card-index',
  'attachment.status',
  'attachment.delete-on-termination',
  'attachment.instance-owner-id',
];

/** DescribeNetworkInterfaces: ids, filters (incl. `tag:K`, `tag-key`), MaxResults 5–1000 and NextToken. */
export const describeNetworkInterfaces: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const ids = params.list('NetworkInterfaceId');
  const filters = params.filters();
  rejectIdsWithMaxResults(params, ids, 'NetworkInterfaceIds');
  const now = state.now();
  const enis = selectByKey(
    state.enis().filter((e) => state.isVisible(e)),
    ids,
    (e) => e.id,
    (missing) =>
      new Ec2SimError(
        'InvalidNetworkInterfaceID.NotFound',
        `The networkInterface ID${missing.length > 1 ? 's' : ''} '${missing.join(', ')}' does not exist`,
      ),
  );
  const fields = (e: Eni, name: string): string[] => {
    const a = e.attachment;
    const ips = e.privateIps.filter((x) => x.visibleAt <= now).map((x) => x.value);
    switch (name) {
      case 'network-interface-id':
        return [e.id];
      case 'status':
        return [a ? 'in-use' : 'available'];
      case 'vpc-id':
        return [e.vpcId];
      case 'subnet-id':
        return [e.subnetId];
      case 'availability-zone':
        return [e.availabilityZone];
      case 'description':
        return [e.description];
      case 'interface-type':
        return [e.interfaceType];
      case 'mac-address':
        return [e.mac];
      case 'owner-id':
      case 'attachment.instance-owner-id':
        return name === 'owner-id' || a ? [state.accountId] : [];
      case 'private-ip-address':
      case 'addresses.private-ip-address':
        return ips;
      case 'addresses.primary':
        return ['true', ...(ips.length > 1 ? ['false'] : [])];
      case 'ipv6-addresses.ipv6-address':
        return e.ipv6Addresses.filter((x) => x.visibleAt <= now).map((x) => x.value);
      case 'group-id':
        return e.groups;
      case 'group-name':
        return e.groups.map((g) => state.securityGroup(g)?.name ?? g);
      case 'requester-managed':
        return ['false'];
      case 'source-dest-check':
        return [String(e.sourceDestCheck)];
      case 'attachment.instance-id':
        return a ? [a.instanceId] : [];
      case 'attachment.attachment-id':
        return a ? [a.id] : [];
      case 'attachment.device-index':
        return a ? [String(a.deviceIndex)] : [];
      case 'attachment.network-card-index':
        return a ? [String(a.networkCardIndex)] : [];
      case 'attachment.status':
        return a ? [attachmentStatus(e, now)!] : [];
      case 'attachment.delete-on-termination':
        return a ? [String(a.deleteOnTermination)] : [];
      default:
        return [];
    }
  };
  const matched = applyFilters(enis, filters, ENI_FILTERS, fields, (e) => e.tags);
  const { page, nextToken } = paginate(matched, params, {
    min: 5,
    max: 1000,
    action: 'DescribeNetworkInterfaces',
  });
  params.finish();
  if (dry) dryRunSucceeded();
  return { networkInterfaceSet: page.map((e) => renderEni(state, e)), nextToken };
};

/**
 * ModifyNetworkInterfaceAttribute: exactly one of Attachment (DeleteOnTermination), SecurityGroupId.N,
 * Description.Value or SourceDestCheck.Value.
 */
export const modifyNetworkInterfaceAttribute: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const id = params.required('NetworkInterfaceId');
  const attachmentId = params.string('Attachment.AttachmentId');
  const deleteOnTermination = params.bool('Attachment.DeleteOnTermination');
  const groups = params.list('SecurityGroupId');
  const description = params.string('Description.Value');
  const sourceDestCheck = params.bool('SourceDestCheck.Value');
  params.finish();
  const kinds = [
    attachmentId !== undefined || deleteOnTermination !== undefined,
    groups.length > 0,
    description !== undefined,
    sourceDestCheck !== undefined,
  ].filter(Boolean).length;
  if (kinds === 0) {
    throw new Ec2SimError('MissingParameter', 'The request must contain exactly one attribute to modify.');
  }
  if (kinds > 1) {
    throw new Ec2SimError('InvalidParameterCombination', 'Fields for multiple attribute types specified');
  }
  if ((attachmentId === undefined) !== (deleteOnTermination === undefined)) {
    throw new Ec2SimError(
      'MissingParameter',
      'Attachment.AttachmentId and Attachment.DeleteOnTermination must be given together.',
    );
  }
  if (dry) dryRunSucceeded();
  if (attachmentId !== undefined && deleteOnTermination !== undefined) {
    state.setDeleteOnTermination(id, attachmentId, deleteOnTermination);
  } else if (groups.length > 0) {
    state.setGroups(id, groups);
  } else {
    state.setAttribute(id, {
      ...(description !== undefined ? { description } : {}),
      ...(sourceDestCheck !== undefined ? { sourceDestCheck } : {}),
    });
  }
  return { return: true };
};
