/**
 * One token bucket for vpc-cni-kit: the client-side EC2 rate limiter of `@vpc-cni-kit/eni-manager` and the
 * throttling of `@vpc-cni-kit/ec2-simulator` are both this class. {@link RateLimitedTally} puts one in front of a
 * report (a warning that a flood of events would otherwise repeat line by line).
 *
 * @packageDocumentation
 */

export { RateLimitedTally, type TallyClock, timerClock } from './rate-limited-tally.js';
export { type BucketClock, TokenBucket, type TokenBucketConfig } from './token-bucket.js';
