/**
 * Security groups for pods: how each cause `@vpc-cni-kit/sgp-branch` tells apart travels from the daemon to the
 * runtime. The daemon puts the {@link AddFailure} in the AddNetwork reply (extension 1004); the plugin turns it
 * into its own CNI error code (plugin-specific codes start at 100) and a message that names the cause; the
 * daemon also writes it as a Warning Event on the pod (reason `PodEni<Cause>`). The reference answers all of them
 * with one "failed to assign an IP address to container".
 */
import type { SgpErrorCode } from '@vpc-cni-kit/sgp-branch';
import { type AddFailure, AddFailureCode } from './messages.js';

/** The causes that reach a pod (the package's own INVALID_ARGUMENT, CLOUD and KERNEL do not: they are plumbing failures). */
export type BranchCause = Exclude<SgpErrorCode, 'INVALID_ARGUMENT' | 'CLOUD' | 'KERNEL'>;

/** One row of {@link BRANCH_FAILURES}. */
export interface BranchFailure {
  /** The AddNetwork reply's failure code (`undefined` for VERSION_MISMATCH, a gRPC FAILED_PRECONDITION). */
  readonly failure: AddFailure | undefined;
  /** The CNI error code the plugin reports. */
  readonly cniCode: number;
  /** The CNI error message (`msg`); the details carry the daemon's message and hint. */
  readonly message: string;
  /** The reason of the Warning Event the daemon writes on the pod. */
  readonly eventReason: string;
}

/** Every cause, its reply failure code, CNI code and message. */
export const BRANCH_FAILURES: Readonly<Record<BranchCause, BranchFailure>> = {
  VERSION_MISMATCH: {
    failure: undefined,
    cniCode: 120,
    message: 'the aws-cni plugin and aws-node differ in version: roll the DaemonSet so both match',
    eventReason: 'PodEniVersionMismatch',
  },
  POD_NOT_FOUND: {
    failure: AddFailureCode.PodEniPodNotFound,
    cniCode: 121,
    message: 'security groups for pods: aws-node cannot read the pod from the Kubernetes API',
    eventReason: 'PodEniPodNotFound',
  },
  ANNOTATION_MISSING: {
    failure: AddFailureCode.PodEniAnnotationMissing,
    cniCode: 122,
    message:
      'security groups for pods: the pod has no vpc.amazonaws.com/pod-eni annotation yet (is the VPC resource controller running?)',
    eventReason: 'PodEniAnnotationMissing',
  },
  ANNOTATION_INVALID: {
    failure: AddFailureCode.PodEniAnnotationInvalid,
    cniCode: 123,
    message: 'security groups for pods: the vpc.amazonaws.com/pod-eni annotation is malformed',
    eventReason: 'PodEniAnnotationInvalid',
  },
  NO_TRUNK: {
    failure: AddFailureCode.PodEniNoTrunk,
    cniCode: 124,
    message: 'security groups for pods: this node has no trunk ENI',
    eventReason: 'PodEniNoTrunk',
  },
  TRUNK_LINK_NOT_FOUND: {
    failure: AddFailureCode.PodEniTrunkLinkNotFound,
    cniCode: 125,
    message: "security groups for pods: no interface on the node carries the trunk ENI's MAC",
    eventReason: 'PodEniTrunkLinkNotFound',
  },
  BRANCH_LIMIT_REACHED: {
    failure: AddFailureCode.PodEniBranchLimitReached,
    cniCode: 126,
    message: "security groups for pods: the node's trunk has no free branch ENI left",
    eventReason: 'PodEniBranchLimitReached',
  },
  INSTANCE_NOT_TRUNKABLE: {
    failure: AddFailureCode.PodEniInstanceNotTrunkable,
    cniCode: 127,
    message: 'security groups for pods: this instance type cannot carry a trunk ENI',
    eventReason: 'PodEniInstanceNotTrunkable',
  },
};

/** The cause of a reply failure code, when it is a branch one. */
export function branchCauseOf(failure: string): BranchCause | undefined {
  for (const [cause, row] of Object.entries(BRANCH_FAILURES) as [BranchCause, BranchFailure][])
    if (row.failure === failure) return cause;
  return undefined;
}
