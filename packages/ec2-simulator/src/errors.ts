/**
 * The EC2 error codes the simulator returns, exactly as AWS spells them. Clients branch on these codes
 * (never on the message), so the set is closed.
 */
export const EC2_ERROR_CODES = [
  'InsufficientFreeAddressesInSubnet',
  'InsufficientCidrBlocks',
  'PrivateIpAddressLimitExceeded',
  'AttachmentLimitExceeded',
  'InvalidNetworkInterfaceID.NotFound',
  'InvalidNetworkInterfaceID.Malformed',
  'InvalidNetworkInterface.InUse',
  'InvalidAttachmentID.NotFound',
  'InvalidInstanceID.NotFound',
  'InvalidInstanceID.Malformed',
  'InvalidSubnetID.NotFound',
  'InvalidGroup.NotFound',
  'InvalidGroup.Duplicate',
  'InvalidGroup.Reserved',
  'InvalidGroupId.Malformed',
  'InvalidPermission.Duplicate',
  'InvalidPermission.NotFound',
  'InvalidPermission.Malformed',
  'InvalidSecurityGroupRuleId.NotFound',
  'RulesPerSecurityGroupLimitExceeded',
  'DependencyViolation',
  'CannotDelete',
  'InvalidVpcID.NotFound',
  'InvalidAssociationID.NotFound',
  'InvalidVpc.Range',
  'CidrConflict',
  'CidrLimitExceeded',
  'UnsupportedOperation',
  'IncorrectState',
  'InvalidInstanceType',
  'InvalidParameterValue',
  'IdempotentParameterMismatch',
  'TagLimitExceeded',
  'InvalidID',
  'SecurityGroupsPerInterfaceLimitExceeded',
  'InvalidParameterCombination',
  'InvalidParameter',
  'MissingParameter',
  'UnknownParameter',
  'InvalidAction',
  'InvalidIPAddress.InUse',
  'OperationNotPermitted',
  'UnauthorizedOperation',
  'DryRunOperation',
  'RequestLimitExceeded',
  'Unavailable',
  'InternalError',
] as const;

/** One of {@link EC2_ERROR_CODES}. */
export type Ec2ErrorCode = (typeof EC2_ERROR_CODES)[number];

/** The HTTP status EC2 uses for each code (400 unless listed). */
const STATUS: Partial<Record<Ec2ErrorCode, number>> = {
  UnauthorizedOperation: 403,
  DryRunOperation: 412,
  RequestLimitExceeded: 503,
  Unavailable: 503,
  InternalError: 500,
};

/** The HTTP status AWS answers with for `code` (400 for client errors, 403, 412, 500 or 503 otherwise). */
export function httpStatusFor(code: string): number {
  return STATUS[code as Ec2ErrorCode] ?? 400;
}

/**
 * An EC2 API error as the simulator raises it: a stable AWS `code`, a human message and the HTTP status it is
 * sent with. Every action validates its input and throws this before changing any state.
 */
export class Ec2SimError extends Error {
  /** Discriminator for {@link isEc2SimError}. */
  readonly kind = 'Ec2SimError' as const;
  /** The AWS error code, e.g. `InsufficientFreeAddressesInSubnet`. */
  readonly code: Ec2ErrorCode | (string & {});
  /** The HTTP status the error is sent with. */
  readonly status: number;

  /**
   * @param code - the AWS error code
   * @param message - the message AWS would send (free text; clients must not parse it)
   * @param status - overrides the status derived from the code (used by fault injection)
   */
  constructor(code: Ec2ErrorCode | (string & {}), message: string, status?: number) {
    super(message);
    this.name = 'Ec2SimError';
    this.code = code;
    this.status = status ?? httpStatusFor(code);
  }
}

/** True when `e` is an {@link Ec2SimError} (checks the discriminator, not only `instanceof`). */
export function isEc2SimError(e: unknown): e is Ec2SimError {
  return typeof e === 'object' && e !== null && (e as { kind?: unknown }).kind === 'Ec2SimError';
}

/** Error codes for an invalid scenario (file or object) given to the simulator. */
export type ScenarioErrorCode =
  | 'SCENARIO_UNREADABLE'
  | 'SCENARIO_NOT_JSON'
  | 'SCENARIO_INVALID'
  | 'SCENARIO_DUPLICATE_ID'
  | 'SCENARIO_UNKNOWN_REFERENCE'
  | 'SCENARIO_CIDR_CONFLICT';

/** A scenario that cannot be loaded. `path` points at the offending field, e.g. `subnets[1].cidrBlock`. */
export class ScenarioError extends Error {
  /** Discriminator for {@link isScenarioError}. */
  readonly kind = 'ScenarioError' as const;
  /** Stable error code. */
  readonly code: ScenarioErrorCode;
  /** JSON path of the offending field (empty for the whole document). */
  readonly path: string;

  /**
   * @param code - stable error code
   * @param path - JSON path of the offending field
   * @param message - explanation for humans
   */
  constructor(code: ScenarioErrorCode, path: string, message: string) {
    super(path ? `${path}: ${message}` : message);
    this.name = 'ScenarioError';
    this.code = code;
    this.path = path;
  }
}

/** True when `e` is a {@link ScenarioError}. */
export function isScenarioError(e: unknown): e is ScenarioError {
  return typeof e === 'object' && e !== null && (e as { kind?: unknown }).kind === 'ScenarioError';
}
