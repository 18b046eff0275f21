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

/**
 * Connects to the API server named by a kubeconfig file, or, without one, in-cluster (the ServiceAccount token,
 * the cluster CA and `KUBERNETES_SERVICE_HOST`/`_PORT`, read by client-node).
 */
export function kubeApis(kubeconfigPath: string | undefined): KubeApis {
  const config = new KubeConfig();
  if (kubeconfigPath === undefined) config.loadFromCluster();
  else config.loadFromFile(kubeconfigPath);
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    coordination: config.makeApiClient(CoordinationV1Api),
  };
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
