/**
 * The Kubernetes API as the daemon uses it: a handful of calls, so the features built on it (CNINode, Events,
 * pod annotations) are plain functions of this port and testable against kube-simulator.
 */

/** A JSON object from the API. */
export type KubeObject = Record<string, unknown> & {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    annotations?: Record<string, string>;
  };
};

/** `v` when it is a JSON object (not null, not an array): how untrusted API answers are read field by field. */
export function jsonObject(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** What went wrong with an API call: an HTTP status from the server, or no answer at all. */
export type KubeCallErrorCode =
  | 'Unreachable'
  | 'NotFound'
  | 'Conflict'
  | 'AlreadyExists'
  | 'Forbidden'
  | 'Unauthorized'
  | 'Invalid'
  | 'Other';

/** A failed API call. */
export class KubeCallError extends Error {
  /** Discriminator. */
  readonly kind = 'KubeCallError' as const;
  /**
   * @param code - classification
   * @param status - HTTP status (0 when unreachable)
   * @param message - the Status message or the transport error
   */
  constructor(
    readonly code: KubeCallErrorCode,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeCallError';
  }
}

/** Whether `e` is a {@link KubeCallError} with one of `codes`. */
export function isKubeCallError(e: unknown, ...codes: KubeCallErrorCode[]): e is KubeCallError {
  return e instanceof KubeCallError && (codes.length === 0 || codes.includes(e.code));
}

/** Maps an HTTP status (and Status reason) to a {@link KubeCallErrorCode}. */
export function classifyStatus(status: number, reason: string | undefined): KubeCallErrorCode {
  if (status === 404) return 'NotFound';
  if (status === 409) return reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
  if (status === 403) return 'Forbidden';
  if (status === 401) return 'Unauthorized';
  if (status === 422) return 'Invalid';
  if (status === 0 || status === 502 || status === 503 || status === 504) return 'Unreachable';
  return 'Other';
}

/** A cluster-scoped custom resource (group, version, plural). */
export interface CustomResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** The calls the daemon makes. Implementations throw {@link KubeCallError}. */
export interface KubeApi {
  /** GET a Node. */
  getNode(name: string): Promise<KubeObject>;
  /** GET a cluster-scoped custom object. */
  getClusterObject(r: CustomResource, name: string): Promise<KubeObject>;
  /** POST a cluster-scoped custom object. */
  createClusterObject(r: CustomResource, body: KubeObject): Promise<KubeObject>;
  /** JSON merge patch of a cluster-scoped custom object (a `metadata.resourceVersion` in it makes it conditional). */
  mergePatchClusterObject(r: CustomResource, name: string, patch: unknown): Promise<KubeObject>;
  /** JSON merge patch of a Pod (a `metadata.resourceVersion` in it makes it conditional). */
  mergePatchPod(namespace: string, name: string, patch: unknown): Promise<KubeObject>;
  /** RFC 6902 JSON patch of a Pod (a failing `test` operation is a 422 Invalid). */
  jsonPatchPod(namespace: string, name: string, ops: readonly unknown[]): Promise<KubeObject>;
  /** GET a Pod. */
  getPod(namespace: string, name: string): Promise<KubeObject>;
  /** POST an events.k8s.io/v1 Event. */
  createEvent(namespace: string, body: KubeObject): Promise<KubeObject>;
}

/** Options of one {@link PodWatchApi.watchNodePods} stream. */
export interface WatchStreamOptions {
  /** Where the stream resumes: the resourceVersion of the last LIST, event or bookmark seen. */
  readonly resourceVersion: string;
  /** The server ends the stream after this long; the client gives up a little later (never hangs). */
  readonly timeoutSeconds: number;
  /** Each line of the stream as it arrives (one JSON watch event per line; not parsed here). */
  readonly onLine: (line: string) => void;
  /** Ends the stream (the call then resolves). */
  readonly signal: AbortSignal;
}

/**
 * The calls the pod watch makes: a LIST of the pods bound to one node and a WATCH from its resourceVersion
 * (field selector `spec.nodeName`, as the reference's informer cache of pods). Kept apart from {@link KubeApi}
 * because a watch holds its connection for minutes: it gets connections of its own. Implementations throw
 * {@link KubeCallError}.
 */
export interface PodWatchApi {
  /** LIST the pods (all namespaces) whose `spec.nodeName` is `nodeName`: a `PodList`. */
  listNodePods(nodeName: string): Promise<KubeObject>;
  /**
   * WATCH the pods whose `spec.nodeName` is `nodeName` (bookmarks allowed). Resolves when the stream ends: the
   * server closed it, it broke after it was opened, `timeoutSeconds` passed with some grace, or `signal`
   * aborted it. Rejects when it could not be opened (no answer within the request timeout, or a non-2xx
   * status).
   */
  watchNodePods(nodeName: string, options: WatchStreamOptions): Promise<void>;
  /** Closes every connection (kept-alive ones included). */
  close(): void;
}
