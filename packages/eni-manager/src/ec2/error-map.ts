import {
  type EniManagerError,
  eniError,
  errorCodeInfo,
  isEniErrorCode,
  isEniManagerError,
} from '../errors.js';

interface SdkErrorShape {
  name?: unknown;
  Code?: unknown;
  message?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
}

// Codes the SDK and EC2 use for the same throttling and outage conditions.
const ALIASES: Record<string, string> = {
  Throttling: 'RequestLimitExceeded',
  ThrottlingException: 'RequestLimitExceeded',
  EC2ThrottledException: 'RequestLimitExceeded',
  ServiceUnavailable: 'Unavailable',
  InternalFailure: 'InternalError',
};

const TRANSPORT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * Turns whatever `EC2Client.send` rejected with into an {@link EniManagerError}, by the AWS error code (the
 * SDK puts it in `name` and `Code`) — never by message text. `UnauthorizedOperation` names the IAM action.
 */
export function mapEc2Error(error: unknown, action: string, attempts: number): EniManagerError {
  if (isEniManagerError(error)) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape & { code?: unknown };
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  const requestId = typeof e.$metadata?.requestId === 'string' ? e.$metadata.requestId : undefined;
  const message = typeof e.message === 'string' ? e.message : String(error);
  // The SDK's error holds the whole HTTP response (socket included): keep the facts, not the object.
  const base = {
    action,
    attempts,
    ...(status === undefined ? {} : { httpStatus: status }),
    ...(requestId === undefined ? {} : { requestId }),
  };
  const rawCode = typeof e.Code === 'string' ? e.Code : typeof e.name === 'string' ? e.name : undefined;
  // Errors from the SDK's own HTTP layer (refused, reset, timed out): no HTTP status and no modelled fault.
  const sysCode = typeof e.code === 'string' ? e.code : undefined;
  if (status === undefined && (e.$fault === undefined || (sysCode !== undefined && TRANSPORT.has(sysCode)))) {
    return eniError(
      'Ec2Transport',
      `${action}: no response from EC2 (${sysCode ?? rawCode}): ${message}`,
      base,
    );
  }
  if (rawCode === undefined || rawCode === 'Unknown' || rawCode === 'Error') {
    if (status !== undefined && status >= 500)
      return eniError('Unavailable', `${action}: HTTP ${status}`, base);
    return eniError('Ec2Unknown', `${action}: unrecognised EC2 error: ${message}`, base);
  }
  const code = ALIASES[rawCode] ?? rawCode;
  if (code === 'UnauthorizedOperation') {
    return eniError('UnauthorizedOperation', `${action}: IAM does not allow ec2:${action}`, {
      ...base,
      iamAction: `ec2:${action}`,
    });
  }
  if (
    isEniErrorCode(code) &&
    errorCodeInfo[code].source === 'ec2' &&
    code !== 'Ec2Unknown' &&
    code !== 'Ec2Transport' &&
    code !== 'Ec2InvalidResponse'
  )
    return eniError(code, `${action}: ${code}: ${message}`, base);
  if (status !== undefined && status >= 500) {
    return eniError('Unavailable', `${action}: ${rawCode} (HTTP ${status})`, { ...base, awsCode: rawCode });
  }
  return eniError('Ec2Unknown', `${action}: ${rawCode}: ${message}`, { ...base, awsCode: rawCode });
}
