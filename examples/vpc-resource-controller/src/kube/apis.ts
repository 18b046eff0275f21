import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { KubeConfigError } from './config-error.js';
import type { CredentialFileFailure, CredentialRefresh } from './credential-file.js';
import { FileSafeKubeConfig } from './file-safe-kube-config.js';
import { loadKubeconfigFiles } from './kubeconfig.js';

export { KubeConfigError, type KubeConfigErrorCode } from './config-error.js';

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

/** Where the in-cluster configuration is read: the pod's environment and its ServiceAccount mount. */
export interface InClusterSource {
  /** `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are read from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The token and `ca.crt` directory. @defaultValue {@link SERVICE_ACCOUNT_DIR} */
  readonly serviceAccountDir?: string | undefined;
}

/**
 * Connects to the API server named by kubeconfig files, or, without any, in-cluster (`KUBERNETES_SERVICE_HOST`
 * and `_PORT` from `inCluster.env`, the ServiceAccount token and cluster CA from its directory). `kubeconfig` is
 * one file (`--kubeconfig`) or a list merged as kubectl merges a `KUBECONFIG` list ({@link loadKubeconfigFiles});
 * an empty list is none. Throws a {@link KubeConfigError} when the configuration is missing or unreadable, naming
 * the file; it contacts nothing.
 *
 * Every credential file (the token, the CA, a kubeconfig's client certificate and key) is read by the controller,
 * only as a regular file, at once and then every `credentials.refreshMs` (the kubelet rotates the token): the
 * client never reads one itself ({@link FileSafeKubeConfig}). A re-read that finds no regular file keeps the
 * content read before and is told to `credentials.onEvent`.
 */
export function kubeApis(
  kubeconfig: string | readonly string[] | undefined,
  inCluster: InClusterSource = { env: process.env },
  credentials: CredentialRefresh = {},
): KubeApis {
  const files = typeof kubeconfig === 'string' ? [kubeconfig] : (kubeconfig ?? []);
  const config =
    files.length === 0 ? loadInCluster(inCluster, credentials) : loadKubeconfigFiles(files, credentials);
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    coordination: config.makeApiClient(CoordinationV1Api),
  };
}

function loadInCluster(source: InClusterSource, credentials: CredentialRefresh): FileSafeKubeConfig {
  const host = source.env['KUBERNETES_SERVICE_HOST'];
  const port = source.env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port)
    throw new KubeConfigError(
      'NotInCluster',
      'not in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set)',
    );
  const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const config = new FileSafeKubeConfig(credentials);
  config.loadFromClusterAndUser(
    {
      name: 'inCluster',
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      caFile: join(dir, 'ca.crt'),
      skipTLSVerify: false,
    },
    { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } },
  );
  // Each read here, and only a regular file: a FIFO in their place would otherwise hold the process for ever.
  const name = (f: CredentialFileFailure) => (f.role === 'token' ? 'token' : 'ca.crt');
  const order = ['token', 'ca.crt'];
  const failures = config
    .readCredentialFiles()
    .sort((a, b) => order.indexOf(name(a)) - order.indexOf(name(b)));
  const unreadable = failures.find((f) => f.code !== 'Missing');
  if (unreadable !== undefined)
    throw new KubeConfigError(
      'ServiceAccountUnreadable',
      unreadable.code === 'NotRegularFile'
        ? `ServiceAccount ${name(unreadable)} ${unreadable.path} is a ${unreadable.fileType}, not a regular file`
        : `ServiceAccount ${name(unreadable)} ${unreadable.path} cannot be read (${unreadable.errno ?? unreadable.message})`,
    );
  if (failures.length > 0)
    throw new KubeConfigError(
      'ServiceAccountMissing',
      `ServiceAccount ${failures.map(name).join(' and ')} missing in ${dir}`,
    );
  return config;
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
