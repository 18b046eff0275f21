import { RateLimitedTally, type TallyClock, timerClock } from '@vpc-cni-kit/token-bucket';
import type { Logger } from './controller/logger.js';
import type { ControllerMetrics, HttpEndpointName } from './controller/metrics.js';
import type { DropObserver, HttpLimits } from './http-limits.js';

/**
 * Reports the connections the `endpoint` server closes over `limits.maxConnections`: each is counted at once in
 * `http_connections_dropped_total{endpoint}` (when `metrics` is given, the series starting at 0), and `log` gets
 * at most one warning a minute (a {@link RateLimitedTally}) with how many were closed since the last one, the cap,
 * the latest peer and a hint, so a flood of connections is a line a minute rather than a line each. `clock` is
 * injected for tests.
 */
export function connectionDrops(
  endpoint: HttpEndpointName,
  limits: HttpLimits,
  log: Logger,
  metrics?: ControllerMetrics,
  clock: TallyClock = timerClock,
): DropObserver {
  metrics?.httpConnectionsDropped(endpoint, 0);
  let lastPeer: string | undefined;
  const warnings = new RateLimitedTally({ capacity: 1, refillPerSecond: 1 / 60 }, clock, (dropped) =>
    log.log('warn', 'connections refused over the cap', {
      endpoint,
      dropped,
      maxConnections: limits.maxConnections,
      lastPeer,
      hint:
        endpoint === 'webhook'
          ? 'a client is holding many connections open to the webhook; if the peer is an API server, admission calls are being refused: run more replicas behind the webhook Service'
          : 'a client is holding many connections open to this endpoint; a probe or a scrape needs one at a time',
    }),
  );
  return {
    dropped(peer) {
      lastPeer = peer;
      metrics?.httpConnectionsDropped(endpoint);
      warnings.add();
    },
    stop: () => warnings.stop(),
  };
}
