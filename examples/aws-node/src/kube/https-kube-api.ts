/**
 * The {@link KubeApi} port over `node:https`: eight REST calls need a bearer token, the cluster CA, JSON bodies
 * and a deadline, not a generated client. Hand-written because `@kubernetes/client-node` cost the daemon ~30 MiB
 * of RSS and 205–250 ms of load time even bundled and loaded lazily (docs/adr/0003-bundled-daemon.md, second addendum).
 */
import { Agent, request } from 'node:https';
import { readRegularFile } from '@vpc-cni-kit/regular-file';
import { type InClusterTarget, whyUnreadable } from './in-cluster.js';
import {
  type CustomResource,
  classifyStatus,
  type KubeApi,
  KubeCallError,
  type KubeObject,
  type PodWatchApi,
} from './kube-api.js';

/** Largest response body read (an object the daemon asks for is a few KiB; the server caps requests at 3 MiB). */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Kept-alive connections to the API server (the daemon's calls are few and mostly sequential). */
const MAX_SOCKETS = 4;

type Method = 'GET' | 'POST' | 'PATCH';

/** A request body and its media type. */
interface Body {
  readonly contentType: 'application/json' | 'application/merge-patch+json' | 'application/json-patch+json';
  readonly value: unknown;
}

function segment(what: string, value: string): string {
  if (value === '' || value === '.' || value === '..' || value.includes('/'))
    throw new KubeCallError('Invalid', 0, `${what} ${JSON.stringify(value)} is not a valid path segment`);
  return encodeURIComponent(value);
}

function customPath(r: CustomResource, name?: string): string {
  const base = `/apis/${segment('group', r.group)}/${segment('version', r.version)}/${segment('plural', r.plural)}`;
  return name === undefined ? base : `${base}/${segment('name', name)}`;
}

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${segment('namespace', namespace)}/pods/${segment('name', name)}`;
}

/** Maps a non-2xx answer to a {@link KubeCallError}, from its `Status` body when it has one. */
function statusError(status: number, text: string): KubeCallError {
  let reason: string | undefined;
  let message = `HTTP ${status}`;
  try {
    const s = JSON.parse(text) as { kind?: unknown; reason?: unknown; message?: unknown };
    if (typeof s.reason === 'string') reason = s.reason;
    if (typeof s.message === 'string' && s.message !== '') message = s.message;
  } catch {
    if (text.trim() !== '') message = `HTTP ${status}: ${text.trim().slice(0, 200)}`;
  }
  return new KubeCallError(classifyStatus(status, reason), status, message);
}

/**
 * The `Unreachable` error of a request `where` whose answer broke after its headers came (the connection reset or
 * closed mid-body): no usable answer, the same words for a call and for a watch that could not open.
 */
function answerBroke(where: string, error: Error): KubeCallError {
  return new KubeCallError('Unreachable', 0, `${where}: ${error.message}`);
}

/** Requests to one API server over kept-alive TLS connections. */
class Transport {
  readonly #url: URL;
  readonly #basePath: string;
  readonly #tokenFile: string;
  readonly #timeoutMs: number;
  readonly #agent: Agent;

  constructor(target: InClusterTarget, timeoutMs: number) {
    this.#url = new URL(target.server);
    if (this.#url.protocol !== 'https:')
      throw new KubeCallError('Invalid', 0, `API server ${target.server} is not an https URL`);
    this.#basePath = this.#url.pathname.replace(/\/+$/, '');
    this.#tokenFile = target.tokenFile;
    this.#timeoutMs = timeoutMs;
    this.#agent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, ca: target.caPem });
  }

  /** Builds the path (a bad segment rejects before anything is sent), then makes the request. */
  async call(method: Method, path: () => string, body?: Body): Promise<KubeObject> {
    return this.#request(method, path(), body);
  }

  /**
   * The request headers, with the token as it is now (projected ServiceAccount tokens are rotated). The token
   * is read only from a regular file (`readRegularFile`: a FIFO put in its place is refused at once, never
   * waited on); it is a few hundred bytes on the kubelet's tmpfs, read in the call.
   */
  #headers(where: string): Record<string, string | number> {
    let token: string | undefined;
    let why = 'ENOENT';
    try {
      token = readRegularFile(this.#tokenFile, 'utf8');
    } catch (e) {
      why = whyUnreadable(e);
    }
    if (token === undefined)
      throw new KubeCallError(
        'Unauthorized',
        0,
        `${where}: token file ${this.#tokenFile} unreadable: ${why}`,
      );
    return { Accept: 'application/json', Authorization: `Bearer ${token.trim()}`, 'User-Agent': 'aws-node' };
  }

  #options(method: Method, path: string, headers: Record<string, string | number>) {
    return {
      protocol: 'https:',
      hostname: this.#url.hostname.replace(/^\[|\]$/g, ''),
      port: this.#url.port === '' ? 443 : Number(this.#url.port),
      path: this.#basePath + path,
      method,
      headers,
      agent: this.#agent,
    };
  }

  /** Closes every connection, kept-alive ones included. */
  close(): void {
    this.#agent.destroy();
  }

  /**
   * The `Unreachable` error of a request `where` that got no answer: the socket's `error` (refused, reset, TLS
   * refused the server's certificate, …) by its code, or, without one, the deadline that passed first. The same
   * words for a call and for a watch.
   */
  #unreachable(where: string, error?: NodeJS.ErrnoException): KubeCallError {
    return new KubeCallError(
      'Unreachable',
      0,
      error === undefined
        ? `${where}: no answer from ${this.#url.origin} within ${this.#timeoutMs} ms`
        : `${where}: ${this.#url.origin}: ${error.code ?? error.message}`,
    );
  }

  /** One request within the deadline: reading the token, connecting, TLS, sending and reading the answer. */
  async #request(method: Method, path: string, body?: Body): Promise<KubeObject> {
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const where = `${method} ${path}`;
    const headers = this.#headers(where);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body.value));
    if (body !== undefined && payload !== undefined) {
      headers['Content-Type'] = body.contentType;
      headers['Content-Length'] = payload.length;
    }
    return new Promise<KubeObject>((resolve, reject) => {
      let settled = false;
      const fail = (err: KubeCallError) => {
        if (settled) return;
        settled = true;
        deadline.removeEventListener('abort', onDeadline);
        req.destroy();
        reject(err);
      };
      const onDeadline = () => fail(this.#unreachable(where));
      const req = request(this.#options(method, path, headers), (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES)
            return fail(
              new KubeCallError(
                'Other',
                res.statusCode ?? 0,
                `${where}: answer larger than ${MAX_RESPONSE_BYTES} bytes`,
              ),
            );
          chunks.push(c);
        });
        res.on('error', (e) => fail(answerBroke(where, e)));
        res.on('end', () => {
          if (settled) return;
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status > 299) return fail(statusError(status, text));
          let obj: unknown;
          try {
            obj = JSON.parse(text);
          } catch {
            return fail(new KubeCallError('Other', status, `${where}: the answer is not JSON`));
          }
          if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
            return fail(new KubeCallError('Other', status, `${where}: the answer is not a JSON object`));
          settled = true;
          deadline.removeEventListener('abort', onDeadline);
          resolve(obj as KubeObject);
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => fail(this.#unreachable(where, e)));
      if (deadline.aborted) return onDeadline();
      deadline.addEventListener('abort', onDeadline, { once: true });
      req.end(payload);
    });
  }

  /**
   * A streamed GET (a watch): the answer's headers within the request timeout, then its body line by line
   * until it ends, `maxMs` passes or `signal` aborts. Resolves when the stream ends for any of those reasons or
   * breaks after it was opened; rejects when it could not be opened.
   */
  async stream(
    path: () => string,
    options: { maxMs: number; onLine: (line: string) => void; signal: AbortSignal },
  ): Promise<void> {
    const p = path();
    const where = `GET ${p}`;
    const opening = AbortSignal.timeout(this.#timeoutMs);
    const headers = this.#headers(where);
    if (options.signal.aborted) return;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let opened = false;
      let cap: NodeJS.Timeout | undefined;
      const finish = (err?: KubeCallError) => {
        if (settled) return;
        settled = true;
        clearTimeout(cap);
        opening.removeEventListener('abort', onOpening);
        options.signal.removeEventListener('abort', onStop);
        req.destroy();
        if (err !== undefined && !opened) reject(err);
        else resolve();
      };
      const onOpening = () => finish(this.#unreachable(where));
      const onStop = () => finish();
      const req = request(this.#options('GET', p, headers), (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
          });
          res.on('end', () => finish(statusError(status, Buffer.concat(chunks).toString('utf8'))));
          res.on('error', (e) => finish(answerBroke(where, e)));
          return;
        }
        opened = true;
        opening.removeEventListener('abort', onOpening);
        // The server ends a watch after its timeoutSeconds; past that (and some grace) it stopped answering.
        cap = setTimeout(() => finish(), options.maxMs);
        let pending = '';
        // A line handler that throws would be an uncaught exception in this listener: end the stream instead.
        const deliver = (line: string) => {
          try {
            options.onLine(line);
          } catch {
            finish();
          }
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          let nl = pending.indexOf('\n');
          while (nl >= 0 && !settled) {
            const line = pending.slice(0, nl).trim();
            pending = pending.slice(nl + 1);
            if (line !== '') deliver(line);
            nl = pending.indexOf('\n');
          }
          // A line longer than any object the API serves: the stream is not a watch, drop it.
          if (pending.length > MAX_RESPONSE_BYTES) finish();
        });
        res.on('end', () => {
          const line = pending.trim();
          if (line !== '' && !settled) deliver(line);
          finish();
        });
        // Broken after it opened (the server went away mid-stream): it ended, the caller resumes.
        res.on('close', () => finish());
        res.on('error', () => finish());
      });
      req.on('error', (e: NodeJS.ErrnoException) => finish(this.#unreachable(where, e)));
      if (opening.aborted) return onOpening();
      if (options.signal.aborted) return onStop();
      opening.addEventListener('abort', onOpening, { once: true });
      options.signal.addEventListener('abort', onStop, { once: true });
      req.end();
    });
  }
}

/**
 * Builds the {@link KubeApi} for an in-cluster target: the ServiceAccount token (re-read on every call), the
 * cluster CA and no other, keep-alive connections, and `timeoutMs` per call from its start to the end of the
 * answer (connecting included). Failures are {@link KubeCallError}s: a `Status` answer classified by
 * {@link classifyStatus}, no answer (refused, TLS, deadline) as `Unreachable`.
 */
export function httpsKubeApi(target: InClusterTarget, timeoutMs: number): KubeApi {
  const t = new Transport(target, timeoutMs);
  const json = (value: unknown): Body => ({ contentType: 'application/json', value });
  const merge = (value: unknown): Body => ({ contentType: 'application/merge-patch+json', value });
  return {
    getNode: (name) => t.call('GET', () => `/api/v1/nodes/${segment('name', name)}`),
    getPod: (namespace, name) => t.call('GET', () => podPath(namespace, name)),
    getClusterObject: (r, name) => t.call('GET', () => customPath(r, name)),
    createClusterObject: (r, body) => t.call('POST', () => customPath(r), json(body)),
    mergePatchClusterObject: (r, name, patch) => t.call('PATCH', () => customPath(r, name), merge(patch)),
    mergePatchPod: (namespace, name, patch) => t.call('PATCH', () => podPath(namespace, name), merge(patch)),
    jsonPatchPod: (namespace, name, ops) =>
      t.call('PATCH', () => podPath(namespace, name), {
        contentType: 'application/json-patch+json',
        value: ops,
      }),
    createEvent: (namespace, body) =>
      t.call(
        'POST',
        () => `/apis/events.k8s.io/v1/namespaces/${segment('namespace', namespace)}/events`,
        json(body),
      ),
  };
}

/** Grace after a watch's `timeoutSeconds` before the client ends it itself (the server should have). */
export const WATCH_GRACE_MS = 15_000;

/**
 * Builds the {@link PodWatchApi} for an in-cluster target, on connections of its own (a watch holds one for
 * minutes; the pod path's calls keep theirs): the LIST within `timeoutMs`, the WATCH opened within `timeoutMs`
 * and ended by the client {@link WATCH_GRACE_MS} after the server should have ended it.
 */
export function httpsPodWatchApi(target: InClusterTarget, timeoutMs: number): PodWatchApi {
  const t = new Transport(target, timeoutMs);
  const selector = (nodeName: string) =>
    `fieldSelector=${encodeURIComponent(`spec.nodeName=${segment('node name', nodeName)}`)}`;
  return {
    listNodePods: (nodeName) => t.call('GET', () => `/api/v1/pods?${selector(nodeName)}`),
    watchNodePods: (nodeName, o) => {
      if (!Number.isInteger(o.timeoutSeconds) || o.timeoutSeconds < 1)
        return Promise.reject(
          new KubeCallError(
            'Invalid',
            0,
            `watch timeoutSeconds ${o.timeoutSeconds} is not a whole number of seconds ≥ 1`,
          ),
        );
      return t.stream(
        () =>
          `/api/v1/pods?${selector(nodeName)}&watch=true&allowWatchBookmarks=true` +
          `&resourceVersion=${encodeURIComponent(o.resourceVersion)}&timeoutSeconds=${o.timeoutSeconds}`,
        { maxMs: o.timeoutSeconds * 1000 + WATCH_GRACE_MS, onLine: o.onLine, signal: o.signal },
      );
    },
    close: () => t.close(),
  };
}
