/** Shrinks (CIDR releases) happen at most this often: 30 s (`decreaseIPPoolInterval`). */
export const SHRINK_INTERVAL_MS = 30_000;
/** An ENI younger than this is never freed: 1 min (`minENILifeTime`). */
export const MIN_ENI_AGE_MS = 60_000;
/** No growth for this long after a subnet-full error: 120 s (`insufficientCidrErrorCooldown`). */
export const INSUFFICIENT_ADDRESSES_BACKOFF_MS = 120_000;
/** Addresses in an IPv4 /28 prefix. */
export const PREFIX_SIZE = 16;
