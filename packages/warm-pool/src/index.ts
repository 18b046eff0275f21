export { decideAdaptive } from './adaptive.js';
export {
  ADAPTIVE_DEFAULTS,
  arrivalRate,
  decayedPeak,
  horizonMs,
  initialAdaptiveState,
  nextRecurringBurst,
  observe,
  resolveAdaptiveSettings,
  startupPrior,
} from './adaptive-demand.js';
export type {
  AdaptiveDecision,
  AdaptiveInput,
  AdaptiveObservation,
  AdaptiveReason,
  AdaptiveReasonCode,
  AdaptiveSettings,
  AdaptiveState,
  AdaptiveTargets,
  ArrivalSample,
  ResolvedAdaptiveSettings,
} from './adaptive-types.js';
export {
  INSUFFICIENT_ADDRESSES_BACKOFF_MS,
  MIN_ENI_AGE_MS,
  PREFIX_SIZE,
  SHRINK_INTERVAL_MS,
} from './constants.js';
export { decide } from './decide.js';
export type { WarmPoolErrorCode } from './errors.js';
export { isWarmPoolError, WarmPoolError } from './errors.js';
export type { PoolFigures } from './figures.js';
export { poolFigures } from './figures.js';
export type {
  AllocationUnit,
  DecisionReason,
  PoolCidr,
  PoolDecision,
  PoolEni,
  PoolInput,
  PoolLimits,
  PoolStats,
  PoolTargets,
  PoolTiming,
  ReasonCode,
} from './types.js';
export { DEFAULT_TARGETS } from './types.js';
