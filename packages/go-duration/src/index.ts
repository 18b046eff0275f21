/**
 * Go's `time.Duration` text, read and written in milliseconds: the one implementation behind aws-node's
 * grpc-health-probe flags and messages and the resource controller's Event text.
 *
 * @packageDocumentation
 */

export { formatGoDuration, parseGoDuration } from './go-duration.js';
