import { Ec2SimError } from '../errors.js';
import { type ActionHandler, dryRun, dryRunSucceeded } from './common.js';

/**
 * AssignPrivateIpAddresses: `PrivateIpAddress.N` or `SecondaryPrivateIpAddressCount`, and/or `Ipv4Prefix.N`
 * or `Ipv4PrefixCount`; `AllowReassignment`.
 */
export const assignPrivateIpAddresses: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const eniId = params.required('NetworkInterfaceId');
  const addresses = params.list('PrivateIpAddress');
  const count = params.int('SecondaryPrivateIpAddressCount', 1, 49);
  const prefixes = params.list('Ipv4Prefix');
  const prefixCount = params.int('Ipv4PrefixCount', 1, 49);
  const allowReassignment = params.bool('AllowReassignment');
  params.finish();
  if (addresses.length > 0 && count !== undefined) {
    throw new Ec2SimError(
      'InvalidParameterCombination',
      'PrivateIpAddresses and SecondaryPrivateIpAddressCount cannot both be specified.',
    );
  }
  if (prefixes.length > 0 && prefixCount !== undefined) {
    throw new Ec2SimError(
      'InvalidParameterCombination',
      'Ipv4Prefixes and Ipv4PrefixCount cannot both be specified.',
    );
  }
  if (addresses.length === 0 && count === undefined && prefixes.length === 0 && prefixCount === undefined) {
    throw new Ec2SimError(
      'MissingParameter',
      'The request must contain PrivateIpAddress, SecondaryPrivateIpAddressCount, Ipv4Prefix or Ipv4PrefixCount.',
    );
  }
  if (dry) dryRunSucceeded();
  const r = state.assignPrivateIps(eniId, { addresses, count, prefixes, prefixCount, allowReassignment });
  return {
    networkInterfaceId: eniId,
    assignedPrivateIpAddressesSet: r.addresses.map((privateIpAddress) => ({ privateIpAddress })),
    assignedIpv4PrefixSet: r.prefixes.map((ipv4Prefix) => ({ ipv4Prefix })),
  };
};

/** UnassignPrivateIpAddresses: `PrivateIpAddress.N` and/or `Ipv4Prefix.N`. */
export const unassignPrivateIpAddresses: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const eniId = params.required('NetworkInterfaceId');
  const addresses = params.list('PrivateIpAddress');
  const prefixes = params.list('Ipv4Prefix');
  params.finish();
  if (addresses.length === 0 && prefixes.length === 0) {
    throw new Ec2SimError('MissingParameter', 'The request must contain PrivateIpAddress or Ipv4Prefix.');
  }
  if (dry) dryRunSucceeded();
  state.unassignPrivateIps(eniId, addresses, prefixes);
  return { return: true };
};

/** AssignIpv6Addresses: `Ipv6Addresses.N`, `Ipv6AddressCount`, `Ipv6Prefix.N`, `Ipv6PrefixCount`. */
export const assignIpv6Addresses: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const eniId = params.required('NetworkInterfaceId');
  const addresses = params.list('Ipv6Addresses');
  const count = params.int('Ipv6AddressCount', 1, 50);
  const prefixes = params.list('Ipv6Prefix');
  const prefixCount = params.int('Ipv6PrefixCount', 1, 50);
  params.finish();
  if (addresses.length === 0 && count === undefined && prefixes.length === 0 && prefixCount === undefined) {
    throw new Ec2SimError(
      'MissingParameter',
      'The request must contain Ipv6Addresses, Ipv6AddressCount, Ipv6Prefix or Ipv6PrefixCount.',
    );
  }
  if (dry) dryRunSucceeded();
  const r = state.assignIpv6(eniId, { addresses, count, prefixes, prefixCount });
  return {
    assignedIpv6Addresses: r.addresses,
    assignedIpv6PrefixSet: r.prefixes,
    networkInterfaceId: eniId,
  };
};

/** UnassignIpv6Addresses: `Ipv6Addresses.N` and/or `Ipv6Prefix.N`. */
export const unassignIpv6Addresses: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const eniId = params.required('NetworkInterfaceId');
  const addresses = params.list('Ipv6Addresses');
  const prefixes = params.list('Ipv6Prefix');
  params.finish();
  if (addresses.length === 0 && prefixes.length === 0) {
    throw new Ec2SimError('MissingParameter', 'The request must contain Ipv6Addresses or Ipv6Prefix.');
  }
  if (dry) dryRunSucceeded();
  state.unassignIpv6(eniId, addresses, prefixes);
  return {
    networkInterfaceId: eniId,
    unassignedIpv6Addresses: addresses,
    unassignedIpv6PrefixSet: prefixes,
  };
};
