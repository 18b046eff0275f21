import { accessSync, constants } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

/** The Kubernetes API clients the controller uses (`@kubernetes/client-node` 1.4, bundled: ADR 0014). */
export interface KubeApis {
  /** The loaded configuration (informers need it). */
  readonly config: KubeConfig;
  /** Pods, nodes, service accounts, events. */
  readonly core: CoreV1Api;
  /** SecurityGroupPolicies and CNINodes. */
  readonly custom: CustomObjectsApi;
  /** Leases. */
  readonly coordination: CoordinationV1Api;
}

/** Where a pod's ServiceAccount token, cluster CA and namespace are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Why no Kubernetes configuration could be loaded: `NotInCluster` (no kubeconfig, and no
 * `KUBERNETES_SERVICE_HOST`/`_PORT`), `ServiceAccountMissing` (in a pod, but no token or `ca.crt` mounted),
 * `KubeconfigUnreadable` (the kubeconfig file cannot be read, parsed, or names no cluster).
 */
export type KubeConfigErrorCode = 'NotInCluster' | 'ServiceAccountMissing' | 'KubeconfigUnreadable';

/** The Kubernetes configuration could not be loaded; nothing was contacted. */
export class KubeConfigError extends Error {
  /** Discriminator. */
  readonly kind = 'KubeConfigError' as const;
  /**
   * @param code - what is missing
   * @param message - one line naming it
   */
  constructor(
    readonly code: KubeConfigErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

/** Where the in-cluster configuration is read: the pod's environment and its ServiceAccount mount. */
export interface InClusterSource {
  /** `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are read from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The token and `ca.crt` directory. @defaultValue {@link SERVICE_ACCOUNT_DIR} */
  readonly serviceAccountDir?: string | undefined;
}

/**
 * Connects to the API server named by a kubeconfig file, or, without one, in-cluster (`KUBERNETES_SERVICE_HOST`
 * and `_PORT` from `inCluster.env`, the ServiceAccount token and cluster CA from its directory; the token is
 * re-read as it rotates). Throws a {@link KubeConfigError} when the configuration is missing or unreadable; it
 * contacts nothing.
 */
export function kubeApis(
  kubeconfigPath: string | undefined,
  inCluster: InClusterSource = { env: process.env },
): KubeApis {
  const config = new KubeConfig();
  if (kubeconfigPath === undefined) loadInCluster(config, inCluster);
  else {
    try {
      config.loadFromFile(kubeconfigPath);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
      throw new KubeConfigError('KubeconfigUnreadable', `${kubeconfigPath}: ${why.split('\n')[0]}`);
    }
    if (!config.getCurrentCluster()?.server)
      throw new KubeConfigError(
        'KubeconfigUnreadable',
        `${kubeconfigPath}: its current context names no cluster with a server`,
      );
  }
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    coordination: config.makeApiClient(CoordinationV1Api),
  };
}

function loadInCluster(config: KubeConfig, source: InClusterSource): void {
  const host = source.env['KUBERNETES_SERVICE_HOST'];
  const port = source.env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port)
    throw new KubeConfigError(
      'NotInCluster',
      'not in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set)',
    );
  const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const missing = ['token', 'ca.crt'].filter((f) => {
    try {
      accessSync(join(dir, f), constants.R_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0)
    throw new KubeConfigError(
      'ServiceAccountMissing',
      `ServiceAccount ${missing.join(' and ')} missing in ${dir}`,
    );
  config.loadFromClusterAndUser(
    {
      name: 'inCluster',
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      caFile: join(dir, 'ca.crt'),
      skipTLSVerify: false,
    },
    { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } },
  );
}

/** Request options sending a body as a JSON patch (RFC 6902). */
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
/** Request options sending a body as a JSON merge patch (RFC 7386). */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The HTTP status of a failed client-node call (`ApiException.code`), or 0 when there was no answer. */
export function httpStatus(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : 0;
}

/** A one-line description of a failed API call, without the response body's bulk. */
export function describeKubeError(error: unknown): string {
  const status = httpStatus(error);
  const body = (error as { body?: unknown } | null)?.body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      message = body.slice(0, 200);
    }
  } else if (
    body !== null &&
    typeof body === 'object' &&
    typeof (body as { message?: unknown }).message === 'string'
  ) {
    message = (body as { message: string }).message;
  }
  const base = message ?? (error instanceof Error ? error.message.split('\n')[0] : String(error));
  return status === 0 ? (base ?? 'no answer') : `HTTP ${status}: ${base}`;
}
