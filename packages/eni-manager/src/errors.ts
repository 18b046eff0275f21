/** What {@link errorCodeInfo} says about one error code. */
export interface EniErrorCodeInfo {
  /** Whether retrying the same call later may succeed. */
  readonly retryable: boolean;
  /** Who reports it: EC2 (the AWS error code), IMDS, or this package. */
  readonly source: 'ec2' | 'imds' | 'local';
}

const codes = {
  // --- EC2 error codes (as AWS returns them) ---
  /** The subnet has no free address for the request. Retrying soon does not help (the reference cools down 120 s). */
  InsufficientFreeAddressesInSubnet: { retryable: false, source: 'ec2' },
  /** No aligned, free /28 is left in the subnet for a prefix (fragmentation or a full subnet). */
  InsufficientCidrBlocks: { retryable: false, source: 'ec2' },
  /** The ENI already holds as many addresses (or prefixes) as the instance type allows. */
  PrivateIpAddressLimitExceeded: { retryable: false, source: 'ec2' },
  /** The instance (or network card) has no room for another attachment. */
  AttachmentLimitExceeded: { retryable: false, source: 'ec2' },
  /** The ENI does not exist (deleted, or not yet visible: EC2 is eventually consistent). */
  'InvalidNetworkInterfaceID.NotFound': { retryable: false, source: 'ec2' },
  /** The ENI id is not a well-formed `eni-…` id. */
  'InvalidNetworkInterfaceID.Malformed': { retryable: false, source: 'ec2' },
  /** The attachment does not exist (already detached). */
  'InvalidAttachmentID.NotFound': { retryable: false, source: 'ec2' },
  /**
   * The ENI is attached (or detaching): an attach of an ENI already attached (often this very call's earlier
   * attempt, whose reply was lost), or a delete before the detach finished. Not retryable as is: read the ENI
   * and adopt its attachment, or detach first.
   */
  'InvalidNetworkInterface.InUse': { retryable: false, source: 'ec2' },
  /** The resource is in a state that forbids the call for now (e.g. still attaching). */
  IncorrectState: { retryable: true, source: 'ec2' },
  /** The subnet does not exist. */
  'InvalidSubnetID.NotFound': { retryable: false, source: 'ec2' },
  /** A security group does not exist. */
  'InvalidGroup.NotFound': { retryable: false, source: 'ec2' },
  /** The instance does not exist. */
  'InvalidInstanceID.NotFound': { retryable: false, source: 'ec2' },
  /** A parameter value was rejected. */
  InvalidParameterValue: { retryable: false, source: 'ec2' },
  /** Parameters that cannot be used together. */
  InvalidParameterCombination: { retryable: false, source: 'ec2' },
  /** IAM denies the action; {@link EniManagerError.iamAction} names it. */
  UnauthorizedOperation: { retryable: false, source: 'ec2' },
  /** EC2 throttled the account's bucket for this action family. */
  RequestLimitExceeded: { retryable: true, source: 'ec2' },
  /** EC2 failed internally (HTTP 500). */
  InternalError: { retryable: true, source: 'ec2' },
  /** EC2 is unavailable (HTTP 503). */
  Unavailable: { retryable: true, source: 'ec2' },
  /** Any other AWS error code; {@link EniManagerError.awsCode} holds it. */
  Ec2Unknown: { retryable: false, source: 'ec2' },
  /** No HTTP response from EC2 (connection refused, reset, timeout). */
  Ec2Transport: { retryable: true, source: 'ec2' },
  /**
   * EC2 answered 200 but a field this package reads was missing or had the wrong shape (an id, a MAC, an
   * address, a CIDR, an index); {@link EniManagerError.action} and {@link EniManagerError.field} name it.
   */
  Ec2InvalidResponse: { retryable: false, source: 'ec2' },
  // --- IMDS ---
  /** IMDS did not answer, timed out, or answered 5xx. */
  ImdsUnavailable: { retryable: true, source: 'imds' },
  /** IMDS answered 404 for a path that must exist. */
  ImdsNotFound: { retryable: false, source: 'imds' },
  /** IMDS refused the token (401/403 after a fresh token) or the token PUT failed. */
  ImdsUnauthorized: { retryable: false, source: 'imds' },
  /** An IMDS value did not have the expected shape (an id, a MAC, an address, a CIDR…). */
  ImdsInvalidResponse: { retryable: false, source: 'imds' },
  // --- this package ---
  /** A new ENI (or its addresses) did not show in IMDS before the deadline. */
  EniNotVisible: { retryable: true, source: 'local' },
  /** Waiting for an ENI to detach (become `available`) passed the deadline. */
  DetachTimeout: { retryable: true, source: 'local' },
  /** Every device index on the network card is taken. */
  NoFreeDeviceIndex: { retryable: false, source: 'local' },
  /** Subnet discovery found no subnet that may hold pod ENIs. */
  NoEligibleSubnet: { retryable: false, source: 'local' },
  /** The caller's request was malformed; nothing was sent. */
  InvalidInput: { retryable: false, source: 'local' },
  /** An instance type missing from the shipped limits table, with no EC2 to ask (IMDS-only mode). */
  UnknownInstanceType: { retryable: false, source: 'local' },
} as const satisfies Record<EniErrorCode, EniErrorCodeInfo>;

/**
 * Every error code this package can report: the closed set. EC2 failures keep the AWS error code
 * (`InsufficientFreeAddressesInSubnet`, `InsufficientCidrBlocks`, `PrivateIpAddressLimitExceeded`,
 * `AttachmentLimitExceeded`, `InvalidNetworkInterfaceID.NotFound`, `InvalidNetworkInterfaceID.Malformed`,
 * `InvalidAttachmentID.NotFound`, `InvalidNetworkInterface.InUse`, `IncorrectState`, `InvalidSubnetID.NotFound`,
 * `InvalidGroup.NotFound`, `InvalidInstanceID.NotFound`, `InvalidParameterValue`, `InvalidParameterCombination`,
 * `UnauthorizedOperation`, `RequestLimitExceeded`, `InternalError`, `Unavailable`), with `Ec2Unknown` for any other
 * AWS code, `Ec2Transport` for no response and `Ec2InvalidResponse` for an unusable one. IMDS failures are
 * `ImdsUnavailable`, `ImdsNotFound`, `ImdsUnauthorized`, `ImdsInvalidResponse`; this package's own are
 * `EniNotVisible`, `DetachTimeout`, `NoFreeDeviceIndex`, `NoEligibleSubnet`, `InvalidInput`,
 * `UnknownInstanceType`.
 */
export type EniErrorCode =
  | 'InsufficientFreeAddressesInSubnet'
  | 'InsufficientCidrBlocks'
  | 'PrivateIpAddressLimitExceeded'
  | 'AttachmentLimitExceeded'
  | 'InvalidNetworkInterfaceID.NotFound'
  | 'InvalidNetworkInterfaceID.Malformed'
  | 'InvalidAttachmentID.NotFound'
  | 'InvalidNetworkInterface.InUse'
  | 'IncorrectState'
  | 'InvalidSubnetID.NotFound'
  | 'InvalidGroup.NotFound'
  | 'InvalidInstanceID.NotFound'
  | 'InvalidParameterValue'
  | 'InvalidParameterCombination'
  | 'UnauthorizedOperation'
  | 'RequestLimitExceeded'
  | 'InternalError'
  | 'Unavailable'
  | 'Ec2Unknown'
  | 'Ec2Transport'
  | 'Ec2InvalidResponse'
  | 'ImdsUnavailable'
  | 'ImdsNotFound'
  | 'ImdsUnauthorized'
  | 'ImdsInvalidResponse'
  | 'EniNotVisible'
  | 'DetachTimeout'
  | 'NoFreeDeviceIndex'
  | 'NoEligibleSubnet'
  | 'InvalidInput'
  | 'UnknownInstanceType';

/**
 * Retryability and source of every {@link EniErrorCode}, in one table (the source of `src/errors.ts` explains
 * each code).
 */
export const errorCodeInfo: Readonly<Record<EniErrorCode, EniErrorCodeInfo>> = codes;

/** Details carried by an {@link EniManagerError}, beyond its code. */
export interface EniErrorDetails {
  /** The EC2 action or IMDS path being called, e.g. `CreateNetworkInterface` or `network/interfaces/macs/`. */
  readonly action?: string;
  /**
   * For `Ec2InvalidResponse`: the response field that was missing or malformed, as a path into the SDK's output,
   * e.g. `NetworkInterface.PrivateIpAddresses[1].PrivateIpAddress`.
   */
  readonly field?: string;
  /** For `UnauthorizedOperation`: the IAM action to allow, e.g. `ec2:CreateNetworkInterface`. */
  readonly iamAction?: string;
  /** For `Ec2Unknown`: the AWS error code as received. */
  readonly awsCode?: string;
  /** The HTTP status, when there was a response. */
  readonly httpStatus?: number;
  /** How many attempts were made before giving up (1 when not retried). */
  readonly attempts?: number;
  /** The AWS request id, when there was one. */
  readonly requestId?: string;
  /** The underlying error (transport error, or a failed rollback's error). */
  readonly cause?: unknown;
}

const BRAND = 'EniManagerError' as const;

/**
 * The one error type this package throws. Match on {@link EniManagerError.code} (a closed union); never on
 * the message. Use {@link isEniManagerError} rather than `instanceof`, which fails across duplicate installs.
 */
export class EniManagerError extends Error {
  /** Brand checked by {@link isEniManagerError}. */
  readonly _tag = BRAND;
  /** The stable code. */
  readonly code: EniErrorCode;
  /** Whether retrying the same call later may succeed. */
  readonly retryable: boolean;
  /** See {@link EniErrorDetails.action}. */
  readonly action: string | undefined;
  /** See {@link EniErrorDetails.field}. */
  readonly field: string | undefined;
  /** See {@link EniErrorDetails.iamAction}. */
  readonly iamAction: string | undefined;
  /** See {@link EniErrorDetails.awsCode}. */
  readonly awsCode: string | undefined;
  /** See {@link EniErrorDetails.httpStatus}. */
  readonly httpStatus: number | undefined;
  /** See {@link EniErrorDetails.attempts}. */
  readonly attempts: number;
  /** See {@link EniErrorDetails.requestId}. */
  readonly requestId: string | undefined;

  /** Prefer {@link eniError}. */
  constructor(code: EniErrorCode, message: string, details: EniErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'EniManagerError';
    this.code = code;
    this.retryable = errorCodeInfo[code].retryable;
    this.action = details.action;
    this.field = details.field;
    this.iamAction = details.iamAction;
    this.awsCode = details.awsCode;
    this.httpStatus = details.httpStatus;
    this.attempts = details.attempts ?? 1;
    this.requestId = details.requestId;
  }
}

/** Builds an {@link EniManagerError}. */
export function eniError(
  code: EniErrorCode,
  message: string,
  details: EniErrorDetails = {},
): EniManagerError {
  return new EniManagerError(code, message, details);
}

/** True when `code` is one of this package's error codes. */
export function isEniErrorCode(code: unknown): code is EniErrorCode {
  return typeof code === 'string' && Object.hasOwn(errorCodeInfo, code);
}

/**
 * True when `value` is an {@link EniManagerError} (optionally with one of `codes`), checked by brand and code,
 * so it holds even when two copies of this package are loaded.
 */
export function isEniManagerError<C extends EniErrorCode = EniErrorCode>(
  value: unknown,
  ...codes: C[]
): value is EniManagerError & {
  /** One of the codes asked for. */
  readonly code: C;
} {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { _tag?: unknown; code?: unknown };
  if (v._tag !== BRAND || !isEniErrorCode(v.code)) return false;
  return codes.length === 0 || (codes as EniErrorCode[]).includes(v.code);
}
