import { type BackoffPolicy, backoffDelay } from '../backoff.js';
import { type Clock, type RandomSource, systemClock } from '../clock.js';
import { type EniManagerError, eniError, isEniManagerError } from '../errors.js';
import { type CallHooks, reportCall } from '../hooks.js';
import { httpExchange } from './http.js';

/** Options for {@link ImdsClient}. */
export interface ImdsClientOptions {
  /** Base URL of IMDS. Default `http://169.254.169.254`. */
  readonly endpoint?: string;
  /** Lifetime requested for the session token, in seconds (1–21600). Default 21600. */
  readonly tokenTtlSeconds?: number;
  /** Per-request timeout in milliseconds. Default 2000. */
  readonly timeoutMs?: number;
  /** Attempts per read when IMDS is unavailable (timeouts, 5xx). Default 3. */
  readonly maxAttempts?: number;
  /** Backoff between those attempts. Default 50 ms → 1 s, ×2, jitter 0.2. */
  readonly backoff?: BackoffPolicy;
  /** Clock for token expiry and backoff. Default {@link systemClock}. */
  readonly clock?: Clock;
  /** Jitter source. Default `Math.random`. */
  readonly random?: RandomSource;
  /** Observers, called once per HTTP attempt (the token PUT included, as action `api/token`). */
  readonly hooks?: CallHooks;
}

const TOKEN_PATH = '/latest/api/token';
const META_PREFIX = '/latest/meta-data/';
// Renew this long before the token's stated expiry, so a token never expires in flight.
const RENEW_MARGIN_MS = 60_000;
const TOKEN_SHAPE = /^[\x21-\x7e]{1,1024}$/;
const PATH_SHAPE = /^[A-Za-z0-9._:/-]*$/;

/**
 * An IMDSv2 client over `node:http`: it PUTs for a session token once, reuses it for every GET until shortly
 * before its TTL runs out (or IMDS answers 401), and never falls back to IMDSv1.
 */
export class ImdsClient {
  readonly #base: URL;
  readonly #ttlSeconds: number;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: BackoffPolicy;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  readonly #hooks: CallHooks | undefined;
  #token: { value: string; expiresAt: number } | undefined;
  #pending: Promise<string> | undefined;

  /** Validates the options; throws `InvalidInput` on a bad endpoint or TTL. */
  constructor(options: ImdsClientOptions = {}) {
    const endpoint = options.endpoint ?? 'http://169.254.169.254';
    let base: URL;
    try {
      base = new URL(endpoint);
    } catch (cause) {
      throw eniError('InvalidInput', `IMDS endpoint is not a URL: ${JSON.stringify(endpoint)}`, { cause });
    }
    if (base.protocol !== 'http:')
      throw eniError('InvalidInput', `IMDS endpoint must be http:, got ${base.protocol}`);
    const ttl = options.tokenTtlSeconds ?? 21_600;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > 21_600) {
      throw eniError('InvalidInput', `IMDS token TTL must be an integer in 1..21600 seconds, got ${ttl}`);
    }
    this.#base = base;
    this.#ttlSeconds = ttl;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.#backoff = options.backoff ?? { baseMs: 50, maxMs: 1000, factor: 2, jitter: 0.2 };
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#hooks = options.hooks;
  }

  /**
   * The text at `meta-data/<path>`. Throws `ImdsNotFound` on 404, `ImdsUnauthorized` when a fresh token is
   * refused, `ImdsUnavailable` after the attempts run out.
   */
  async get(path: string): Promise<string> {
    const answer = await this.getOptional(path);
    if (answer === undefined)
      throw eniError('ImdsNotFound', `IMDS has no meta-data/${path}`, { action: path });
    return answer;
  }

  /** Like {@link ImdsClient.get}, but a 404 resolves to `undefined`. */
  async getOptional(path: string): Promise<string | undefined> {
    if (!PATH_SHAPE.test(path) || path.includes('..')) {
      throw eniError('InvalidInput', `not an IMDS meta-data path: ${JSON.stringify(path)}`, { action: path });
    }
    let lastError: EniManagerError | undefined;
    for (let attempt = 1; attempt <= this.#maxAttempts; attempt++) {
      try {
        return await this.#getOnce(path, attempt);
      } catch (error) {
        if (!isEniManagerError(error) || !error.retryable) throw error;
        lastError = error;
        if (attempt < this.#maxAttempts)
          await this.#clock.sleep(backoffDelay(this.#backoff, attempt - 1, this.#random));
      }
    }
    throw eniError(
      'ImdsUnavailable',
      `IMDS unavailable for meta-data/${path} after ${this.#maxAttempts} attempts`,
      {
        action: path,
        attempts: this.#maxAttempts,
        cause: lastError,
      },
    );
  }

  /** The lines of `meta-data/<path>` (a listing or a multi-value field), without blanks. 404 → `[]`. */
  async lines(path: string): Promise<string[]> {
    const text = await this.getOptional(path);
    if (text === undefined) return [];
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
  }

  async #getOnce(path: string, attempt: number): Promise<string | undefined> {
    let token = await this.#currentToken();
    for (let refreshed = false; ; refreshed = true) {
      const status = await this.#exchange(path, attempt, token);
      if (status.kind === 'ok') return status.body;
      if (status.kind === 'notFound') return undefined;
      // 401: the token expired or IMDS restarted. Take one fresh token, then give up.
      if (refreshed) {
        throw eniError('ImdsUnauthorized', `IMDS refused a fresh token for meta-data/${path}`, {
          action: path,
          httpStatus: 401,
        });
      }
      this.#token = undefined;
      token = await this.#currentToken();
    }
  }

  async #exchange(
    path: string,
    attempt: number,
    token: string,
  ): Promise<{ kind: 'ok'; body: string } | { kind: 'notFound' } | { kind: 'unauthorized' }> {
    const url = new URL(META_PREFIX + path, this.#base);
    const started = this.#clock.now();
    let errorCode: string | undefined;
    try {
      const answer = await httpExchange(
        url,
        'GET',
        { 'x-aws-ec2-metadata-token': token },
        this.#timeoutMs,
      ).catch((cause: unknown) => {
        throw eniError('ImdsUnavailable', `IMDS GET meta-data/${path} failed: ${String(cause)}`, {
          action: path,
          cause,
        });
      });
      if (answer.status === 200) return { kind: 'ok', body: answer.body };
      if (answer.status === 404) return { kind: 'notFound' };
      if (answer.status === 401) {
        errorCode = 'ImdsUnauthorized';
        return { kind: 'unauthorized' };
      }
      const code = answer.status >= 500 || answer.status === 429 ? 'ImdsUnavailable' : 'ImdsInvalidResponse';
      throw eniError(code, `IMDS GET meta-data/${path} answered HTTP ${answer.status}`, {
        action: path,
        httpStatus: answer.status,
      });
    } catch (error) {
      errorCode = isEniManagerError(error) ? error.code : 'ImdsUnavailable';
      throw error;
    } finally {
      reportCall(this.#hooks, {
        service: 'imds',
        action: path,
        latencyMs: this.#clock.now() - started,
        errorCode,
        attempt,
        throttledMs: 0,
      });
    }
  }

  #currentToken(): Promise<string> {
    const token = this.#token;
    if (token !== undefined && this.#clock.now() < token.expiresAt) return Promise.resolve(token.value);
    // Concurrent readers share one PUT.
    this.#pending ??= this.#fetchToken().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetchToken(): Promise<string> {
    const url = new URL(TOKEN_PATH, this.#base);
    const started = this.#clock.now();
    let errorCode: string | undefined;
    try {
      const answer = await httpExchange(
        url,
        'PUT',
        { 'x-aws-ec2-metadata-token-ttl-seconds': String(this.#ttlSeconds) },
        this.#timeoutMs,
      ).catch((cause: unknown) => {
        throw eniError('ImdsUnavailable', `IMDS token PUT failed: ${String(cause)}`, {
          action: 'api/token',
          cause,
        });
      });
      if (answer.status >= 500) {
        throw eniError('ImdsUnavailable', `IMDS token PUT answered HTTP ${answer.status}`, {
          action: 'api/token',
          httpStatus: answer.status,
        });
      }
      if (answer.status !== 200) {
        // 403/405 mean IMDSv2 is disabled or the hop limit is too low; this client does not fall back to IMDSv1.
        throw eniError('ImdsUnauthorized', `IMDS token PUT answered HTTP ${answer.status}`, {
          action: 'api/token',
          httpStatus: answer.status,
        });
      }
      const value = answer.body.trim();
      if (!TOKEN_SHAPE.test(value)) {
        throw eniError('ImdsInvalidResponse', 'IMDS token PUT returned an empty or non-printable token', {
          action: 'api/token',
        });
      }
      const header = answer.headers['x-aws-ec2-metadata-token-ttl-seconds'];
      const granted = Number(Array.isArray(header) ? header[0] : header);
      const ttlMs =
        (Number.isFinite(granted) && granted > 0 ? Math.min(granted, this.#ttlSeconds) : this.#ttlSeconds) *
        1000;
      const margin = Math.min(RENEW_MARGIN_MS, ttlMs / 2);
      this.#token = { value, expiresAt: started + ttlMs - margin };
      return value;
    } catch (error) {
      errorCode = isEniManagerError(error) ? error.code : 'ImdsUnavailable';
      throw error;
    } finally {
      reportCall(this.#hooks, {
        service: 'imds',
        action: 'api/token',
        latencyMs: this.#clock.now() - started,
        errorCode,
        attempt: 1,
        throttledMs: 0,
      });
    }
  }
}
