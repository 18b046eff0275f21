import { randomUUID } from 'node:crypto';
import { type Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { asRecord } from './builtin-types.js';
import { jsonPatch } from './patch.js';
import type { UserInfo } from './rbac.js';
import type { KubeObject, ResourceType } from './resource-type.js';
import { type LabelRequirement, type LabelSelector, matchesLabels } from './selectors.js';
import { badRequest, KubeApiError, type StatusReason } from './status.js';

/** Where the simulator stores MutatingWebhookConfigurations. */
export const MUTATING_WEBHOOK_STORAGE_KEY = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';

/** Where the simulator stores ValidatingWebhookConfigurations. */
export const VALIDATING_WEBHOOK_STORAGE_KEY = 'admissionregistration.k8s.io/validatingwebhookconfigurations';

/** The operations admission webhooks are called for here. */
export type AdmissionOperation = 'CREATE' | 'UPDATE';

/** A `clientConfig.service` reference of a webhook. */
export interface WebhookServiceRef {
  /** Service namespace. */
  readonly namespace: string;
  /** Service name. */
  readonly name: string;
  /** Service port (default 443). */
  readonly port: number;
}

/**
 * Where a webhook Service is reached: the simulator has no cluster network, so a test maps each Service to a
 * `host:port` it listens on. The TLS server name stays `<name>.<namespace>.svc`, as the real API server dials it,
 * so the webhook's certificate must carry that name.
 */
export type WebhookServiceResolver = (ref: WebhookServiceRef) => { host: string; port: number } | undefined;

/** One create as mutating admission sees it. */
export interface AdmissionInput {
  /** The resource type. */
  readonly type: ResourceType;
  /** Namespace of the request ('' for cluster-scoped). */
  readonly namespace: string;
  /** The object as the client sent it (apiVersion, kind and namespace filled in). */
  readonly object: KubeObject;
  /** The requesting user. */
  readonly user: UserInfo;
  /** `dryRun=All`. */
  readonly dryRun: boolean;
}

/** One create or update as validating admission sees it: the object as it would be stored. */
export interface ValidationInput extends AdmissionInput {
  /** `CREATE` or `UPDATE` (a PUT or a PATCH of the object itself, not of a subresource). */
  readonly operation: AdmissionOperation;
  /** The stored object an update replaces (`UPDATE` only). */
  readonly oldObject?: KubeObject | undefined;
}

/** What admission reads: stored configurations, namespace labels, and how Services are reached. */
export interface AdmissionDeps {
  /** The stored webhook configurations (mutating ones for {@link admitCreate}, validating for {@link validate}). */
  readonly configurations: () => readonly KubeObject[];
  /** Labels of a namespace (undefined when it does not exist). */
  readonly namespaceLabels: (name: string) => Record<string, string> | undefined;
  /** Service → address; a Service it does not resolve is unreachable (the call fails). */
  readonly resolveService?: WebhookServiceResolver | undefined;
  /** The HTTPS agent calls go through (a keep-alive one reuses connections, as the API server does). */
  readonly agent?: Agent | undefined;
}

interface Webhook {
  readonly name: string;
  readonly config: Record<string, unknown>;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Converts a `metav1.LabelSelector` (matchLabels, matchExpressions) into requirements; undefined = everything. */
function toRequirements(selector: unknown): LabelSelector {
  const s = asRecord(selector);
  if (!s) return [];
  const out: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(asRecord(s.matchLabels) ?? {}))
    out.push({ key, op: 'in', values: [String(value)] });
  for (const raw of Array.isArray(s.matchExpressions) ? s.matchExpressions : []) {
    const e = asRecord(raw) ?? {};
    const key = String(e.key ?? '');
    const op = String(e.operator ?? '');
    if (op === 'In' || op === 'NotIn')
      out.push({ key, op: op === 'In' ? 'in' : 'notin', values: strings(e.values) });
    else if (op === 'Exists') out.push({ key, op: 'exists' });
    else if (op === 'DoesNotExist') out.push({ key, op: 'doesnotexist' });
  }
  return out;
}

function matchesList(list: readonly string[], value: string): boolean {
  return list.includes('*') || list.includes(value);
}

/**
 * Whether one webhook's rules cover `operation` on `t` (the object itself: a subresource such as `pods/status` is
 * never admitted here, so `pods/*` does not match).
 */
function ruleMatches(
  webhook: Record<string, unknown>,
  t: ResourceType,
  operation: AdmissionOperation,
): boolean {
  const rules = Array.isArray(webhook.rules) ? webhook.rules : [];
  return rules.some((raw) => {
    const r = asRecord(raw) ?? {};
    const scope = String(r.scope ?? '*');
    if (scope === 'Namespaced' && !t.namespaced) return false;
    if (scope === 'Cluster' && t.namespaced) return false;
    return (
      matchesList(strings(r.operations), operation) &&
      matchesList(strings(r.apiGroups), t.group) &&
      matchesList(strings(r.apiVersions), t.version) &&
      matchesList(strings(r.resources), t.plural)
    );
  });
}

/** The endpoint of a webhook: a URL and the TLS server name to verify. */
function endpointOf(
  webhook: Webhook,
  resolve: WebhookServiceResolver | undefined,
  timeoutSeconds: number,
): { url: URL; servername: string; display: string } | string {
  const cc = asRecord(webhook.config.clientConfig) ?? {};
  const suffix = `timeout=${timeoutSeconds}s`;
  if (typeof cc.url === 'string') {
    const url = new URL(cc.url);
    url.search = url.search ? `${url.search}&${suffix}` : `?${suffix}`;
    return { url, servername: url.hostname.replace(/^\[|\]$/g, ''), display: url.toString() };
  }
  const svc = asRecord(cc.service);
  if (!svc) return 'the webhook has neither clientConfig.url nor clientConfig.service';
  const ref = {
    namespace: String(svc.namespace ?? ''),
    name: String(svc.name ?? ''),
    port: Number(svc.port ?? 443),
  };
  const path = typeof svc.path === 'string' ? svc.path : '/';
  const servername = `${ref.name}.${ref.namespace}.svc`;
  const display = `https://${servername}:${ref.port}${path}?${suffix}`;
  const to = resolve?.(ref);
  if (!to)
    return `Post "${display}": service "${ref.namespace}/${ref.name}" has no endpoint the simulator can reach`;
  const host = to.host.includes(':') ? `[${to.host}]` : to.host;
  return { url: new URL(`https://${host}:${to.port}${path}?${suffix}`), servername, display };
}

/** Posts one AdmissionReview; resolves with the parsed response body or rejects with the API server's wording. */
function post(
  target: { url: URL; servername: string; display: string },
  caBundle: string | undefined,
  body: string,
  timeoutMs: number,
  agent: Agent | undefined,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`Post "${target.display}": ${why}`));
    const req = request(
      target.url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        // TLS has no server name for an IP address (RFC 6066): the certificate's IP SAN is checked instead.
        ...(isIP(target.servername) ? {} : { servername: target.servername }),
        ...(caBundle ? { ca: Buffer.from(caBundle, 'base64').toString('utf8') } : {}),
        ...(agent ? { agent } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(deadline);
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) {
            fail(`the server responded with the status code ${res.statusCode}: ${text.trim().slice(0, 200)}`);
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error('received invalid webhook response: the body is not JSON'));
          }
        });
        res.on('error', (e) => fail(e.message));
      },
    );
    const deadline = setTimeout(() => {
      req.destroy();
      fail('context deadline exceeded');
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      fail(
        e.code === 'ECONNREFUSED' ? `dial tcp ${target.url.host}: connect: connection refused` : e.message,
      );
    });
    req.end(body);
  });
}

const REASONS = new Set<string>([
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Invalid',
  'InternalError',
]);

/** A denial, worded as the API server's `admission webhook "…" denied the request: …` (code ≥ 400). */
function denial(name: string, result: Record<string, unknown> | undefined): KubeApiError {
  const by = `admission webhook "${name}" denied the request`;
  const code = Number(result?.code ?? 0);
  const message =
    typeof result?.message === 'string' && result.message !== ''
      ? `${by}: ${result.message}`
      : typeof result?.reason === 'string' && result.reason !== ''
        ? `${by}: ${result.reason}`
        : `${by} without explanation`;
  const reason = (
    typeof result?.reason === 'string' && REASONS.has(result.reason) ? result.reason : 'BadRequest'
  ) as StatusReason;
  return new KubeApiError(Number.isInteger(code) && code < 600 ? Math.max(code, 400) : 400, reason, message);
}

/** The webhooks of `configs`, by configuration name, then in order. */
function webhooksOf(configs: readonly KubeObject[]): Webhook[] {
  const webhooks: Webhook[] = [];
  const sorted = [...configs].sort((a, b) =>
    String(a.metadata?.name).localeCompare(String(b.metadata?.name)),
  );
  for (const c of sorted)
    for (const raw of Array.isArray(c.webhooks) ? c.webhooks : []) {
      const w = asRecord(raw);
      if (w) webhooks.push({ name: String(w.name ?? ''), config: w });
    }
  return webhooks;
}

/** Whether webhook `w` is called for this request (rules, namespaceSelector, objectSelector). */
function applies(
  deps: AdmissionDeps,
  w: Webhook,
  input: AdmissionInput,
  operation: AdmissionOperation,
  object: KubeObject,
  oldObject: KubeObject | undefined,
): boolean {
  const t = input.type;
  if (!ruleMatches(w.config, t, operation)) return false;
  const nsLabels = input.namespace ? deps.namespaceLabels(input.namespace) : undefined;
  if (t.namespaced && !matchesLabels(toRequirements(w.config.namespaceSelector), nsLabels)) return false;
  // An update is admitted when the new or the old object matches the objectSelector, as the API server does.
  const selector = toRequirements(w.config.objectSelector);
  const labelsOf = (o: KubeObject | undefined) =>
    asRecord(o?.metadata?.labels) as Record<string, string> | undefined;
  return (
    matchesLabels(selector, labelsOf(object)) ||
    (oldObject !== undefined && matchesLabels(selector, labelsOf(oldObject)))
  );
}

/**
 * Calls one webhook with an `admission.k8s.io/v1` AdmissionReview over HTTPS verifying its `caBundle`. Resolves
 * with its response, or `undefined` when the call failed and `failurePolicy` is `Ignore`; throws the API
 * server's error for a failed call under `Fail` (the default) and for a denial.
 */
async function callWebhook(
  deps: AdmissionDeps,
  w: Webhook,
  input: AdmissionInput,
  operation: AdmissionOperation,
  object: KubeObject,
  oldObject: KubeObject | undefined,
): Promise<
  { response: Record<string, unknown>; ignore: boolean; fail: (why: string) => KubeApiError } | undefined
> {
  const t = input.type;
  const sideEffects = String(w.config.sideEffects ?? 'Unknown');
  if (input.dryRun && sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun')
    throw badRequest(`admission webhook "${w.name}" does not support dry run`);
  const ignore = w.config.failurePolicy === 'Ignore';
  const timeoutSeconds = Math.min(30, Math.max(1, Number(w.config.timeoutSeconds ?? 10)));
  const uid = randomUUID();
  const fail = (why: string) =>
    new KubeApiError(
      500,
      'InternalError',
      `Internal error occurred: failed calling webhook "${w.name}": ${why}`,
    );
  let answer: unknown;
  try {
    const target = endpointOf(w, deps.resolveService, timeoutSeconds);
    if (typeof target === 'string') throw new Error(target);
    const cc = asRecord(w.config.clientConfig) ?? {};
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: t.group, version: t.version, kind: t.kind },
        resource: { group: t.group, version: t.version, resource: t.plural },
        requestKind: { group: t.group, version: t.version, kind: t.kind },
        requestResource: { group: t.group, version: t.version, resource: t.plural },
        name: String(object.metadata?.name ?? ''),
        ...(t.namespaced ? { namespace: input.namespace } : {}),
        operation,
        userInfo: { username: input.user.name, groups: [...input.user.groups] },
        object,
        oldObject: oldObject ?? null,
        dryRun: input.dryRun,
        options: {
          apiVersion: 'meta.k8s.io/v1',
          kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
        },
      },
    };
    answer = await post(
      target,
      typeof cc.caBundle === 'string' ? cc.caBundle : undefined,
      JSON.stringify(review),
      timeoutSeconds * 1000,
      deps.agent,
    );
  } catch (e) {
    if (ignore) return undefined;
    throw fail(`failed to call webhook: ${(e as Error).message}`);
  }
  const response = asRecord(asRecord(answer)?.response);
  if (!response || response.uid !== uid) {
    if (ignore) return undefined;
    throw fail(
      response
        ? `expected response.uid="${uid}", got "${String(response.uid)}"`
        : 'received invalid webhook response: the AdmissionReview has no response',
    );
  }
  if (response.allowed !== true) throw denial(w.name, asRecord(response.status));
  return { response, ignore, fail };
}

/**
 * Mutating admission of a CREATE: calls every matching webhook of every MutatingWebhookConfiguration (sorted by
 * configuration name, webhooks in order) with an `admission.k8s.io/v1` AdmissionReview over HTTPS verifying its
 * `caBundle`, and applies each JSONPatch it returns before the next call. A webhook that cannot be called (refused,
 * TLS, timeout, non-200, unparsable answer) fails the create with 500 under `failurePolicy: Fail` (the default) and
 * is skipped under `Ignore`; a denial fails it with the webhook's code and message. `namespaceSelector` and
 * `objectSelector` are honoured; `reinvocationPolicy` is not (each webhook is called once).
 */
export async function admitCreate(deps: AdmissionDeps, input: AdmissionInput): Promise<KubeObject> {
  let object = input.object;
  for (const w of webhooksOf(deps.configurations())) {
    if (!applies(deps, w, input, 'CREATE', object, undefined)) continue;
    const called = await callWebhook(deps, w, input, 'CREATE', object, undefined);
    if (called === undefined) continue;
    const { response, ignore, fail } = called;
    if (response.patch === undefined) continue;
    if (response.patchType !== 'JSONPatch') {
      if (ignore) continue;
      throw fail(`webhook returned a patch of unsupported patchType ${JSON.stringify(response.patchType)}`);
    }
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(String(response.patch), 'base64').toString('utf8'));
    } catch {
      throw new KubeApiError(
        500,
        'InternalError',
        `Internal error occurred: the patch of webhook "${w.name}" is not JSON`,
      );
    }
    try {
      object = jsonPatch(object, ops) as KubeObject;
    } catch (e) {
      throw new KubeApiError(
        500,
        'InternalError',
        `Internal error occurred: the patch of webhook "${w.name}" cannot be applied: ${(e as Error).message}`,
      );
    }
  }
  return object;
}

/** Whether some ValidatingWebhookConfiguration has a webhook whose rules cover `operation` on `t`. */
export function validationApplies(
  configurations: readonly KubeObject[],
  t: ResourceType,
  operation: AdmissionOperation,
): boolean {
  return webhooksOf(configurations).some((w) => ruleMatches(w.config, t, operation));
}

/**
 * Validating admission of a CREATE or an UPDATE: calls every matching webhook of every
 * ValidatingWebhookConfiguration (sorted by configuration name, webhooks in order) with the object as it would be
 * stored, the stored one it replaces (`oldObject`, updates) and the requesting user (`userInfo`, as the simulator
 * authenticated it). The first denial refuses the request with the webhook's code and message
 * (`admission webhook "<name>" denied the request: <message>`); a failed call refuses it with 500 under
 * `failurePolicy: Fail` and is skipped under `Ignore`. Patches in the answers are ignored, as the API server does.
 */
export async function validate(deps: AdmissionDeps, input: ValidationInput): Promise<void> {
  for (const w of webhooksOf(deps.configurations())) {
    if (!applies(deps, w, input, input.operation, input.object, input.oldObject)) continue;
    await callWebhook(deps, w, input, input.operation, input.object, input.oldObject);
  }
}
