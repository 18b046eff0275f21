import { Ec2SimError } from '../errors.js';
import { formatIpv4Cidr, ipv4Overlaps, ipv4Within, parseIpv4Cidr } from '../ip.js';
import type { Vpc } from '../model.js';
import type { StateStore } from './store.js';

/** At most this many IPv4 CIDR blocks per VPC (EC2's default quota). */
export const MAX_VPC_IPV4_BLOCKS = 5;

/** One IPv4 CIDR block of a VPC with its association id. */
export interface VpcCidrAssociation {
  /** `vpc-cidr-assoc-…` */
  readonly associationId: string;
  /** The VPC. */
  readonly vpcId: string;
  /** The block, in network form. */
  readonly cidrBlock: string;
  /** The VPC's first block (never disassociated). */
  readonly primary: boolean;
}

/**
 * The association id of a block: a pure function of VPC and block, so a scenario's blocks and associated
 * ones answer Describe/Disassociate alike without extra state (EC2's ids are random; only their shape matters).
 */
export function cidrAssociationId(vpcId: string, cidrBlock: string): string {
  let h = 0xcbf29ce484222325n;
  for (const c of `${vpcId}/${cidrBlock}`) {
    h ^= BigInt(c.charCodeAt(0));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `vpc-cidr-assoc-0${h.toString(16).padStart(16, '0')}`;
}

/** Every IPv4 block of `vpc` with its association id, primary first. */
export function cidrAssociations(vpc: Vpc): VpcCidrAssociation[] {
  return vpc.cidrBlocks.map((cidrBlock, i) => ({
    associationId: cidrAssociationId(vpc.id, cidrBlock),
    vpcId: vpc.id,
    cidrBlock,
    primary: i === 0,
  }));
}

/**
 * AssociateVpcCidrBlock: adds `cidrBlock` (/16–/28, not overlapping the VPC's blocks, at most
 * {@link MAX_VPC_IPV4_BLOCKS}) to the VPC and announces `vpc-cidr-associated`. Validates first and changes
 * nothing on error.
 */
export function associateVpcCidr(store: StateStore, vpcId: string, cidrBlock: string): VpcCidrAssociation {
  const vpc = store.vpcs.get(vpcId);
  if (!vpc) throw new Ec2SimError('InvalidVpcID.NotFound', `The vpc ID '${vpcId}' does not exist`);
  const c = parseIpv4Cidr(cidrBlock);
  if (!c)
    throw new Ec2SimError('InvalidParameterValue', `Value (${cidrBlock}) for parameter cidrBlock is invalid`);
  if (c.length < 16 || c.length > 28) {
    throw new Ec2SimError(
      'InvalidVpc.Range',
      `The CIDR '${cidrBlock}' is invalid (a VPC block is /16 to /28)`,
    );
  }
  const normal = formatIpv4Cidr(c);
  const clash = vpc.cidrBlocks.find((b) => ipv4Overlaps(parseIpv4Cidr(b)!, c));
  if (clash) {
    throw new Ec2SimError('CidrConflict', `The CIDR '${normal}' conflicts with CIDR '${clash}' of ${vpcId}`);
  }
  if (vpc.cidrBlocks.length >= MAX_VPC_IPV4_BLOCKS) {
    throw new Ec2SimError(
      'CidrLimitExceeded',
      `The VPC ${vpcId} already has the maximum of ${MAX_VPC_IPV4_BLOCKS} IPv4 CIDR blocks`,
    );
  }
  store.vpcs.set(vpcId, { ...vpc, cidrBlocks: [...vpc.cidrBlocks, normal] });
  const associationId = cidrAssociationId(vpcId, normal);
  store.emit({ type: 'vpc-cidr-associated', vpcId, cidrBlock: normal, associationId });
  return { associationId, vpcId, cidrBlock: normal, primary: false };
}

/**
 * DisassociateVpcCidrBlock: removes a secondary block that no subnet uses and announces
 * `vpc-cidr-disassociated`. The primary block cannot be removed.
 */
export function disassociateVpcCidr(store: StateStore, associationId: string): VpcCidrAssociation {
  const found = [...store.vpcs.values()]
    .flatMap((v) => cidrAssociations(v))
    .find((a) => a.associationId === associationId);
  if (!found) {
    throw new Ec2SimError(
      'InvalidAssociationID.NotFound',
      `The association ID '${associationId}' does not exist`,
    );
  }
  if (found.primary) {
    throw new Ec2SimError(
      'OperationNotPermitted',
      `The primary CIDR block ${found.cidrBlock} of ${found.vpcId} cannot be disassociated`,
    );
  }
  const block = parseIpv4Cidr(found.cidrBlock)!;
  const user = [...store.subnets.values()].find(
    (s) => s.vpcId === found.vpcId && ipv4Within(parseIpv4Cidr(s.cidrBlock)!, block),
  );
  if (user) {
    throw new Ec2SimError(
      'DependencyViolation',
      `The CIDR block ${found.cidrBlock} has a dependent subnet ${user.id} and cannot be disassociated`,
    );
  }
  const vpc = store.vpcs.get(found.vpcId)!;
  store.vpcs.set(found.vpcId, { ...vpc, cidrBlocks: vpc.cidrBlocks.filter((b) => b !== found.cidrBlock) });
  store.emit({
    type: 'vpc-cidr-disassociated',
    vpcId: found.vpcId,
    cidrBlock: found.cidrBlock,
    associationId,
  });
  return found;
}
