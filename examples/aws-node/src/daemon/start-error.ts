/**
 * Why the daemon refused to start (each a stable code; the message is for the operator):
 * - `RestoreUnconfirmed`: a checkpointed pod that still exists holds an address neither IMDS nor EC2 lets the
 *   daemon place yet; starting would hand that address to another pod.
 * - `ListenFailed`: the gRPC socket or an HTTP endpoint could not be opened (its path is taken by something that
 *   is not a socket or by a live server, the socket cannot be created there, or the port is in use); found
 *   before the node is changed.
 * - `CniConfDirUnusable`: the CNI configuration directory (`HOST_CNI_CONFDIR_PATH`) cannot be created or
 *   written; found before the node is changed.
 * - `CheckpointInvalid`: the IPAM checkpoint (`AWS_VPC_K8S_CNI_BACKING_STORE`) cannot be read or restored;
 *   found before the node is changed.
 * - `KubeRequired`: custom networking or security groups for pods is on but there is no Kubernetes API to read
 *   ENIConfigs or pod annotations from.
 * - `InstanceNotTrunkable`: `ENABLE_POD_ENI=true` on an instance type that cannot carry a trunk ENI.
 * - `PrefixDelegationUnsupported`: `ENABLE_PREFIX_DELEGATION=true` on an instance type that is neither Nitro nor
 *   bare metal (EC2 delegates prefixes only there).
 * - `UnknownInstanceType`: IMDS-only mode on an instance type the shipped limits table does not list.
 * - `Ipv6SubnetMissing`: IPv6 mode, but the primary ENI's subnet has no IPv6 CIDR.
 * - `Ipv6PrefixMissing`: IPv6 mode, the primary ENI has no /80 and the daemon may not assign one.
 */
export type StartErrorCode =
  | 'RestoreUnconfirmed'
  | 'ListenFailed'
  | 'CheckpointInvalid'
  | 'CniConfDirUnusable'
  | 'KubeRequired'
  | 'PrefixDelegationUnsupported'
  | 'UnknownInstanceType'
  | 'InstanceNotTrunkable'
  | 'Ipv6SubnetMissing'
  | 'Ipv6PrefixMissing';

/** The daemon refused to start; everything it had opened is closed again. */
export class StartError extends Error {
  /** Discriminator for {@link isStartError}. */
  readonly kind = 'StartError' as const;

  /**
   * @param code - the stable reason
   * @param message - one line for the operator, with a hint
   * @param cause - the underlying error, when there is one
   */
  constructor(
    readonly code: StartErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'StartError';
  }
}

/** True when `e` is a {@link StartError} (optionally with one of `codes`). */
export function isStartError(e: unknown, ...codes: StartErrorCode[]): e is StartError {
  if (typeof e !== 'object' || e === null || (e as { kind?: unknown }).kind !== 'StartError') return false;
  return codes.length === 0 || codes.includes((e as StartError).code);
}
