import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isRegularFileError } from '@vpc-cni-kit/regular-file';
import { connectionDrops } from '../connection-drops.js';
import type { Logger } from '../controller/logger.js';
import type { ControllerMetrics } from '../controller/metrics.js';
import { limitHttpServer, WEBHOOK_HTTP_LIMITS } from '../http-limits.js';
import {
  ANNOTATION_VALIDATION_PATH,
  DEFAULT_ANNOTATION_WRITERS,
  reviewPodAnnotation,
} from './annotation-validation.js';
import { CertificateReloader, readCertificatePair } from './cert-reloader.js';
import { POD_MUTATION_PATH, type PolicyLookup, type ReviewAnswer, reviewPod } from './pod-mutation.js';

/** Options of {@link serveWebhook}. */
export interface WebhookServerOptions {
  /** PEM certificate file (the Secret's `tls.crt`; its names must include `<service>.<namespace>.svc`). */
  readonly certFile: string;
  /** PEM private key file (the Secret's `tls.key`). */
  readonly keyFile: string;
  /** Listen address ('' = every address). */
  readonly host: string;
  /** Port (0 picks one). */
  readonly port: number;
  /** How a pod's security groups are found. */
  readonly lookup: PolicyLookup;
  /**
   * The users that may add, change or remove a pod's `vpc.amazonaws.com/pod-eni` annotation (the controller's own
   * identities). @defaultValue {@link DEFAULT_ANNOTATION_WRITERS}
   */
  readonly annotationWriters?: readonly string[] | undefined;
  /** Where mutations and refusals are reported. */
  readonly log: Logger;
  /** Where requests are counted (`controller_runtime_webhook_*`). */
  readonly metrics?: ControllerMetrics | undefined;
  /**
   * Serve a new certificate when the files change (a rotated Secret), checked on file events and every `pollMs`;
   * `false`: read once. @defaultValue `{ pollMs: 10000 }`
   */
  readonly reload?: false | { readonly pollMs?: number | undefined } | undefined;
}

/** Why the webhook server could not start. */
export class WebhookStartError extends Error {
  /** Discriminator. */
  readonly kind = 'WebhookStartError' as const;
  /**
   * @param code - `CERT_UNREADABLE` (a file is missing, is not a regular file, cannot be read or is not PEM) or
   *   `LISTEN_FAILED`
   * @param message - one line with the cause
   */
  constructor(
    readonly code: 'CERT_UNREADABLE' | 'LISTEN_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookStartError';
  }
}

/** Admission reviews are small; the API server's own request limit bounds them (a larger body is a 400). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

function reply(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res
    .writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) })
    .end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new Error('the request body is larger than 3 MiB');
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Error('the request body is not JSON');
  }
}

/**
 * Serves the pod webhooks over HTTPS with the certificate and key read from files (as the reference mounts its
 * serving certificate Secret), reloaded when they change (a valid new pair is served from the next handshake on;
 * an invalid one is a warning and the old pair stays): `POST /mutate-v1-pod` (the mutation, {@link reviewPod})
 * and `POST /validate-v1-pod` (the annotation validation, {@link reviewPodAnnotation}) answer AdmissionReviews; a
 * malformed body (or one over 3 MiB) is 400 with the reason, another path 404, another method 405. A client
 * that is slow to send its request is closed within {@link WEBHOOK_HTTP_LIMITS}, and a connection over its
 * `maxConnections` at once (counted in `metrics`, warned in `log` at most once a minute). Rejects with
 * {@link WebhookStartError}.
 */
export async function serveWebhook(
  o: WebhookServerOptions,
): Promise<{ server: Server; address: AddressInfo }> {
  let cert: Buffer;
  let key: Buffer;
  try {
    ({ cert, key } = readCertificatePair(o.certFile, o.keyFile));
  } catch (e) {
    if (!isRegularFileError(e)) throw e;
    throw new WebhookStartError('CERT_UNREADABLE', e.message);
  }
  const writers = o.annotationWriters ?? DEFAULT_ANNOTATION_WRITERS;
  let server: Server;
  try {
    server = createServer({ cert, key, handshakeTimeout: WEBHOOK_HTTP_LIMITS.handshakeMs }, (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== POD_MUTATION_PATH && path !== ANNOTATION_VALIDATION_PATH)
        return reply(res, 404, 'not found\n');
      if (o.metrics) {
        const done = o.metrics.webhookRequest(path);
        // 'close' comes for every request, answered or not (a client that hung up never sees 'finish').
        res.once('close', () => done(res.writableFinished ? res.statusCode : undefined));
      }
      if (req.method !== 'POST') return reply(res, 405, 'method not allowed\n');
      const review = (body: unknown): Promise<ReviewAnswer> =>
        path === POD_MUTATION_PATH
          ? reviewPod(body, o.lookup)
          : Promise.resolve(reviewPodAnnotation(body, writers));
      readJson(req)
        .then(review)
        .then(
          (answer) => {
            if (answer.status === 400) {
              o.log.log('warn', 'malformed admission review refused', { problem: answer.body });
              return reply(res, 400, `${answer.body}\n`);
            }
            const r = answer.body.response as { allowed: boolean; status?: { message?: string } };
            if (answer.mutated) o.log.log('debug', 'pod gets the pod-eni resource', {});
            else if (!r.allowed) o.log.log('warn', 'pod refused', { path, problem: r.status?.message });
            reply(res, 200, JSON.stringify(answer.body), 'application/json');
          },
          (e: unknown) => {
            o.log.log('warn', 'malformed admission review refused', {
              problem: String((e as Error).message ?? e),
            });
            reply(res, 400, `${(e as Error).message ?? String(e)}\n`);
          },
        );
    });
  } catch (e) {
    throw new WebhookStartError(
      'CERT_UNREADABLE',
      `the certificate or key is not usable PEM: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  limitHttpServer(
    server,
    WEBHOOK_HTTP_LIMITS,
    connectionDrops('webhook', WEBHOOK_HTTP_LIMITS, o.log, o.metrics),
  );
  const reloader =
    o.reload === false
      ? undefined
      : new CertificateReloader({
          certFile: o.certFile,
          keyFile: o.keyFile,
          current: { cert, key },
          apply: (pair) => server.setSecureContext({ cert: pair.cert, key: pair.key }),
          log: o.log,
          pollMs: o.reload?.pollMs,
        });
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new WebhookStartError(
          'LISTEN_FAILED',
          `cannot listen on ${o.host || '*'}:${o.port}: ${e.code ?? e.message}`,
        ),
      ),
    );
    server.listen(o.port, o.host === '' ? undefined : o.host, () => {
      server.removeAllListeners('error');
      if (reloader !== undefined) {
        reloader.start();
        server.once('close', () => reloader.stop());
      }
      resolve({ server, address: server.address() as AddressInfo });
    });
  });
}
