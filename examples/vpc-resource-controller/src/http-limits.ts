import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/**
 * How long a client may take over a request, in milliseconds, before its connection is closed: its TLS handshake
 * (`handshakeMs`, HTTPS only), its headers (`headersMs`), its whole request with the body (`requestMs`), checked
 * every `checkEveryMs`; between requests a kept-alive connection stays open `keepAliveMs` (Node's default, written
 * down). Node's defaults let a client that sends its headers a byte at a time hold a connection for 60 s, one
 * that never finishes its body for 300 s, and one that never starts its TLS handshake for 120 s.
 *
 * The time limits bound how long one connection lasts, not how many a client opens, so each server also holds at
 * most `maxConnections` at once: one more is closed as soon as it is accepted, before a byte of it (or of its TLS
 * handshake) is read (Node's `server.maxConnections`), and reported to the server's {@link DropObserver}.
 */
export interface HttpLimits {
  /** TLS handshake (HTTPS servers). */
  readonly handshakeMs?: number;
  /** Request line and headers. */
  readonly headersMs: number;
  /** Whole request, body included. */
  readonly requestMs: number;
  /** Idle kept-alive connection between requests. */
  readonly keepAliveMs: number;
  /** How often the headers and request deadlines are checked. */
  readonly checkEveryMs: number;
  /** Connections held at once; one more is closed unread. */
  readonly maxConnections: number;
}

/**
 * Told of each connection a server closed because it already held its `maxConnections`, and stopped when the
 * server has closed.
 */
export interface DropObserver {
  /** One connection from `peer` (its IP address, when Node knows it) was closed unread. */
  dropped(peer: string | undefined): void;
  /** The server is closed: nothing more will be dropped. */
  stop(): void;
}

/**
 * The health probes' and `/metrics` limits. Their clients — the kubelet's probes (1 s timeout by default) and a
 * Prometheus scrape (10 s) — send a whole GET at once, over one connection each: 64 at once is several times what
 * the kubelet and a scraper or two hold together, and keeps a client that opens connections in a loop from
 * spending the process's file descriptors and memory.
 */
export const PROBE_HTTP_LIMITS: HttpLimits = {
  headersMs: 5_000,
  requestMs: 10_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
  maxConnections: 64,
};

/**
 * The admission webhooks' limits. The kube-apiserver sends each AdmissionReview (3 MiB at most here) at once
 * over a kept-alive TLS connection, and gives up on a call after the webhook's `timeoutSeconds` (10 s by default,
 * 30 s at most), so a request that is not in after 15 s serves nobody.
 *
 * `maxConnections` is high on purpose: each API server opens one HTTP/1.1 connection per admission call in flight,
 * so a cluster creating many pods at once (a large Deployment or Job scaled up, several API servers behind the
 * Service) may hold hundreds, and a connection refused here is a pod create that fails or goes through unmutated
 * (by the webhook's `failurePolicy`). An API server runs at most 600 requests at once by default
 * (`--max-requests-inflight` 400 plus `--max-mutating-requests-inflight` 200, shared by API Priority and Fairness),
 * and only pod creates and updates call this webhook, so 1024 leaves room for one or two API servers at their
 * limit (and for idle pooled connections, closed after `keepAliveMs`) while staying far below the file
 * descriptors the process may open.
 */
export const WEBHOOK_HTTP_LIMITS: HttpLimits = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 15_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
  maxConnections: 1024,
};

/**
 * Sets `limits` on `server`; call it before the server listens (the checks start with it). `drops` is told of each
 * connection closed over `maxConnections`, and stopped when the server closes.
 */
export function limitHttpServer(
  server: Server | HttpsServer,
  limits: HttpLimits,
  drops?: DropObserver,
): void {
  server.headersTimeout = limits.headersMs;
  server.requestTimeout = limits.requestMs;
  server.keepAliveTimeout = limits.keepAliveMs;
  // Read when the server starts listening; @types/node declares it only as a createServer option.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    limits.checkEveryMs;
  // Node closes a connection over the cap as it accepts it, and says so with 'drop'.
  server.maxConnections = limits.maxConnections;
  if (drops === undefined) return;
  server.on('drop', (d) => drops.dropped(d?.remoteAddress));
  server.once('close', () => drops.stop());
}
