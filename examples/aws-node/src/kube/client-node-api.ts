/**
 * The {@link KubeApi} port on `@kubernetes/client-node` 1.4. Loaded with `import()` once the daemon serves, so
 * the client's load cost is off the start-up path (the bundle puts it in its own chunk: ADR 0003).
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  Observable,
  type ObservableMiddleware,
  PatchStrategy,
  type RequestContext,
  type ResponseContext,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { InClusterTarget } from './in-cluster.js';
import {
  type CustomResource,
  classifyStatus,
  type KubeApi,
  KubeCallError,
  type KubeObject,
} from './kube-api.js';

function toCallError(e: unknown): KubeCallError {
  if (e instanceof ApiException) {
    let reason: string | undefined;
    let message = e.message;
    try {
      const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as {
        reason?: string;
        message?: string;
      };
      reason = status.reason;
      if (status.message) message = status.message;
    } catch {
      // not a Status body
    }
    return new KubeCallError(classifyStatus(e.code, reason), e.code, message);
  }
  return new KubeCallError('Unreachable', 0, e instanceof Error ? e.message : String(e));
}

async function call<T>(fn: () => Promise<T>): Promise<KubeObject> {
  try {
    return (await fn()) as unknown as KubeObject;
  } catch (e) {
    throw toCallError(e);
  }
}

/** Builds the client for an in-cluster target; each request has `timeoutMs` to answer. */
export function clientNodeApi(target: InClusterTarget, timeoutMs: number): KubeApi {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'in-cluster',
        server: target.server,
        caData: Buffer.from(target.caPem).toString('base64'),
        skipTLSVerify: false,
      },
    ],
    users: [
      { name: 'aws-node', authProvider: { name: 'tokenFile', config: { tokenFile: target.tokenFile } } },
    ],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'aws-node' }],
    currentContext: 'in-cluster',
  });
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const events = kc.makeApiClient(EventsV1Api);
  // client-node has no per-request timeout of its own: a middleware gives each request an abort signal.
  const timeout: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(ctx));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  const timed = { middleware: [timeout], middlewareMergeStrategy: 'append' as const };
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch, timed);
  const json = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, timed);
  return {
    getNode: (name) => call(() => core.readNode({ name }, timed)),
    getPod: (namespace, name) => call(() => core.readNamespacedPod({ namespace, name }, timed)),
    getClusterObject: (r: CustomResource, name) =>
      call(() => custom.getClusterCustomObject({ ...r, name }, timed)),
    createClusterObject: (r, body) => call(() => custom.createClusterCustomObject({ ...r, body }, timed)),
    mergePatchClusterObject: (r, name, patch) =>
      call(() => custom.patchClusterCustomObject({ ...r, name, body: patch as object }, merge)),
    jsonPatchPod: (namespace, name, ops) =>
      call(() => core.patchNamespacedPod({ namespace, name, body: ops as object }, json)),
    mergePatchPod: (namespace, name, patch) =>
      call(() => core.patchNamespacedPod({ namespace, name, body: patch as object }, merge)),
    createEvent: (namespace, body) =>
      call(() => events.createNamespacedEvent({ namespace, body: body as never }, timed)),
  };
}
