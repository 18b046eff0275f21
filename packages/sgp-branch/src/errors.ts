/**
 * Every code an {@link SgpError} can carry (a closed set). The first eight are the causes the reference
 * reports as one opaque "failed to assign an IP address to container"; each has its own code and hint here:
 * - `VERSION_MISMATCH`: the CNI plugin and the daemon speak different versions of the branch contract;
 * - `POD_NOT_FOUND`: the pod is not (or no longer) known to the API server;
 * - `ANNOTATION_MISSING`: the pod exists but carries no `vpc.amazonaws.com/pod-eni` annotation yet;
 * - `ANNOTATION_INVALID`: the annotation is there but does not parse or a field is out of shape;
 * - `NO_TRUNK`: the node has no trunk ENI;
 * - `TRUNK_LINK_NOT_FOUND`: the trunk ENI exists in EC2 but no host link carries its MAC;
 * - `BRANCH_LIMIT_REACHED`: every VLAN id of the trunk is in use (or cooling down);
 * - `INSTANCE_NOT_TRUNKABLE`: the instance type cannot carry a trunk ENI (no branch interfaces);
 *
 * and, for the package's own entry points:
 * - `INVALID_ARGUMENT`: input was rejected before anything changed;
 * - `CLOUD`: a port (EC2, Kubernetes) failed; {@link SgpError.cause} holds its error;
 * - `KERNEL`: a netlink request on the node failed; {@link SgpError.cause} holds its error.
 */
export type SgpErrorCode =
  | 'VERSION_MISMATCH'
  | 'POD_NOT_FOUND'
  | 'ANNOTATION_MISSING'
  | 'ANNOTATION_INVALID'
  | 'NO_TRUNK'
  | 'TRUNK_LINK_NOT_FOUND'
  | 'BRANCH_LIMIT_REACHED'
  | 'INSTANCE_NOT_TRUNKABLE'
  | 'INVALID_ARGUMENT'
  | 'CLOUD'
  | 'KERNEL';

/** The operator-facing hint of each code: what to check, in one line. */
export const SGP_ERROR_HINTS: Readonly<Record<SgpErrorCode, string>> = {
  VERSION_MISMATCH:
    'the aws-cni plugin and the aws-node daemon differ in version: roll the DaemonSet so both match',
  POD_NOT_FOUND: 'the API server does not know this pod: it was deleted, or the daemon cannot reach the API',
  ANNOTATION_MISSING:
    'the VPC resource controller has not annotated this pod yet: check that it runs and that the pod requests vpc.amazonaws.com/pod-eni',
  ANNOTATION_INVALID:
    'the vpc.amazonaws.com/pod-eni annotation is malformed: check the VPC resource controller version',
  NO_TRUNK:
    'this node has no trunk ENI: check ENABLE_POD_ENI=true, the CNINode feature SecurityGroupsForPods and a free ENI slot',
  TRUNK_LINK_NOT_FOUND:
    'the trunk ENI is attached in EC2 but no interface on the node has its MAC yet: retry shortly',
  BRANCH_LIMIT_REACHED:
    "the node's trunk has no free branch (VLAN) left: schedule the pod elsewhere or wait for branch ENIs to cool down",
  INSTANCE_NOT_TRUNKABLE:
    'this instance type cannot carry a trunk ENI: use a Nitro type that supports security groups for pods',
  INVALID_ARGUMENT: 'the input was rejected before anything changed',
  CLOUD: 'a call to EC2 or the Kubernetes API failed: see the cause',
  KERNEL: 'the kernel refused a branch link or route: see the cause (errno)',
};

const BRAND = Symbol.for('@vpc-cni-kit/sgp-branch.SgpError');

/** Fields of an {@link SgpError}. */
export interface SgpErrorInit {
  /** The stable code. */
  code: SgpErrorCode;
  /** What was being done, e.g. `parsePodEniAnnotation`, `reconcileBranches`. */
  op: string;
  /** Human-readable detail. Never match on it. */
  detail?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The one error type this package throws. Its message is one line: `<op>: <CODE> <detail> (hint: …)`.
 * Branch on {@link SgpError.code} with {@link isSgpError}.
 */
export class SgpError extends Error {
  /** The stable code. */
  readonly code: SgpErrorCode;
  /** The operation. */
  readonly op: string;
  /** The detail alone (no code, no hint). */
  readonly detail: string | undefined;
  /** The operator hint for {@link SgpError.code}. */
  readonly hint: string;
  /** Marks instances across duplicated module copies (ESM and CJS builds). */
  readonly [BRAND] = true;

  constructor(init: SgpErrorInit) {
    const hint = SGP_ERROR_HINTS[init.code];
    const head = init.detail ? `${init.op}: ${init.code} ${init.detail}` : `${init.op}: ${init.code}`;
    super(`${head} (hint: ${hint})`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SgpError';
    this.code = init.code;
    this.op = init.op;
    this.detail = init.detail;
    this.hint = hint;
  }
}

/** True when `value` is an {@link SgpError} (from any copy of this package), optionally with one of `codes`. */
export function isSgpError(value: unknown, ...codes: SgpErrorCode[]): value is SgpError {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as Record<symbol, unknown>)[BRAND] !== true) return false;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && (codes.length === 0 || codes.includes(code as SgpErrorCode));
}

/** Builds an `INVALID_ARGUMENT` error. @internal */
export function invalidArgument(op: string, detail: string): SgpError {
  return new SgpError({ code: 'INVALID_ARGUMENT', op, detail });
}
