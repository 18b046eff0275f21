import {
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  AssociateTrunkInterfaceCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreateTagsCommand,
  DeleteNetworkInterfaceCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSubnetsCommand,
  DescribeTrunkInterfaceAssociationsCommand,
  DetachNetworkInterfaceCommand,
  DisassociateTrunkInterfaceCommand,
  EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import type { Ec2Action, Ec2Actions } from './actions.js';

// The one module that imports the SDK's values, by name: `client.ts` loads it on the first call, and a bundler
// that follows this import keeps only these commands and the shapes they reach, not all of EC2.

/** The SDK's command class for every action in {@link Ec2Actions}. */
export const ec2Commands = {
  AssignIpv6Addresses: AssignIpv6AddressesCommand,
  AssignPrivateIpAddresses: AssignPrivateIpAddressesCommand,
  AssociateTrunkInterface: AssociateTrunkInterfaceCommand,
  AttachNetworkInterface: AttachNetworkInterfaceCommand,
  CreateNetworkInterface: CreateNetworkInterfaceCommand,
  CreateTags: CreateTagsCommand,
  DeleteNetworkInterface: DeleteNetworkInterfaceCommand,
  DescribeInstances: DescribeInstancesCommand,
  DescribeInstanceTypes: DescribeInstanceTypesCommand,
  DescribeNetworkInterfaces: DescribeNetworkInterfacesCommand,
  DescribeSubnets: DescribeSubnetsCommand,
  DescribeTrunkInterfaceAssociations: DescribeTrunkInterfaceAssociationsCommand,
  DetachNetworkInterface: DetachNetworkInterfaceCommand,
  DisassociateTrunkInterface: DisassociateTrunkInterfaceCommand,
  ModifyNetworkInterfaceAttribute: ModifyNetworkInterfaceAttributeCommand,
  UnassignPrivateIpAddresses: UnassignPrivateIpAddressesCommand,
} as const satisfies Record<Ec2Action, new (input: never) => unknown>;

export { EC2Client };
