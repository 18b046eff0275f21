import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdmissionInput, AdmissionOperation, ValidationInput } from './admission.js';
import { asRecord } from './builtin-types.js';
import { refuseTooDeep } from './depth.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, SERVER_VERSION } from './discovery.js';
import type { FieldValidation, ObjectApi, WriteOptions, WriteResult } from './object-api.js';
import { PATCH_CONTENT_TYPES } from './patch.js';
import { authorize, forbidden, type RbacSource, type RequestAttributes, type UserInfo } from './rbac.js';
import { groupVersion, type KubeObject, type ResourceType } from './resource-type.js';
import {
  exactNameOf,
  type FieldRequirement,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';
import {
  badRequest,
  conflict,
  failureStatus,
  isKubeApiError,
  KubeApiError,
  notFound,
  unauthorized,
} from './status.js';
import { ADMIN_USER, serviceAccountUser, type TokenRegistry } from './tokens.js';
import type { TypeRegistry } from './type-registry.js';
import type { WatchHub } from './watch-hub.js';

/** The real API server's request body limit (3 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

/** What the router needs. */
export interface RouterDeps {
  /** Object semantics. */
  readonly api: ObjectApi;
  /** Served types. */
  readonly types: TypeRegistry;
  /** Watch fan-out. */
  readonly watches: WatchHub;
  /** Bearer tokens. */
  readonly tokens: TokenRegistry;
  /** RBAC objects. */
  readonly rbac: RbacSource;
  /** `host:port` for `/api`'s serverAddressByClientCIDRs. */
  readonly serverAddress: () => string;
  /** Request body limit. */
  readonly maxBodyBytes: number;
  /** When set, every request is answered 503 (a fault). */
  readonly unavailable: () => boolean;
  /** Mutating admission of creates (the object as sent → the object to store); none: stored as sent. */
  readonly admitCreate?: (input: AdmissionInput) => Promise<KubeObject>;
  /**
   * Validating admission (the object as it would be stored; refuses by throwing); none: nothing is validated.
   * Asked only when {@link RouterDeps.validates} says a webhook covers the request.
   */
  readonly validate?: (input: ValidationInput) => Promise<void>;
  /** Whether some validating webhook's rules cover `operation` on `t` (cheap: no call is made). */
  readonly validates?: (t: ResourceType, operation: AdmissionOperation) => boolean;
  /** Called for every request (method, path, status) once answered. */
  readonly onRequest?: (method: string, path: string, status: number) => void;
}

const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

/** A resource URL split into its parts. */
interface ResourcePath {
  readonly group: string;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly plural: string;
  readonly name: string | undefined;
  readonly subresource: string;
}

function parseResourcePath(segments: readonly string[]): ResourcePath | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length < 1 || rest.length > 3) return undefined;
  return { group, version, namespace, plural: rest[0]!, name: rest[1], subresource: rest[2] ?? '' };
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  refuseTooDeep(value);
  return value;
}

function mediaType(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function writeOptions(q: URLSearchParams): WriteOptions {
  const dry = q.getAll('dryRun');
  if (dry.some((d) => d !== 'All'))
    throw badRequest(`dryRun: Unsupported value: "${dry.find((d) => d !== 'All')}": supported values: "All"`);
  const fv = q.get('fieldValidation');
  if (fv !== null && fv !== 'Ignore' && fv !== 'Warn' && fv !== 'Strict')
    throw badRequest(
      `fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`,
    );
  return { dryRun: dry.length > 0, ...(fv ? { fieldValidation: fv as FieldValidation } : {}) };
}

function send(res: ServerResponse, status: number, body: unknown, warnings: readonly string[] = []): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | string[]> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-cache, private',
  };
  if (warnings.length > 0) headers.warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(status, headers);
  res.end(text);
}

function sendError(res: ServerResponse, e: KubeApiError): void {
  send(res, e.code, e.toStatus());
}

const VERB_BY_METHOD: Record<string, { one: string; many: string }> = {
  GET: { one: 'get', many: 'list' },
  POST: { one: 'create', many: 'create' },
  PUT: { one: 'update', many: 'update' },
  PATCH: { one: 'patch', many: 'patch' },
  DELETE: { one: 'delete', many: 'deletecollection' },
};

/** Whether a create body is well-formed enough to be shown to admission webhooks (else the create refuses it). */
function admissible(t: ResourceType, obj: Record<string, unknown>, namespace: string): boolean {
  const meta = obj.metadata === undefined ? {} : asRecord(obj.metadata);
  return (
    (obj.apiVersion === undefined || obj.apiVersion === groupVersion(t)) &&
    (obj.kind === undefined || obj.kind === t.kind) &&
    meta !== undefined &&
    (!t.namespaced ||
      (namespace !== '' &&
        (meta.namespace === undefined || meta.namespace === '' || meta.namespace === namespace)))
  );
}

/** Decodes one `%`-escaped path segment; a malformed escape is the client's error (400), not the server's. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed percent-escape in the request path segment ${JSON.stringify(segment)}`);
  }
}

/**
 * The HTTP front of the simulator: authentication (bearer tokens), RBAC authorization, discovery, resource
 * URLs with the API's verbs, watch streaming, and Status errors for everything that fails.
 */
export function createRouter(deps: RouterDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    if (deps.unavailable()) {
      send(
        res,
        503,
        failureStatus(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
      );
      return;
    }
    const user = authenticate(req);
    if (user === 'invalid' || (user === undefined && !PUBLIC_PATHS.has(path))) {
      sendError(res, unauthorized());
      return;
    }
    const segments = path
      .split('/')
      .filter((s) => s.length > 0)
      .map(decodePathSegment);
    const resource = parseResourcePath(segments);
    if (!resource) {
      const attrs: RequestAttributes = { resourceRequest: false, verb: method.toLowerCase(), path };
      if (user && !authorize(deps.rbac, user, attrs)) throw forbidden(user, attrs);
      if (method !== 'GET')
        throw new KubeApiError(
          405,
          'MethodNotAllowed',
          `the server does not allow this method on the requested resource`,
        );
      serveNonResource(res, path, segments, req);
      return;
    }
    const t = deps.types.find(resource.group, resource.version, resource.plural);
    if (!t) throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    if (resource.subresource !== '' && !(resource.subresource === 'status' && t.statusSubresource))
      throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    if (!t.namespaced && resource.namespace !== undefined)
      throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    const q = url.searchParams;
    const watch = q.get('watch') === 'true' || q.get('watch') === '1';
    const verbs = VERB_BY_METHOD[method];
    if (!verbs)
      throw new KubeApiError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    if (resource.name === undefined && (method === 'PUT' || method === 'PATCH'))
      throw new KubeApiError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    if (resource.name !== undefined && method === 'POST')
      throw new KubeApiError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    const verb = watch ? 'watch' : resource.name === undefined ? verbs.many : verbs.one;
    const namespace = resource.namespace ?? '';
    const attrs: RequestAttributes = {
      resourceRequest: true,
      verb,
      apiGroup: t.group,
      resource: t.plural,
      subresource: resource.subresource,
      namespace,
      // A list or watch narrowed to one name by `fieldSelector=metadata.name=…` is authorized for that name, so
      // a rule with `resourceNames` allows it (as the real API server's request info does).
      name:
        resource.name ??
        (verb === 'list' || verb === 'watch' ? exactNameOf(q.get('fieldSelector') ?? '') : ''),
    };
    if (!authorize(deps.rbac, user!, attrs)) throw forbidden(user!, attrs);
    await serveResource(req, res, t, resource, namespace, verb, q, user!);
  };

  function authenticate(req: IncomingMessage): UserInfo | 'invalid' | undefined {
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    const m = header.match(/^Bearer\s+(\S+)$/i);
    if (!m) return 'invalid';
    const found = deps.tokens.lookup(m[1]!);
    if (found === undefined) return 'invalid';
    if (found === 'admin') return ADMIN_USER;
    const sa = deps.api.store.get('/serviceaccounts', found.namespace, found.name);
    if (!sa || sa.metadata?.uid !== found.uid) return 'invalid';
    return serviceAccountUser(found.namespace, found.name);
  }

  function serveNonResource(
    res: ServerResponse,
    path: string,
    segments: readonly string[],
    req: IncomingMessage,
  ): void {
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/openapi/v2' && String(req.headers.accept ?? '').includes('protobuf')) {
      // An empty document: clients that validate against it find no schema and skip client-side validation.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '0' });
      res.end();
      return;
    }
    const body = nonResourceBody(path, segments);
    if (body === undefined)
      throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    send(res, 200, body);
  }

  function nonResourceBody(path: string, segments: readonly string[]): unknown {
    if (path === '/version') return SERVER_VERSION;
    if (path === '/api') return apiVersions(deps.serverAddress());
    if (path === '/apis') return apiGroupList(deps.types);
    if (path === '/openapi/v2')
      return {
        swagger: '2.0',
        info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
        paths: {},
        definitions: {},
      };
    if (segments[0] === 'api' && segments.length === 2) {
      const types = deps.types.groupVersion('', segments[1]!);
      return types ? apiResourceList(types) : undefined;
    }
    if (segments[0] === 'apis' && segments.length === 2) {
      const g = deps.types.groups().find((x) => x.name === segments[1]);
      return g && g.name !== '' ? apiGroup(g.name, g.versions) : undefined;
    }
    if (segments[0] === 'apis' && segments.length === 3) {
      const types = deps.types.groupVersion(segments[1]!, segments[2]!);
      return types ? apiResourceList(types) : undefined;
    }
    return undefined;
  }

  function selectors(
    t: ResourceType,
    q: URLSearchParams,
  ): { labelSelector?: LabelSelector; fieldSelector?: FieldRequirement[] } {
    const l = q.get('labelSelector');
    const f = q.get('fieldSelector');
    const supported = ['metadata.name', ...(t.namespaced ? ['metadata.namespace'] : []), ...t.fieldSelectors];
    return {
      ...(l ? { labelSelector: parseLabelSelector(l) } : {}),
      ...(f ? { fieldSelector: parseFieldSelector(f, supported) } : {}),
    };
  }

  async function serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    r: ResourcePath,
    namespace: string,
    verb: string,
    q: URLSearchParams,
    user: UserInfo,
  ): Promise<void> {
    const api = deps.api;
    const ns = t.namespaced ? namespace : '';
    const sub = r.subresource as '' | 'status';
    /**
     * A PUT or PATCH of the object itself through validating admission: the object it would store (a dry run of
     * the same write) and the stored one go to the webhooks; the write is then made only if the stored object is
     * still the one validated (else validated again, as the API server retries its guaranteed update).
     */
    const validatedUpdate = async (
      o: WriteOptions,
      write: (o: WriteOptions) => WriteResult,
    ): Promise<WriteResult> => {
      if (sub !== '' || !deps.validate || !deps.validates?.(t, 'UPDATE')) return write(o);
      for (let attempt = 0; attempt < 5; attempt++) {
        const old = api.get(t, ns, r.name!);
        const candidate = write({ ...o, dryRun: true }).object;
        await deps.validate({
          type: t,
          namespace: ns,
          object: candidate,
          oldObject: old,
          user,
          dryRun: o.dryRun ?? false,
          operation: 'UPDATE',
        });
        const now = api.get(t, ns, r.name!);
        if (now.metadata?.resourceVersion === old.metadata?.resourceVersion) return write(o);
      }
      throw conflict(
        { group: t.group, resource: t.plural },
        r.name!,
        'the object kept changing while admission webhooks validated the update',
      );
    };
    const body = async () => {
      try {
        return await readBody(req, deps.maxBodyBytes);
      } catch (e) {
        if (e instanceof BodyTooLarge) {
          res.setHeader('connection', 'close');
          throw new KubeApiError(
            413,
            'RequestEntityTooLarge',
            `Request entity too large: limit is ${deps.maxBodyBytes}`,
          );
        }
        throw e;
      }
    };
    const jsonBody = async () => {
      const raw = await body();
      const type = mediaType(req);
      if (type !== 'application/json' && type !== '')
        throw new KubeApiError(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json`,
        );
      return parseJson(raw);
    };
    switch (verb) {
      case 'get':
        return send(res, 200, api.get(t, ns, r.name!));
      case 'list': {
        const limit = q.get('limit');
        if (limit !== null && !/^\d+$/.test(limit))
          throw badRequest(`limit: Invalid value: "${limit}": must be a non-negative integer`);
        // The list is always served from the latest state; a resourceVersion that is no version at all is refused,
        // as it is by a watch.
        const rv = q.get('resourceVersion');
        if (rv !== null && rv !== '' && !/^\d+$/.test(rv))
          throw badRequest(`invalid resource version: ${rv}`);
        const cont = q.get('continue');
        return send(
          res,
          200,
          api.list(t, t.namespaced ? r.namespace : undefined, {
            ...selectors(t, q),
            ...(limit !== null ? { limit: Number(limit) } : {}),
            ...(cont ? { continueToken: cont } : {}),
          }),
        );
      }
      case 'watch':
        return openWatch(req, res, t, r, q);
      case 'create': {
        const o = writeOptions(q);
        const sent = await jsonBody();
        const obj = asRecord(sent);
        const admitted =
          deps.admitCreate && obj && admissible(t, obj, namespace)
            ? await deps.admitCreate({
                type: t,
                namespace,
                object: {
                  ...obj,
                  apiVersion: groupVersion(t),
                  kind: t.kind,
                  metadata: { ...(asRecord(obj.metadata) ?? {}), ...(t.namespaced ? { namespace } : {}) },
                },
                user,
                dryRun: o.dryRun ?? false,
              })
            : sent;
        if (deps.validate && deps.validates?.(t, 'CREATE') && asRecord(admitted) !== undefined) {
          // The object as it would be stored (defaults, uid, timestamps), then the real create.
          const candidate = api.create(t, namespace, admitted, { ...o, dryRun: true }).object;
          await deps.validate({
            type: t,
            namespace,
            object: candidate,
            user,
            dryRun: o.dryRun ?? false,
            operation: 'CREATE',
          });
        }
        const result = api.create(t, namespace, admitted, o);
        return send(res, 201, result.object, result.warnings);
      }
      case 'update': {
        const o = writeOptions(q);
        const sent = await jsonBody();
        const result = await validatedUpdate(o, (w) => api.update(t, ns, r.name!, sent, sub, w));
        return send(res, 200, result.object, result.warnings);
      }
      case 'patch': {
        const o = writeOptions(q);
        const raw = await body();
        const type = PATCH_CONTENT_TYPES[mediaType(req)];
        if (!type) {
          const accepted = [
            'application/json-patch+json',
            'application/merge-patch+json',
            ...(t.strategicMerge ? ['application/strategic-merge-patch+json'] : []),
            'application/apply-patch+yaml',
          ];
          throw new KubeApiError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
          );
        }
        const patchBody = type === 'apply' ? undefined : parseJson(raw);
        const result = await validatedUpdate(o, (w) => api.patch(t, ns, r.name!, type, patchBody, sub, w));
        return send(res, 200, result.object, result.warnings);
      }
      case 'delete': {
        const o = writeOptions(q);
        const raw = await body();
        const options = raw.length > 0 ? parseJson(raw) : undefined;
        return send(res, 200, api.delete(t, ns, r.name!, options, o));
      }
      case 'deletecollection': {
        const o = writeOptions(q);
        return send(
          res,
          200,
          api.deleteCollection(t, t.namespaced ? r.namespace : undefined, selectors(t, q), o),
        );
      }
      default:
        throw new KubeApiError(
          405,
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
    }
  }

  function openWatch(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    r: ResourcePath,
    q: URLSearchParams,
  ): void {
    const sel = selectors(t, q);
    const timeout = q.get('timeoutSeconds');
    if (timeout !== null && !/^\d+$/.test(timeout))
      throw badRequest(`timeoutSeconds: Invalid value: "${timeout}"`);
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-cache, private',
      'transfer-encoding': 'chunked',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    const close = deps.watches.open(
      {
        type: t,
        namespace: t.namespaced ? r.namespace : undefined,
        ...sel,
        resourceVersion: q.get('resourceVersion') ?? '',
        allowBookmarks: q.get('allowWatchBookmarks') === 'true',
        ...(timeout !== null && Number(timeout) > 0 ? { timeoutMs: Number(timeout) * 1000 } : {}),
      },
      {
        send: (ev) => {
          if (!res.writableEnded) res.write(`${JSON.stringify(ev)}\n`);
        },
        close: () => {
          if (!res.writableEnded) res.end();
        },
      },
    );
    res.on('close', close);
  }

  return (req, res) => {
    handle(req, res).then(
      () => deps.onRequest?.(req.method ?? '', req.url ?? '', res.statusCode),
      (e: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const err = isKubeApiError(e)
          ? e
          : new KubeApiError(500, 'InternalError', `Internal error occurred: ${String(e)}`);
        sendError(res, err);
        deps.onRequest?.(req.method ?? '', req.url ?? '', err.code);
      },
    );
  };
}

/** Re-exported for the simulator's own 404s. */
export { notFound };
