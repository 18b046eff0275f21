import { TokenBucket, type TokenBucketConfig } from '@vpc-cni-kit/token-bucket';
import type { Clock } from './clock.js';

/**
 * EC2 throttles per account per action family (see `performance-and-peers.md` A3). This client keeps one bucket
 * per family too, so one node never spends more than its share of the account's budget.
 */
export type ActionFamily =
  | 'describe'
  | 'attachDetach'
  | 'createDelete'
  | 'assignUnassign'
  | 'modify'
  | 'tags';

/** The family an EC2 action is counted against. */
export function actionFamily(action: string): ActionFamily {
  if (action.startsWith('Describe') || action.startsWith('Get')) return 'describe';
  if (action === 'CreateNetworkInterface' || action === 'DeleteNetworkInterface') return 'createDelete';
  if (/^(Assign|Unassign)(PrivateIpAddresses|Ipv6Addresses)$/.test(action)) return 'assignUnassign';
  if (action === 'ModifyNetworkInterfaceAttribute') return 'modify';
  if (action === 'CreateTags' || action === 'DeleteTags') return 'tags';
  return 'attachDetach';
}

/**
 * Per-node defaults: a tenth of the account's published burst, and a refill that lets one node keep making
 * progress while a fleet of hundreds stays under the account's refill rate.
 */
export const defaultRateLimits: Readonly<Record<ActionFamily, TokenBucketConfig>> = {
  describe: { capacity: 10, refillPerSecond: 2 },
  attachDetach: { capacity: 5, refillPerSecond: 1 },
  createDelete: { capacity: 10, refillPerSecond: 1 },
  assignUnassign: { capacity: 10, refillPerSecond: 1 },
  modify: { capacity: 10, refillPerSecond: 1 },
  tags: { capacity: 10, refillPerSecond: 1 },
};

/** One {@link TokenBucket} per {@link ActionFamily}. */
export class RateLimiter {
  readonly #buckets: Map<ActionFamily, TokenBucket>;

  /** Buckets from `limits` (missing families take {@link defaultRateLimits}). */
  constructor(clock: Clock, limits: Partial<Record<ActionFamily, TokenBucketConfig>> = {}) {
    this.#buckets = new Map();
    for (const family of Object.keys(defaultRateLimits) as ActionFamily[]) {
      this.#buckets.set(family, new TokenBucket(limits[family] ?? defaultRateLimits[family], clock));
    }
  }

  /** Waits for a token for `action`'s family; resolves to the milliseconds waited. */
  acquire(action: string): Promise<number> {
    return this.#bucket(action).take();
  }

  /** Empties `action`'s bucket after EC2 throttled it. */
  penalize(action: string): void {
    this.#bucket(action).drain();
  }

  #bucket(action: string): TokenBucket {
    return this.#buckets.get(actionFamily(action))!;
  }
}
