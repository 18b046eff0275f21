import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ACTIONS } from './actions/index.js';
import type { Clock } from './clock.js';
import { Ec2SimError, isEc2SimError } from './errors.js';
import { type FaultInjector, isFaultSpecError, parseFaultSpec } from './faults.js';
import { QueryParams } from './query.js';
import type { Ec2State } from './state.js';
import type { TokenBuckets } from './throttle.js';
import { renderError, renderResponse } from './xml.js';

/** One EC2 API call as the simulator saw it. */
export interface CallRecord {
  /** The `Action` parameter (empty when missing). */
  readonly action: string;
  /** The request id sent back in `x-amzn-requestid`. */
  readonly requestId: string;
  /** Clock time the call arrived (ms). */
  readonly at: number;
  /** HTTP status sent. */
  readonly status: number;
  /** AWS error code, when the call failed. */
  readonly errorCode?: string;
}

/** What the EC2 endpoint needs. */
export interface Ec2ServerDeps {
  /** Account state. */
  readonly state: Ec2State;
  /** Faults consulted for every call. */
  readonly faults: FaultInjector;
  /** Rate limits; `undefined` disables throttling. */
  readonly buckets: TokenBuckets | undefined;
  /** Time source (latency faults sleep on it). */
  readonly clock: Clock;
  /** Region name. */
  readonly region: string;
  /** Where calls are recorded. */
  readonly calls: CallRecord[];
  /** Extra JSON shown by `GET /_sim/state` and `GET /_sim/endpoints`. */
  readonly describeEndpoints: () => unknown;
}

/** Path prefix of the admin API on the EC2 port. */
export const ADMIN_PREFIX = '/_sim';

const MAX_BODY = 1024 * 1024;
const MAX_CALLS = 100_000;

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        // Stop keeping the body but keep reading it, so the 413 reaches the client instead of a reset socket.
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function unauthorized(state: Ec2State, action: string, region: string): Ec2SimError {
  const iam = `ec2:${action}`;
  return new Ec2SimError(
    'UnauthorizedOperation',
    `You are not authorized to perform this operation. User: arn:aws:iam::${state.accountId}:user/simulator ` +
      `is not authorized to perform: ${iam} on resource: arn:aws:ec2:${region}:${state.accountId}:* ` +
      `because no identity-based policy allows the ${iam} action`,
  );
}

/** Handles one EC2 Query API request body; returns status and XML. Never throws. */
export async function handleEc2Request(
  deps: Ec2ServerDeps,
  body: string,
): Promise<{
  status: number;
  xml: string;
  requestId: string;
  action: string;
  errorCode?: string;
}> {
  const { state, faults, buckets, clock } = deps;
  const requestId = state.ids.requestId();
  let action = '';
  try {
    const params = QueryParams.parse(body);
    action = params.string('Action') ?? '';
    if (action === '')
      throw new Ec2SimError('MissingParameter', 'The request must contain the parameter Action');
    params.string('Version');
    const spec = ACTIONS.get(action);
    if (!spec)
      throw new Ec2SimError('InvalidAction', `The action ${action} is not valid for this web service.`);
    const delay = faults.latencyFor(action);
    if (delay > 0) await clock.sleep(delay);
    const injected = faults.takeCallFault(action);
    if (injected) throw injected;
    if (buckets) {
      const unbounded =
        spec.unboundedDescribe === true &&
        !body.includes('Filter.') &&
        !body.includes('MaxResults=') &&
        !/(NetworkInterfaceId|InstanceId|GroupId)\.\d/.test(body);
      if (!buckets.take(unbounded ? 'unbounded-describe' : spec.family)) {
        throw new Ec2SimError('RequestLimitExceeded', 'Request limit exceeded.');
      }
    }
    if (faults.isDenied(action)) throw unauthorized(state, action, deps.region);
    const result = spec.handler({ state, region: deps.region }, params);
    const lost = faults.takeAfterApplyFault(action);
    if (lost) throw lost;
    return { status: 200, xml: renderResponse(action, requestId, result), requestId, action };
  } catch (e) {
    const err = isEc2SimError(e)
      ? e
      : new Ec2SimError('InternalError', 'An internal error has occurred', 500);
    return {
      status: err.status,
      xml: renderError(err.code, err.message, requestId),
      requestId,
      action,
      errorCode: err.code,
    };
  }
}

async function handleAdmin(deps: Ec2ServerDeps, req: IncomingMessage, res: ServerResponse, path: string) {
  const method = req.method ?? 'GET';
  if (path === '/state' && method === 'GET') {
    return sendJson(res, 200, {
      state: deps.state.snapshot(),
      faults: deps.faults.describe(),
      rateLimitTokens: deps.buckets?.levels() ?? null,
      endpoints: deps.describeEndpoints(),
    });
  }
  if (path === '/endpoints' && method === 'GET') return sendJson(res, 200, deps.describeEndpoints());
  if (path === '/calls' && method === 'GET') return sendJson(res, 200, deps.calls);
  if (path === '/calls' && method === 'DELETE') {
    deps.calls.length = 0;
    return sendJson(res, 204, undefined);
  }
  if (path === '/faults' && method === 'DELETE') {
    deps.faults.clear();
    return sendJson(res, 204, undefined);
  }
  if (path === '/faults' && method === 'POST') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readBody(req));
    } catch {
      return sendJson(res, 400, { code: 'FAULT_INVALID', message: 'body must be JSON' });
    }
    try {
      const specs = (Array.isArray(parsed) ? parsed : [parsed]).map(parseFaultSpec);
      for (const s of specs) deps.faults.add(s);
      return sendJson(res, 204, undefined);
    } catch (e) {
      if (isFaultSpecError(e)) return sendJson(res, 400, { code: e.code, message: e.message });
      throw e;
    }
  }
  return sendJson(res, 404, { code: 'NOT_FOUND', message: `no admin route ${method} ${path}` });
}

/** Creates (but does not start) the HTTP server for the EC2 API and the `/_sim` admin routes. */
export function createEc2Server(deps: Ec2ServerDeps): Server {
  return createServer((req, res) => {
    const url = (req.url ?? '/').replace(/^\/+/, '/');
    const path = url.split('?')[0] ?? '/';
    const run = async () => {
      if (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)) {
        return handleAdmin(deps, req, res, path.slice(ADMIN_PREFIX.length) || '/');
      }
      if (req.method !== 'POST') {
        const requestId = deps.state.ids.requestId();
        res.writeHead(400, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': requestId });
        res.end(renderError('InvalidAction', 'EC2 Query API requests must be POSTed to /', requestId));
        return;
      }
      const body = await readBody(req);
      const at = deps.clock.now();
      const r = await handleEc2Request(deps, body);
      if (deps.calls.length >= MAX_CALLS) deps.calls.splice(0, deps.calls.length - MAX_CALLS + 1);
      deps.calls.push({
        action: r.action,
        requestId: r.requestId,
        at,
        status: r.status,
        ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
      });
      res.writeHead(r.status, {
        'content-type': 'text/xml;charset=UTF-8',
        'x-amzn-requestid': r.requestId,
        'content-length': Buffer.byteLength(r.xml),
      });
      res.end(r.xml);
    };
    run().catch((e: unknown) => {
      if (res.headersSent) return res.destroy();
      if (e instanceof BodyTooLarge) {
        res.shouldKeepAlive = false;
        return sendJson(res, 413, { code: 'BODY_TOO_LARGE', message: 'request body over 1 MiB' });
      }
      sendJson(res, 500, { code: 'INTERNAL', message: String(e) });
    });
  });
}
