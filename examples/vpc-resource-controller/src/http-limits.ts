import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/**
 * How long a client may take over a request, in milliseconds, before its connection is closed: its TLS handshake
 * (`handshakeMs`, HTTPS only), its headers (`headersMs`), its whole request with the body (`requestMs`), checked
 * every `checkEveryMs`; between requests a kept-alive connection stays open `keepAliveMs` (Node's default, written
 * down). Node's defaults let a client that sends its headers a byte at a time hold a connection for 60 s, one
 * that never finishes its body for 300 s, and one that never starts its TLS handshake for 120 s.
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
}

/**
 * The health probes' and `/metrics` limits. Their clients — the kubelet's probes (1 s timeout by default) and a
 * Prometheus scrape (10 s) — send a whole GET at once.
 */
export const PROBE_HTTP_LIMITS: HttpLimits = {
  headersMs: 5_000,
  requestMs: 10_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
};

/**
 * The admission webhooks' limits. The kube-apiserver sends each AdmissionReview (3 MiB at most here) at once
 * over a kept-alive TLS connection, and gives up on a call after the webhook's `timeoutSeconds` (10 s by default,
 * 30 s at most), so a request that is not in after 15 s serves nobody.
 */
export const WEBHOOK_HTTP_LIMITS: HttpLimits = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 15_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
};

/** Sets `limits` on `server`; call it before the server listens (the checks start with it). */
export function limitHttpServer(server: Server | HttpsServer, limits: HttpLimits): void {
  server.headersTimeout = limits.headersMs;
  server.requestTimeout = limits.requestMs;
  server.keepAliveTimeout = limits.keepAliveMs;
  // Read when the server starts listening; @types/node declares it only as a createServer option.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    limits.checkEveryMs;
}
