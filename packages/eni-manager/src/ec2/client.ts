import type { EC2Client } from '@aws-sdk/client-ec2';
import type { TokenBucketConfig } from '@vpc-cni-kit/token-bucket';
import { type BackoffPolicy, backoffDelay, ec2RetryBackoff } from '../backoff.js';
import { type Clock, type RandomSource, systemClock } from '../clock.js';
import { type EniManagerError, eniError } from '../errors.js';
import { type CallHooks, reportCall } from '../hooks.js';
import { type ActionFamily, RateLimiter } from '../rate-limiter.js';
import { region } from '../shapes.js';
import { ambiguousErrorCodes, type Ec2Action, type Ec2Actions, nonIdempotentActions } from './actions.js';
import { mapEc2Error } from './error-map.js';

/** Static credentials; omit them to let the SDK's default provider chain find some. */
export interface Ec2Credentials {
  /** Access key id. */
  readonly accessKeyId: string;
  /** Secret access key. */
  readonly secretAccessKey: string;
  /** Session token, for temporary credentials. */
  readonly sessionToken?: string;
}

/** Options for {@link createEc2Api}. */
export interface Ec2ApiOptions {
  /** AWS region, e.g. from {@link NodeInfo.region}. */
  readonly region: string;
  /** Endpoint override (the reference's `AWS_EC2_ENDPOINT`), e.g. an ec2-simulator URL. */
  readonly endpoint?: string;
  /** Credentials; default: the SDK's provider chain. */
  readonly credentials?: Ec2Credentials;
  /** Per-request HTTP timeout in ms (the reference's `HTTP_TIMEOUT`, at least 10 s there). Default 10000. */
  readonly requestTimeoutMs?: number;
  /** Attempts per call, the first included, for retryable errors. Default 10 (as the reference). */
  readonly maxAttempts?: number;
  /** Backoff between attempts. Default {@link ec2RetryBackoff}. */
  readonly backoff?: BackoffPolicy;
  /** Client-side token buckets per action family. Default {@link defaultRateLimits}. */
  readonly rateLimits?: Partial<Record<ActionFamily, TokenBucketConfig>>;
  /** Clock for the token buckets, backoff and latency. Default {@link systemClock}. */
  readonly clock?: Clock;
  /** Jitter source. Default `Math.random`. */
  readonly random?: RandomSource;
  /** Observers, called once per attempt. */
  readonly hooks?: CallHooks;
  /** Extra user-agent text (the reference sends `amazon-vpc-cni-k8s/<version>`). */
  readonly userAgent?: string;
}

/**
 * The EC2 port the rest of this package is written against: one typed method for every action it uses, with
 * client-side rate limiting, bounded jittered retries of retryable errors, per-attempt hooks and typed errors.
 */
export interface Ec2Api {
  /** Sends `action` with `input`; rejects with an {@link EniManagerError}. */
  call<A extends Ec2Action>(action: A, input: Ec2Actions[A][0]): Promise<Ec2Actions[A][1]>;
  /** Releases the HTTP connections. */
  destroy(): void;
}

type Sdk = typeof import('./sdk.js');

/**
 * An {@link Ec2Api} over `@aws-sdk/client-ec2`. The SDK is imported on the first call, so importing this
 * package (e.g. from a CNI plugin) does not load it. The SDK's own retries are off: this client retries, so
 * every attempt passes the token bucket and is reported to the hooks, and no hidden retry quota drains.
 */
export function createEc2Api(options: Ec2ApiOptions): Ec2Api {
  if (region(options.region) === undefined) {
    throw eniError('InvalidInput', `not an AWS region: ${JSON.stringify(options.region)}`);
  }
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 10));
  const backoff = options.backoff ?? ec2RetryBackoff;
  const limiter = new RateLimiter(clock, options.rateLimits);
  let loaded: Promise<{ sdk: Sdk; client: EC2Client }> | undefined;

  function load(): Promise<{ sdk: Sdk; client: EC2Client }> {
    // `./sdk.js` names the commands it uses, so a bundle of this package keeps only those.
    loaded ??= import('./sdk.js').then((sdk) => {
      const client = new sdk.EC2Client({
        region: options.region,
        maxAttempts: 1,
        requestHandler: {
          requestTimeout: options.requestTimeoutMs ?? 10_000,
          connectionTimeout: 5_000,
          // Without this the handler only logs a warning when the timeout passes and keeps waiting.
          throwOnRequestTimeout: true,
        },
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
        ...(options.userAgent === undefined ? {} : { customUserAgent: options.userAgent }),
      });
      return { sdk, client };
    });
    return loaded;
  }

  async function call<A extends Ec2Action>(action: A, input: Ec2Actions[A][0]): Promise<Ec2Actions[A][1]> {
    const { sdk, client } = await load();
    const Command = sdk.ec2Commands[action] as unknown as new (
      input: Ec2Actions[A][0],
    ) => Parameters<EC2Client['send']>[0];
    let last: EniManagerError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const throttledMs = await limiter.acquire(action);
      const started = clock.now();
      try {
        const output = (await client.send(new Command(input))) as Ec2Actions[A][1];
        reportCall(options.hooks, {
          service: 'ec2',
          action,
          latencyMs: clock.now() - started,
          errorCode: undefined,
          attempt,
          throttledMs,
        });
        return output;
      } catch (raw) {
        last = mapEc2Error(raw, action, attempt);
        reportCall(options.hooks, {
          service: 'ec2',
          action,
          latencyMs: clock.now() - started,
          errorCode: last.awsCode ?? last.code,
          attempt,
          throttledMs,
        });
        if (!last.retryable || attempt === maxAttempts) throw last;
        // A lost reply of a call that is not idempotent: retrying could act twice; the caller re-reads.
        if (nonIdempotentActions.has(action) && ambiguousErrorCodes.has(last.code)) throw last;
        if (last.code === 'RequestLimitExceeded') limiter.penalize(action);
        await clock.sleep(backoffDelay(backoff, attempt - 1, random));
      }
    }
    throw last ?? eniError('Ec2Transport', `${action}: no attempt was made`, { action });
  }

  return {
    call,
    destroy: () => {
      void loaded?.then(({ client }) => client.destroy()).catch(() => undefined);
    },
  };
}
