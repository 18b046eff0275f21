/**
 * One line for an operator when `aws-node` or `aws-vpc-cni-init` cannot start: what failed and what to do,
 * never a stack trace. The cases an operator meets first off a real node get a hint: IMDS unreachable (not
 * on EC2, or blocked), IMDS refusing a session token (the hop limit), and a log file that cannot be written.
 */
import { type EniManagerError, isEniManagerError } from '@vpc-cni-kit/eni-manager';
import { LogFileError } from '../daemon/logger.js';

/** The IMDS address used when `AWS_EC2_METADATA_SERVICE_ENDPOINT` is not set. */
export const DEFAULT_IMDS_ENDPOINT = 'http://169.254.169.254';

/** Describes a start-up failure in one line (without the program name). */
export function describeStartFailure(error: unknown, context: { imdsEndpoint: string | undefined }): string {
  const imds = context.imdsEndpoint ?? DEFAULT_IMDS_ENDPOINT;
  if (error instanceof LogFileError) {
    return `${error.message}: set AWS_VPC_K8S_CNI_LOG_FILE to a writable path, or to stderr or stdout`;
  }
  if (isEniManagerError(error)) {
    if (error.code === 'ImdsUnavailable') {
      return (
        `cannot reach IMDS at ${imds} (${rootCause(error)}, ${error.attempts} attempts): not on EC2, or IMDS ` +
        'blocked? set AWS_EC2_METADATA_SERVICE_ENDPOINT to where instance metadata answers, or allow this ' +
        'node to reach 169.254.169.254'
      );
    }
    if (error.code === 'ImdsUnauthorized') {
      return (
        `IMDS at ${imds} refused a session token (${error.message}): IMDSv2 must be enabled, and from a ` +
        'container the instance needs a metadata hop limit of at least 2 (http-put-response-hop-limit)'
      );
    }
    return `failed to start: ${error.code}: ${error.message}`;
  }
  return `failed to start: ${error instanceof Error ? error.message : String(error)}`;
}

/** The innermost cause's message: what actually went wrong on the wire. */
function rootCause(error: EniManagerError): string {
  let e: unknown = error;
  for (let depth = 0; depth < 8; depth++) {
    const cause = (e as { cause?: unknown }).cause;
    if (cause === undefined || cause === null) break;
    e = cause;
  }
  return e instanceof Error ? e.message : String(e);
}
