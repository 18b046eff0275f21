import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import {
  admitCreate,
  MUTATING_WEBHOOK_STORAGE_KEY,
  VALIDATING_WEBHOOK_STORAGE_KEY,
  validate,
  validationApplies,
  type WebhookServiceResolver,
} from './admission.js';
import { asRecord } from './builtin-types.js';
import { renderKubeconfig } from './kubeconfig.js';
import { ObjectApi } from './object-api.js';
import type { KubeObject } from './resource-type.js';
import { createRouter, DEFAULT_MAX_BODY_BYTES } from './router.js';
import { KubeApiError, notFound } from './status.js';
import { ObjectStore, type StoreSnapshot } from './store.js';
import { selfSignedCertificate, type TlsMaterial } from './tls.js';
import { TokenRegistry, type TokenSnapshot } from './tokens.js';
import { CRD_STORAGE_KEY, TypeRegistry } from './type-registry.js';
import { nodeTimers, WatchHub, type WatchTimers } from './watch-hub.js';

/** A whole simulator state: objects, resourceVersion and tokens (plain JSON). */
export interface KubeSimSnapshot {
  /** Objects and resourceVersion. */
  readonly store: StoreSnapshot;
  /** Admin and ServiceAccount tokens. */
  readonly tokens: TokenSnapshot;
}

/** Options of {@link startKubeSimulator}. */
export interface KubeSimOptions {
  /** Listen address (default 127.0.0.1). */
  readonly host?: string;
  /** Port (default 0 = any free port). */
  readonly port?: number;
  /**
   * https with this certificate, `true` (the default) for a fresh self-signed one (needs `openssl`), or `false`
   * for plain http. kubectl sends bearer tokens only over https, and client-node talks plain http only when the
   * kubeconfig says `insecure-skip-tls-verify` (which the simulator's http kubeconfig does).
   */
  readonly tls?: boolean | TlsMaterial;
  /** State to start from (e.g. a snapshot taken before a restart). */
  readonly snapshot?: KubeSimSnapshot;
  /** Changes kept for watch resumption; older resourceVersions get 410 Expired (default 2000). */
  readonly historySize?: number;
  /** BOOKMARK interval for watches that allow them (default 5000 ms). */
  readonly bookmarkIntervalMs?: number;
  /** Request body limit (default 3 MiB, as the real server). */
  readonly maxBodyBytes?: number;
  /** Time source for timestamps (default `Date.now`). */
  readonly now?: () => number;
  /** Timers for watch bookmarks and timeouts. */
  readonly timers?: WatchTimers;
  /**
   * Where admission webhooks given as `clientConfig.service` are reached (the simulator has no cluster network);
   * unresolved Services are unreachable. `clientConfig.url` webhooks are called at their URL.
   */
  readonly resolveWebhookService?: WebhookServiceResolver;
}

/** One answered request. */
export interface RequestRecord {
  /** HTTP method. */
  readonly method: string;
  /** Path and query. */
  readonly url: string;
  /** HTTP status sent (200 for a watch, whatever its events). */
  readonly status: number;
}

/** Faults a test can inject. */
export interface KubeSimFaults {
  /** Ends every open watch stream (clients resume from their last resourceVersion). Returns how many. */
  dropWatches(): number;
  /** Forgets the change history: resuming a watch from any earlier resourceVersion gets 410 Expired. */
  expireHistory(): void;
  /** While true, every request is answered 503 ServiceUnavailable. */
  setUnavailable(on: boolean): void;
}

/** A running simulator. */
export interface KubeSimulator {
  /** Base URL (`http://127.0.0.1:PORT` or `https://…`). */
  readonly url: string;
  /** Bound port. */
  readonly port: number;
  /** PEM CA certificate clients must trust (https only). */
  readonly caPem: string | undefined;
  /** The certificate and key served (https only): pass them as `tls` to restart with the same identity. */
  readonly tls: TlsMaterial | undefined;
  /** The last requests answered (at most 10 000), oldest first. */
  readonly requests: readonly RequestRecord[];
  /** Watch streams open now (a client that stopped watching has closed its stream). */
  readonly openWatches: number;
  /** Client connections open now, kept-alive idle ones included (a client that closed its agent has none). */
  readonly openConnections: number;
  /** The administrator token (`system:masters`). */
  readonly adminToken: string;
  /** Direct access to the object semantics (no authentication), for seeding and assertions. */
  readonly objects: KubeSimObjects;
  /** Fault injection. */
  readonly faults: KubeSimFaults;
  /** A kubeconfig (YAML) for the admin, or for `token`. */
  kubeconfig(options?: { token?: string; namespace?: string; name?: string }): string;
  /**
   * Mints a bearer token for an existing ServiceAccount (404 when it does not exist). The token stops working
   * when the ServiceAccount is deleted or recreated.
   */
  mintServiceAccountToken(namespace: string, name: string): string;
  /** A deep copy of the state (restore it with the `snapshot` option). */
  snapshot(): KubeSimSnapshot;
  /** Stops listening and closes every connection; state is kept and {@link resume} serves it again. */
  suspend(): Promise<void>;
  /** Listens again on the same address and port after {@link suspend}. */
  resume(): Promise<void>;
  /** Stops the server for good. */
  close(): Promise<void>;
}

/** Object operations without HTTP (the admin's view), addressed by apiVersion and plural. */
export interface KubeSimObjects {
  /** Creates an object; returns it as stored. */
  create(apiVersion: string, plural: string, obj: KubeObject): KubeObject;
  /** Reads an object, or undefined. */
  get(apiVersion: string, plural: string, name: string, namespace?: string): KubeObject | undefined;
  /** Lists objects (all namespaces when `namespace` is undefined). */
  list(apiVersion: string, plural: string, namespace?: string): KubeObject[];
  /** Applies a JSON merge patch to an object, or to its status (`subresource` = `status`). */
  patch(
    apiVersion: string,
    plural: string,
    name: string,
    patch: unknown,
    namespace?: string,
    subresource?: '' | 'status',
  ): KubeObject;
  /** Deletes an object. */
  delete(apiVersion: string, plural: string, name: string, namespace?: string): void;
}

const MAX_REQUEST_LOG = 10_000;
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function splitApiVersion(apiVersion: string): [string, string] {
  const i = apiVersion.indexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/**
 * Starts a Kubernetes API server simulator over HTTP(S). Default namespaces exist, each namespace gets its
 * `default` ServiceAccount (as the ServiceAccount controller does), CRDs are served as soon as they are created.
 */
export async function startKubeSimulator(options: KubeSimOptions = {}): Promise<KubeSimulator> {
  const now = options.now ?? (() => Date.now());
  const store = new ObjectStore({ historySize: options.historySize ?? 2000 });
  const api = new ObjectApi(store, now);
  const types = new TypeRegistry();
  const watches = new WatchHub(api, options.timers ?? nodeTimers, options.bookmarkIntervalMs ?? 5000);
  const tokens = new TokenRegistry(options.snapshot?.tokens);
  api.setNamespacedKeys(() => [
    ...new Set(
      types
        .all()
        .filter((t) => t.namespaced)
        .map((t) => t.storageKey),
    ),
  ]);
  store.subscribe((c) => {
    if (c.storageKey === CRD_STORAGE_KEY) types.setCrds(store.list(CRD_STORAGE_KEY));
    if (c.storageKey === '/namespaces' && c.type === 'ADDED') {
      const ns = String(c.object.metadata?.name);
      queueMicrotask(() => {
        if (store.get('/namespaces', '', ns) && !store.get('/serviceaccounts', ns, 'default'))
          api.create(types.find('', 'v1', 'serviceaccounts')!, ns, { metadata: { name: 'default' } });
      });
    }
  });
  if (options.snapshot) {
    store.restore(options.snapshot.store);
    types.setCrds(store.list(CRD_STORAGE_KEY));
  } else {
    const nsType = types.find('', 'v1', 'namespaces')!;
    const saType = types.find('', 'v1', 'serviceaccounts')!;
    for (const ns of DEFAULT_NAMESPACES) api.create(nsType, '', { metadata: { name: ns } });
    await Promise.resolve();
    for (const ns of DEFAULT_NAMESPACES)
      if (!store.get('/serviceaccounts', ns, 'default'))
        api.create(saType, ns, { metadata: { name: 'default' } });
  }

  const tlsOption = options.tls ?? true;
  const tls: TlsMaterial | undefined =
    tlsOption === true
      ? await selfSignedCertificate(options.host && options.host !== '127.0.0.1' ? [options.host] : [])
      : tlsOption === false
        ? undefined
        : tlsOption;
  let unavailable = false;
  const requests: RequestRecord[] = [];
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? 0;
  // Webhook calls reuse their connections, as the API server's do (closed with the simulator).
  const webhookAgent = new HttpsAgent({ keepAlive: true, maxSockets: 32 });
  const admissionDeps = (storageKey: string) => ({
    configurations: () => store.list(storageKey),
    namespaceLabels: (name: string) => {
      const ns = store.get('/namespaces', '', name);
      return ns ? ((asRecord(ns.metadata?.labels) ?? {}) as Record<string, string>) : undefined;
    },
    resolveService: options.resolveWebhookService,
    agent: webhookAgent,
  });
  const router = createRouter({
    api,
    types,
    watches,
    tokens,
    rbac: { list: (resource, namespace) => store.list(`rbac.authorization.k8s.io/${resource}`, namespace) },
    serverAddress: () => `${host}:${port}`,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    unavailable: () => unavailable,
    admitCreate: (input) => admitCreate(admissionDeps(MUTATING_WEBHOOK_STORAGE_KEY), input),
    validate: (input) => validate(admissionDeps(VALIDATING_WEBHOOK_STORAGE_KEY), input),
    validates: (t, operation) => validationApplies(store.list(VALIDATING_WEBHOOK_STORAGE_KEY), t, operation),
    onRequest: (method, url, status) => {
      requests.push({ method, url, status });
      if (requests.length > MAX_REQUEST_LOG) requests.splice(0, requests.length - MAX_REQUEST_LOG);
    },
  });
  const server: Server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key }, router)
    : createHttpServer(router);
  server.keepAliveTimeout = 30_000;
  const sockets = new Set<Socket>();
  // TCP connections alone (over TLS, `sockets` also holds each connection's TLS socket).
  const connections = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    connections.add(s);
    s.on('close', () => {
      sockets.delete(s);
      connections.delete(s);
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      watches.dropAll();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  await listen();
  const scheme = tls ? 'https' : 'http';
  const hostInUrl = host.includes(':') ? `[${host}]` : host;

  const typeFor = (apiVersion: string, plural: string) => {
    const [group, version] = splitApiVersion(apiVersion);
    const t = types.find(group, version, plural);
    if (!t)
      throw new KubeApiError(
        404,
        'NotFound',
        `the server could not find the requested resource (${apiVersion} ${plural})`,
      );
    return t;
  };
  const objects: KubeSimObjects = {
    create: (apiVersion, plural, obj) => {
      const t = typeFor(apiVersion, plural);
      return api.create(t, String(obj.metadata?.namespace ?? ''), obj).object;
    },
    get: (apiVersion, plural, name, namespace = '') => {
      const t = typeFor(apiVersion, plural);
      const o = store.get(t.storageKey, t.namespaced ? namespace : '', name);
      return o ? api.served(t, o) : undefined;
    },
    list: (apiVersion, plural, namespace) => {
      const t = typeFor(apiVersion, plural);
      return api.list(t, namespace, {}).items as KubeObject[];
    },
    patch: (apiVersion, plural, name, patch, namespace = '', subresource = '') =>
      api.patch(typeFor(apiVersion, plural), namespace, name, 'merge', patch, subresource).object,
    delete: (apiVersion, plural, name, namespace = '') => {
      api.delete(typeFor(apiVersion, plural), namespace, name, undefined);
    },
  };

  let closed = false;
  const sim: KubeSimulator = {
    get url() {
      return `${scheme}://${hostInUrl}:${port}`;
    },
    get port() {
      return port;
    },
    caPem: tls?.cert,
    tls,
    requests,
    get openWatches() {
      return watches.size;
    },
    get openConnections() {
      return connections.size;
    },
    adminToken: tokens.adminToken,
    objects,
    faults: {
      dropWatches: () => watches.dropAll(),
      expireHistory: () => store.compact(),
      setUnavailable: (on) => {
        unavailable = on;
      },
    },
    kubeconfig(o = {}) {
      return renderKubeconfig({
        server: sim.url,
        token: o.token ?? tokens.adminToken,
        ...(tls ? { caPem: tls.cert } : { insecure: true }),
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.name ? { name: o.name } : {}),
      });
    },
    mintServiceAccountToken(namespace, name) {
      const sa = store.get('/serviceaccounts', namespace, name);
      if (!sa) throw notFound({ group: '', resource: 'serviceaccounts' }, name);
      return tokens.mint({ namespace, name, uid: String(sa.metadata?.uid) });
    },
    snapshot: () => ({ store: store.snapshot(), tokens: tokens.snapshot() }),
    suspend: () => stopListening(),
    resume: () => listen(),
    async close() {
      if (closed) return;
      closed = true;
      webhookAgent.destroy();
      if (server.listening) await stopListening();
    },
  };
  return sim;
}
