/**
 * The source of time for the datastore: milliseconds since the Unix epoch. Inject a test clock in tests
 * (`ManualClock` from `@vpc-cni-kit/datastore/testing`) instead of patching `Date.now`.
 */
export interface Clock {
  /** Current time, in milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock (`Date.now()`), for production wiring. */
export const systemClock: Clock = { now: () => Date.now() };
