import { RateLimitedTally, type TallyClock, timerClock } from '@vpc-cni-kit/token-bucket';
import { type DropObserver, HTTP_LIMITS } from './http-servers.js';
import type { Logger } from './logger.js';
import type { HttpEndpointName } from './metrics.js';

/** At most one warning a minute per endpoint: one token, refilled every 60 s. */
const WARN_RATE = { capacity: 1, refillPerSecond: 1 / 60 } as const;

/**
 * Makes the connections `endpoint` closes over {@link HTTP_LIMITS}' `maxConnections` visible without letting a
 * flood fill the log: each one goes to `count` at once (the daemon's metric), and `log` gets at most one warning a
 * minute saying how many were closed since the last one, the cap, the peer of the latest, and what to look for.
 * The first drop is warned at once; the ones after it within the minute are summed into one line as the minute
 * ends. `clock` is injected for tests.
 */
export function connectionDrops(
  endpoint: HttpEndpointName,
  log: Logger,
  count: () => void,
  clock: TallyClock = timerClock,
): DropObserver {
  let lastPeer: string | undefined;
  const tally = new RateLimitedTally(WARN_RATE, clock, (dropped) =>
    log.warn(`${endpoint} endpoint refused ${dropped} connection${dropped === 1 ? '' : 's'}: at its cap`, {
      endpoint,
      dropped,
      maxConnections: HTTP_LIMITS.maxConnections,
      ...(lastPeer === undefined ? {} : { lastPeer }),
      hint: 'a client is holding many connections open to this endpoint (`ss -tnp` on the node lists them by peer); a scrape, `aws-node status` or curl needs one at a time',
    }),
  );
  return {
    dropped: (peer) => {
      lastPeer = peer;
      count();
      tally.add();
    },
    stop: () => tally.stop(),
  };
}
