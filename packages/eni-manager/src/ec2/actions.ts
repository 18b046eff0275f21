import type {
  AssignIpv6AddressesCommandInput,
  AssignIpv6AddressesCommandOutput,
  AssignPrivateIpAddressesCommandInput,
  AssignPrivateIpAddressesCommandOutput,
  AssociateTrunkInterfaceCommandInput,
  AssociateTrunkInterfaceCommandOutput,
  AttachNetworkInterfaceCommandInput,
  AttachNetworkInterfaceCommandOutput,
  CreateNetworkInterfaceCommandInput,
  CreateNetworkInterfaceCommandOutput,
  CreateTagsCommandInput,
  CreateTagsCommandOutput,
  DeleteNetworkInterfaceCommandInput,
  DeleteNetworkInterfaceCommandOutput,
  DescribeInstancesCommandInput,
  DescribeInstancesCommandOutput,
  DescribeInstanceTypesCommandInput,
  DescribeInstanceTypesCommandOutput,
  DescribeNetworkInterfacesCommandInput,
  DescribeNetworkInterfacesCommandOutput,
  DescribeSubnetsCommandInput,
  DescribeSubnetsCommandOutput,
  DescribeTrunkInterfaceAssociationsCommandInput,
  DescribeTrunkInterfaceAssociationsCommandOutput,
  DetachNetworkInterfaceCommandInput,
  DetachNetworkInterfaceCommandOutput,
  DisassociateTrunkInterfaceCommandInput,
  DisassociateTrunkInterfaceCommandOutput,
  ModifyNetworkInterfaceAttributeCommandInput,
  ModifyNetworkInterfaceAttributeCommandOutput,
  UnassignPrivateIpAddressesCommandInput,
  UnassignPrivateIpAddressesCommandOutput,
} from '@aws-sdk/client-ec2';

/** The EC2 actions this package calls, each with its SDK input and output types. */
export interface Ec2Actions {
  /** `ec2:AssignIpv6Addresses` */
  AssignIpv6Addresses: [AssignIpv6AddressesCommandInput, AssignIpv6AddressesCommandOutput];
  /** `ec2:AssignPrivateIpAddresses` */
  AssignPrivateIpAddresses: [AssignPrivateIpAddressesCommandInput, AssignPrivateIpAddressesCommandOutput];
  /** `ec2:AssociateTrunkInterface` (a branch ENI onto a trunk, under a VLAN id) */
  AssociateTrunkInterface: [AssociateTrunkInterfaceCommandInput, AssociateTrunkInterfaceCommandOutput];
  /** `ec2:AttachNetworkInterface` */
  AttachNetworkInterface: [AttachNetworkInterfaceCommandInput, AttachNetworkInterfaceCommandOutput];
  /** `ec2:CreateNetworkInterface` */
  CreateNetworkInterface: [CreateNetworkInterfaceCommandInput, CreateNetworkInterfaceCommandOutput];
  /** `ec2:CreateTags` */
  CreateTags: [CreateTagsCommandInput, CreateTagsCommandOutput];
  /** `ec2:DeleteNetworkInterface` */
  DeleteNetworkInterface: [DeleteNetworkInterfaceCommandInput, DeleteNetworkInterfaceCommandOutput];
  /** `ec2:DescribeInstances` */
  DescribeInstances: [DescribeInstancesCommandInput, DescribeInstancesCommandOutput];
  /** `ec2:DescribeInstanceTypes` */
  DescribeInstanceTypes: [DescribeInstanceTypesCommandInput, DescribeInstanceTypesCommandOutput];
  /** `ec2:DescribeNetworkInterfaces` */
  DescribeNetworkInterfaces: [DescribeNetworkInterfacesCommandInput, DescribeNetworkInterfacesCommandOutput];
  /** `ec2:DescribeSubnets` */
  DescribeSubnets: [DescribeSubnetsCommandInput, DescribeSubnetsCommandOutput];
  /** `ec2:DescribeTrunkInterfaceAssociations` */
  DescribeTrunkInterfaceAssociations: [
    DescribeTrunkInterfaceAssociationsCommandInput,
    DescribeTrunkInterfaceAssociationsCommandOutput,
  ];
  /** `ec2:DetachNetworkInterface` */
  DetachNetworkInterface: [DetachNetworkInterfaceCommandInput, DetachNetworkInterfaceCommandOutput];
  /** `ec2:DisassociateTrunkInterface` */
  DisassociateTrunkInterface: [
    DisassociateTrunkInterfaceCommandInput,
    DisassociateTrunkInterfaceCommandOutput,
  ];
  /** `ec2:ModifyNetworkInterfaceAttribute` */
  ModifyNetworkInterfaceAttribute: [
    ModifyNetworkInterfaceAttributeCommandInput,
    ModifyNetworkInterfaceAttributeCommandOutput,
  ];
  /** `ec2:UnassignPrivateIpAddresses` */
  UnassignPrivateIpAddresses: [
    UnassignPrivateIpAddressesCommandInput,
    UnassignPrivateIpAddressesCommandOutput,
  ];
}

/** The name of an action in {@link Ec2Actions}. */
export type Ec2Action = keyof Ec2Actions;

/** Actions that change EC2 state (what the "mutating calls per new ENI" benchmark counts). */
export const mutatingActions: ReadonlySet<string> = new Set([
  'AssignIpv6Addresses',
  'AssignPrivateIpAddresses',
  'AssociateTrunkInterface',
  'AttachNetworkInterface',
  'CreateNetworkInterface',
  'CreateTags',
  'DeleteNetworkInterface',
  'DetachNetworkInterface',
  'DisassociateTrunkInterface',
  'ModifyNetworkInterfaceAttribute',
  'UnassignPrivateIpAddresses',
]);

/**
 * Mutating actions that are not idempotent: sent twice, they act twice (two batches of addresses) or fail the
 * second time (`InvalidNetworkInterface.InUse` for an attach that went through). When one of them fails without
 * a clear answer (no response, or EC2's 500/503), the request may or may not have been carried out, so it is
 * not retried blind: the caller re-reads the ENI and adopts what exists. `CreateNetworkInterface` is not here:
 * its `ClientToken` makes a retry return the same ENI.
 */
export const nonIdempotentActions: ReadonlySet<string> = new Set([
  'AssignIpv6Addresses',
  'AssignPrivateIpAddresses',
  'AttachNetworkInterface',
]);

/** Failures after which a request may or may not have been carried out (its reply was lost or garbled). */
export const ambiguousErrorCodes: ReadonlySet<string> = new Set([
  'Ec2Transport',
  'InternalError',
  'Unavailable',
]);
