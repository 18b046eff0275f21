import type {
  AdaptiveObservation,
  AdaptiveSettings,
  AdaptiveState,
  ArrivalSample,
  ResolvedAdaptiveSettings,
} from './adaptive-types.js';
import { WarmPoolError } from './errors.js';

/** The adaptive policy's defaults (see {@link AdaptiveSettings} for each field). */
export const ADAPTIVE_DEFAULTS: ResolvedAdaptiveSettings = {
  minWarm: 2,
  maxWarm: 0,
  reactionMs: 5_000,
  initialLeadTimeMs: 2_000,
  peakHalfLifeMs: 15_000,
  leadTimeWeight: 0.3,
  band: 0.5,
  subnetShare: 0.5,
  eniHeadroom: true,
  burstMin: 3,
  prewarmMs: 20_000,
  batchWindowMs: 30_000,
  steadyBatchWindowMs: 15_000,
  rateWindowMs: 300_000,
  startupHalfLifeMs: 120_000,
  pressureMs: 300_000,
  releaseDelayMs: 0,
  surgeWindowMs: 1_500,
  surgeGrowth: 2,
  surgeHalfLifeMs: 300_000,
  recurAfter: 2,
  surgeToBurst: true,
  floorLeads: 1,
  burstyShare: 0.7,
  pressureLeadMs: 15_000,
  eniLeadMs: 5_000,
  surgeAim: true,
  surgeDefersEni: true,
  boundCover: true,
  boundBursts: true,
  burstHalfLifeMs: 1_800_000,
  drainAfterMs: 120_000,
  jobFanOut: true,
  wholeGrow: true,
};

/** The state to start from: nothing observed yet. */
export const initialAdaptiveState: AdaptiveState = {
  recent: [],
  peak: 0,
  peakAt: 0,
  arrivals: 0,
  departures: 0,
};

/** A burst's size is counted over this long after it starts. */
const BURST_SPAN_MS = 60_000;
/** Time constant of the burstiness average (share of arrivals that came in bursts), ms. */
const BURSTINESS_WINDOW_MS = 1_800_000;
/** Bursts remembered for recurrence. */
const MAX_BURSTS = 4;

/** A Job's pods arrive within this long of the first one seen bound (a Job controller creates them together). */
const FAN_OUT_SPAN_MS = 10_000;

/** How long the `jobFanOut` rule rests after a fan-out that was one pod. */
export const LONE_JOB_REST_MS = 1_800_000;

/**
 * The next burst, when the last three came at an even period (intervals within 10 % or 30 s of each other):
 * its expected start and size (the larger of the last two); undefined otherwise.
 */
export function nextRecurringBurst(
  state: AdaptiveState,
  recurAfter = 3,
): { at: number; size: number } | undefined {
  const b = state.bursts ?? [];
  if (b.length < Math.max(2, recurAfter)) return undefined;
  const z = b.at(-1) as ArrivalSample;
  const y = b.at(-2) as ArrivalSample;
  const i2 = z.at - y.at;
  if (recurAfter >= 3) {
    const x = b.at(-3) as ArrivalSample;
    const i1 = y.at - x.at;
    if (Math.abs(i1 - i2) > Math.max(0.1 * Math.max(i1, i2), 30_000)) return undefined;
    return { at: z.at + (i1 + i2) / 2, size: Math.max(y.count, z.count) };
  }
  return { at: z.at + i2, size: Math.max(y.count, z.count) };
}

/**
 * The size a surge grows for: the largest remembered burst, leaving out a burst the node saw while it was
 * starting (one that began within `startupMs` of the first observation) once its one-minute span is over — a new
 * node's first pods are its workload landing, not a burst that comes again. 0 when none is left.
 */
export function burstToGrowFor(state: AdaptiveState, now: number, startupMs: number): number {
  let n = 0;
  for (const b of state.bursts ?? []) {
    const atStartup = state.bootAt !== undefined && b.at - state.bootAt < startupMs;
    if (atStartup && now - b.at > BURST_SPAN_MS) continue;
    n = Math.max(n, b.count);
  }
  return n;
}

/** The largest remembered burst, its size halved every `halfLifeMs` since it began (0 when none). */
export function recalledBurst(state: AdaptiveState, now: number, halfLifeMs: number): number {
  let n = 0;
  for (const b of state.bursts ?? []) n = Math.max(n, b.count * 2 ** (-Math.max(0, now - b.at) / halfLifeMs));
  return n;
}

/** Share of recent arrivals (30 min average) that came in bursts, 0–1. */
export function burstiness(state: AdaptiveState): number {
  const all = state.allCount ?? 0;
  return all <= 0 ? 0 : Math.min(1, (state.burstCount ?? 0) / all);
}

/** Arrivals in the state's history within `windowMs` before `now`. */
export function arrivalsWithin(state: AdaptiveState, now: number, windowMs: number): number {
  let n = 0;
  for (const r of state.recent) if (r.at > now - windowMs && r.at <= now) n += r.count;
  return n;
}

/** The most arrival samples kept; older ones are merged (bounds the state whatever the call rate). */
const MAX_SAMPLES = 256;

function fail(field: string, why: string): never {
  throw new WarmPoolError('InvalidInput', field, `${field} ${why}`);
}

function count(v: unknown, field: string, min = 0): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) fail(field, `must be an integer ≥ ${min}`);
}

function positive(v: unknown, field: string, max = Number.POSITIVE_INFINITY): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > max)
    fail(field, max === Number.POSITIVE_INFINITY ? 'must be a number > 0' : `must be in (0, ${max}]`);
}

function nonNegative(v: unknown, field: string): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(field, 'must be a number ≥ 0');
}

function bool(v: unknown, field: string): void {
  if (typeof v !== 'boolean') fail(field, 'must be a boolean');
}

/** Fills in defaults and checks every setting; throws {@link WarmPoolError} naming the first bad one. */
export function resolveAdaptiveSettings(settings: AdaptiveSettings = {}): ResolvedAdaptiveSettings {
  if (typeof settings !== 'object' || settings === null) fail('settings', 'must be an object');
  const s = { ...ADAPTIVE_DEFAULTS, ...settings };
  count(s.minWarm, 'settings.minWarm', 1);
  count(s.maxWarm, 'settings.maxWarm');
  if (s.maxWarm !== 0 && s.maxWarm < s.minWarm) fail('settings.maxWarm', 'must be 0 or ≥ settings.minWarm');
  nonNegative(s.reactionMs, 'settings.reactionMs');
  positive(s.initialLeadTimeMs, 'settings.initialLeadTimeMs');
  positive(s.peakHalfLifeMs, 'settings.peakHalfLifeMs');
  positive(s.leadTimeWeight, 'settings.leadTimeWeight', 1);
  positive(s.band, 'settings.band');
  positive(s.subnetShare, 'settings.subnetShare', 1);
  count(s.burstMin, 'settings.burstMin', 2);
  positive(s.batchWindowMs, 'settings.batchWindowMs');
  nonNegative(s.steadyBatchWindowMs, 'settings.steadyBatchWindowMs');
  positive(s.rateWindowMs, 'settings.rateWindowMs');
  positive(s.startupHalfLifeMs, 'settings.startupHalfLifeMs');
  nonNegative(s.pressureMs, 'settings.pressureMs');
  nonNegative(s.releaseDelayMs, 'settings.releaseDelayMs');
  nonNegative(s.prewarmMs, 'settings.prewarmMs');
  bool(s.eniHeadroom, 'settings.eniHeadroom');
  nonNegative(s.surgeWindowMs, 'settings.surgeWindowMs');
  positive(s.surgeGrowth, 'settings.surgeGrowth', 10);
  positive(s.surgeHalfLifeMs, 'settings.surgeHalfLifeMs');
  count(s.recurAfter, 'settings.recurAfter', 2);
  positive(s.floorLeads, 'settings.floorLeads');
  positive(s.eniLeadMs, 'settings.eniLeadMs');
  nonNegative(s.pressureLeadMs, 'settings.pressureLeadMs');
  if (typeof s.burstyShare !== 'number' || !(s.burstyShare >= 0 && s.burstyShare <= 1))
    fail('settings.burstyShare', 'must be in [0, 1]');
  bool(s.surgeToBurst, 'settings.surgeToBurst');
  bool(s.surgeAim, 'settings.surgeAim');
  bool(s.surgeDefersEni, 'settings.surgeDefersEni');
  bool(s.boundCover, 'settings.boundCover');
  bool(s.boundBursts, 'settings.boundBursts');
  positive(s.burstHalfLifeMs, 'settings.burstHalfLifeMs');
  nonNegative(s.drainAfterMs, 'settings.drainAfterMs');
  bool(s.jobFanOut, 'settings.jobFanOut');
  bool(s.wholeGrow, 'settings.wholeGrow');
  return s;
}

/** Checks an observation and a state; throws {@link WarmPoolError} naming the first bad field. */
export function validateAdaptive(observation: AdaptiveObservation, state: AdaptiveState): void {
  if (typeof observation !== 'object' || observation === null) fail('observation', 'must be an object');
  count(observation.arrivals, 'observation.arrivals');
  count(observation.departures, 'observation.departures');
  count(observation.waiting, 'observation.waiting');
  if (observation.bound !== undefined) count(observation.bound, 'observation.bound');
  if (observation.boundJobPods !== undefined) {
    count(observation.boundJobPods, 'observation.boundJobPods');
    if (observation.boundJobPods > (observation.bound ?? 0))
      fail('observation.boundJobPods', 'must be at most observation.bound');
  }
  if (observation.leadTimesMs !== undefined) {
    if (!Array.isArray(observation.leadTimesMs)) fail('observation.leadTimesMs', 'must be an array');
    observation.leadTimesMs.forEach((v, i) => {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        fail(`observation.leadTimesMs[${i}]`, 'must be a number ≥ 0');
    });
  }
  if (observation.subnetFreeAddresses !== undefined)
    count(observation.subnetFreeAddresses, 'observation.subnetFreeAddresses');
  if (observation.throttled !== undefined) count(observation.throttled, 'observation.throttled');
  if (observation.budgetWaitMs !== undefined) {
    const w = observation.budgetWaitMs;
    if (typeof w !== 'object' || w === null) fail('observation.budgetWaitMs', 'must be an object');
    for (const key of ['assign', 'eni'] as const) {
      const v = w[key];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        fail(`observation.budgetWaitMs.${key}`, 'must be a number ≥ 0');
    }
  }
  if (typeof state !== 'object' || state === null || !Array.isArray(state.recent))
    fail('state', 'must be an AdaptiveState (start with initialAdaptiveState)');
  if (typeof state.peak !== 'number' || !(state.peak >= 0)) fail('state.peak', 'must be a number ≥ 0');
  if (typeof state.peakAt !== 'number' || !Number.isFinite(state.peakAt))
    fail('state.peakAt', 'must be a finite number');
  if (
    state.lastArrivalAt !== undefined &&
    (typeof state.lastArrivalAt !== 'number' || !Number.isFinite(state.lastArrivalAt))
  )
    fail('state.lastArrivalAt', 'must be a finite number');
  if (state.leftSinceArrival !== undefined) count(state.leftSinceArrival, 'state.leftSinceArrival');
  for (const key of ['fanOutAt', 'loneJobAt'] as const) {
    const v = state[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v)))
      fail(`state.${key}`, 'must be a finite number');
  }
  if (state.fanOutArrivals !== undefined) count(state.fanOutArrivals, 'state.fanOutArrivals');
}

/**
 * Whether the node is draining at `now`: no pod has arrived for `drainAfterMs` and some have left since the
 * last one came; never before the first arrival, nor with `drainAfterMs` 0.
 */
export function isDraining(state: AdaptiveState, now: number, drainAfterMs: number): boolean {
  return (
    drainAfterMs > 0 &&
    state.lastArrivalAt !== undefined &&
    now - state.lastArrivalAt > drainAfterMs &&
    (state.leftSinceArrival ?? 0) > 0
  );
}

/** The remembered peak at `now`, halved every `halfLifeMs` since it was seen. */
export function decayedPeak(state: AdaptiveState, now: number, halfLifeMs: number): number {
  const age = Math.max(0, now - state.peakAt);
  return state.peak * 2 ** (-age / halfLifeMs);
}

/** Arrivals per second, from the exponential average. */
export function arrivalRate(state: AdaptiveState, s: ResolvedAdaptiveSettings): number {
  return (state.rateCount ?? 0) / (s.rateWindowMs / 1000);
}

/** The start-up prior at `now`: `maxWarm` halved every `startupHalfLifeMs` since the first observation. */
export function startupPrior(
  state: AdaptiveState,
  now: number,
  maxWarm: number,
  s: ResolvedAdaptiveSettings,
): number {
  if (state.bootAt === undefined) return maxWarm;
  return maxWarm * 2 ** (-Math.max(0, now - state.bootAt) / s.startupHalfLifeMs);
}

/** The horizon a warm pool must cover: the loop's reaction time plus the smoothed lead time. */
export function horizonMs(state: AdaptiveState, s: ResolvedAdaptiveSettings): number {
  return s.reactionMs + (state.leadTimeMs ?? s.initialLeadTimeMs);
}

/**
 * Folds one observation into the state (pure): lead times into their moving average, arrivals into the
 * history of the last horizon, and the arrivals within one horizon into the decaying peak.
 */
export function observe(
  state: AdaptiveState,
  observation: AdaptiveObservation,
  now: number,
  s: ResolvedAdaptiveSettings,
): AdaptiveState {
  let lead = state.leadTimeMs;
  for (const sample of observation.leadTimesMs ?? []) {
    lead = lead === undefined ? sample : lead + s.leadTimeWeight * (sample - lead);
  }
  const withLead: AdaptiveState = lead === undefined ? state : { ...state, leadTimeMs: lead };
  const horizon = horizonMs(withLead, s);
  const kept = Math.max(horizon, s.surgeWindowMs);
  let recent = withLead.recent.filter((r) => r.at > now - kept && r.at <= now);
  if (observation.arrivals > 0) recent.push({ at: now, count: observation.arrivals });
  if (recent.length > MAX_SAMPLES) {
    const [first, second, ...rest] = recent;
    recent = first && second ? [{ at: second.at, count: first.count + second.count }, ...rest] : recent;
  }
  let inWindow = 0;
  for (const r of recent) if (r.at > now - horizon) inWindow += r.count;
  // The floor counts arrivals within the time a grow needs to land (floorLeads × the smoothed lead time),
  // at most one surge window.
  const floorWindow = Math.min(s.surgeWindowMs, s.floorLeads * (lead ?? s.initialLeadTimeMs));
  let surge = 0;
  for (const r of recent) if (r.at > now - floorWindow) surge += r.count;
  const surgeBefore = decayedPeak(
    {
      peak: withLead.surgePeak ?? 0,
      peakAt: withLead.surgePeakAt ?? 0,
      recent: [],
      arrivals: 0,
      departures: 0,
    },
    now,
    s.surgeHalfLifeMs,
  );
  const surgeMoves = s.surgeWindowMs > 0 && surge >= 2 && surge >= surgeBefore;
  const decayed = decayedPeak(withLead, now, s.peakHalfLifeMs);
  const peakMoves = inWindow >= decayed && inWindow > 0;
  // Bursts: a new one starts when a horizon holds burstMin arrivals and the last one began over a minute ago;
  // while it lasts (one minute) its size is the most arrivals seen within one horizon.
  let bursts = [...(withLead.bursts ?? [])];
  const last = bursts.at(-1);
  let inBursts = 0;
  if (last !== undefined && now - last.at <= BURST_SPAN_MS) {
    if (inWindow > last.count) bursts[bursts.length - 1] = { at: last.at, count: inWindow };
    inBursts = observation.arrivals;
  } else if (inWindow >= s.burstMin) {
    bursts = [...bursts, { at: now, count: inWindow }].slice(-MAX_BURSTS);
    inBursts = inWindow;
  }
  // Job fan-outs: a Job's pod seen bound opens one; once its span has passed, one that brought no arrival but its
  // own first pod was a single-pod Job (the jobFanOut rule rests), and one that brought more ends the rest.
  const arrivals = withLead.arrivals + observation.arrivals;
  type FanOut = Pick<AdaptiveState, 'fanOutAt' | 'fanOutArrivals' | 'loneJobAt'>;
  const { fanOutAt, fanOutArrivals, loneJobAt, ...carried } = withLead;
  let fanOut: FanOut = {
    ...(fanOutAt !== undefined ? { fanOutAt } : {}),
    ...(fanOutArrivals !== undefined ? { fanOutArrivals } : {}),
    ...(loneJobAt !== undefined ? { loneJobAt } : {}),
  };
  if (fanOutAt !== undefined && now - fanOutAt >= FAN_OUT_SPAN_MS) {
    const lone = arrivals - (fanOutArrivals ?? arrivals) <= 1;
    fanOut = lone ? { loneJobAt: now } : {};
  }
  if (fanOut.fanOutAt === undefined && (observation.boundJobPods ?? 0) > 0)
    fanOut = { ...fanOut, fanOutAt: now, fanOutArrivals: arrivals };
  const dt = withLead.lastAt === undefined ? 0 : Math.max(0, now - withLead.lastAt);
  const rateCount = (withLead.rateCount ?? 0) * Math.exp(-dt / s.rateWindowMs) + observation.arrivals;
  const slow = Math.exp(-dt / BURSTINESS_WINDOW_MS);
  const allCount = (withLead.allCount ?? 0) * slow + observation.arrivals;
  const burstCount = Math.min(allCount, (withLead.burstCount ?? 0) * slow + inBursts);
  return {
    ...carried,
    bootAt: withLead.bootAt ?? now,
    ...((observation.throttled ?? 0) > 0 ? { throttledAt: now } : {}),
    rateCount,
    allCount,
    burstCount,
    bursts,
    lastAt: now,
    ...(observation.arrivals > 0
      ? { lastArrivalAt: now, leftSinceArrival: 0 }
      : observation.departures > 0
        ? { leftSinceArrival: (withLead.leftSinceArrival ?? 0) + observation.departures }
        : {}),
    recent,
    ...(surgeMoves ? { surgePeak: surge, surgePeakAt: now } : {}),
    peak: peakMoves ? inWindow : withLead.peak,
    peakAt: peakMoves ? now : withLead.peakAt,
    arrivals,
    departures: withLead.departures + observation.departures,
    // Carried only as `fanOut` has them: a cleared field is gone.
    ...fanOut,
  };
}

/** Whether the `jobFanOut` rule rests at `now`: a Job fan-out was one pod less than {@link LONE_JOB_REST_MS} ago. */
export function jobFanOutRests(state: AdaptiveState, now: number): boolean {
  return state.loneJobAt !== undefined && now - state.loneJobAt < LONE_JOB_REST_MS;
}
