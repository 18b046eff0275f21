/**
 * Why no Kubernetes configuration could be loaded: `NotInCluster` (no kubeconfig, and no
 * `KUBERNETES_SERVICE_HOST`/`_PORT`), `ServiceAccountMissing` (in a pod, but no token or `ca.crt` mounted),
 * `ServiceAccountUnreadable` (the token or `ca.crt` is there but is not a regular file, a FIFO for example, or
 * cannot be read), `KubeconfigUnreadable` (a kubeconfig file cannot be read or parsed, or the files name no
 * cluster).
 */
export type KubeConfigErrorCode =
  | 'NotInCluster'
  | 'ServiceAccountMissing'
  | 'ServiceAccountUnreadable'
  | 'KubeconfigUnreadable';

/** The Kubernetes configuration could not be loaded; nothing was contacted. */
export class KubeConfigError extends Error {
  /** Discriminator. */
  readonly kind = 'KubeConfigError' as const;
  /**
   * @param code - what is missing
   * @param message - one line naming it (for an unreadable file: `<file>: <why>`)
   */
  constructor(
    readonly code: KubeConfigErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KubeConfigError';
  }
}
