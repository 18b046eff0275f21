/**
 * One token bucket for vpc-cni-kit: the client-side EC2 rate limiter of `@vpc-cni-kit/eni-manager` and the
 * throttling of `@vpc-cni-kit/ec2-simulator` are both this class.
 *
 * @packageDocumentation
 */

export { type BucketClock, TokenBucket, type TokenBucketConfig } from './token-bucket.js';
