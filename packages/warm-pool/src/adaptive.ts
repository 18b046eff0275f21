import {
  arrivalRate,
  arrivalsWithin,
  burstiness,
  burstToGrowFor,
  decayedPeak,
  horizonMs,
  isDraining,
  jobFanOutRests,
  nextRecurringBurst,
  observe,
  recalledBurst,
  resolveAdaptiveSettings,
  startupPrior,
  validateAdaptive,
} from './adaptive-demand.js';
import type {
  AdaptiveDecision,
  AdaptiveInput,
  AdaptiveReason,
  AdaptiveReasonCode,
  AdaptiveTargets,
} from './adaptive-types.js';
import { canAddEni, fillableEnis, largestEniHeadroom, slotHeadroom } from './capacity.js';
import { INSUFFICIENT_ADDRESSES_BACKOFF_MS } from './constants.js';
import { decide } from './decide.js';
import { inMode, poolFigures, slotsUsed } from './figures.js';
import type { PoolDecision, PoolInput } from './types.js';
import { validateInput } from './validate.js';

/** A predicted burst keeps the pool warm until this long after its expected start. */
const BURST_WINDOW_MS = 60_000;

function coolingAddresses(input: PoolInput): number {
  let n = 0;
  for (const e of input.stats.enis) {
    if (e.excluded) continue;
    for (const c of e.cidrs) if (inMode(c, input.targets.prefixDelegation)) n += c.cooldown;
  }
  return n;
}

/**
 * A grow the lowest-numbered ENI's free slots would cut short goes whole to the first ENI with room for all of
 * it: one `AssignPrivateIpAddresses` instead of two in a row, the second starting only when the first has landed
 * (0.3–0.8 s later, while a burst's pods are asking). Secondary IP mode only (a prefix grow is one prefix or
 * more, each its own slot). Anything else is returned as it is.
 */
function wholeOnOneEni(input: PoolInput, d: PoolDecision): PoolDecision {
  if (d.kind !== 'assign' || input.targets.prefixDelegation) return d;
  const f = poolFigures(input);
  if (d.count >= f.short) return d;
  const room = fillableEnis(input, f).find((e) => f.maxSlotsPerEni - slotsUsed(e) >= f.short);
  return room === undefined ? d : { ...d, eniId: room.id, count: f.short };
}

/**
 * ENI headroom: with nothing to grow, attach an ENI (with one address) unless the attached ENIs can take a grow of
 * `wanted` addresses in at most two calls: one ENI with `wanted` free slots, or free slots for twice `wanted` in
 * all. Free slots split across ENIs make a burst's grow two `AssignPrivateIpAddresses` in a row, the second only
 * after the first has landed (ADR 0044); on a large instance, where an ENI holds 29 or more, insisting on one
 * would attach ENI after ENI. Never free an ENI whose slots the headroom needs.
 */
function keepHeadroom(input: PoolInput, d: PoolDecision, wanted: number): PoolDecision {
  const f = poolFigures(input);
  const enough = (i: PoolInput) => {
    const all = slotHeadroom(i, f);
    return all >= wanted && (largestEniHeadroom(i, f) >= wanted || all >= 2 * wanted);
  };
  const room = (i: PoolInput) => `${slotHeadroom(i, f)} free slots, ${largestEniHeadroom(i, f)} on one ENI`;
  if (d.kind === 'free-eni') {
    const others = { ...input, stats: { enis: input.stats.enis.filter((e) => e.id !== d.eniId) } };
    if (enough(others)) return d;
    return {
      kind: 'none',
      reason: {
        code: 'within-targets',
        message: `${d.eniId} kept: its slots are headroom (without it ${room(others)}; wanted ${wanted})`,
      },
    };
  }
  // A release waits for the headroom ENI (attaching after releasing would be a grow after a shrink).
  if ((d.kind !== 'none' && d.kind !== 'release') || enough(input)) return d;
  const last = input.timing.lastInsufficientAddressesAt;
  if (last !== undefined && input.timing.now - last < INSUFFICIENT_ADDRESSES_BACKOFF_MS) return d;
  // Pods alone fill the node: no burst can use the headroom. (Assigned, not total: total falls on a release,
  // and the headroom must not appear after one.)
  if (f.assigned >= input.limits.maxPods || !canAddEni(input, f)) return d;
  return {
    kind: 'create-eni',
    unit: input.targets.prefixDelegation ? 'prefix' : 'ip',
    count: 1,
    reason: {
      code: 'eni-headroom',
      message: `attached ENIs have ${room(input)}, wanted ${wanted} on one or twice that in all: attach one more`,
    },
  };
}

/**
 * With a cluster budget that reports its queues: an assign that would wait for the account's Assign tokens at
 * least twice as long as a new ENI takes (its buckets' wait plus `eniLeadMs`) becomes a new ENI with the same
 * addresses, when the node may attach one.
 */
function routeByBudget(
  d: PoolDecision,
  input: PoolInput,
  obs: AdaptiveInput['observation'],
  eniLeadMs: number,
): PoolDecision {
  const waits = obs.budgetWaitMs;
  if (d.kind !== 'assign' || waits === undefined) return d;
  const assign = waits.assign ?? 0;
  const eni = waits.eni ?? 0;
  const f = poolFigures(input);
  // Only when an ENI is at least twice as fast: a routed grow takes a Create token another node may need for an
  // ENI it cannot do without.
  if (assign <= 2 * (eni + eniLeadMs) || !canAddEni(input, f)) return d;
  return {
    kind: 'create-eni',
    unit: d.unit,
    count: Math.min(d.count, f.maxSlotsPerEni),
    reason: {
      code: d.reason.code,
      message: `${d.reason.message}; through a new ENI: the cluster budget has assigns waiting ${(assign / 1000).toFixed(1)} s, ENIs ${(eni / 1000).toFixed(1)} s`,
    },
  };
}

function withPrefix(d: PoolDecision, prefix: string): PoolDecision {
  return { ...d, reason: { code: d.reason.code, message: `${prefix}: ${d.reason.message}` } };
}

/**
 * The adaptive warm-pool policy: it sets its own warm target from what the node observes, then takes one step
 * with the static policy's pool maths ({@link decide} with that target as `WARM_IP_TARGET`). Pure and
 * deterministic: no I/O, no clock, no randomness; the caller keeps the returned `state` and passes it back.
 *
 * 1. **Demand.** Arrivals are remembered for one *horizon* (the loop's reaction time plus the smoothed EC2
 *    lead time measured on past grows). The most arrivals seen within one horizon is the *peak*; it decays with
 *    a half-life (default 10 min), so a burst raises the pool at once and is forgotten gradually.
 * 2. **Warm target** = ⌈peak⌉ bounded by `minWarm`…`maxWarm` (default: one ENI's worth, what
 *    `WARM_ENI_TARGET=1` holds), plus the pods waiting now, capped by a share of the subnet's free addresses.
 *    Cooling addresses are added on top, since the pool maths count them as available although no pod can
 *    take them yet.
 * 3. **Hysteresis.** The pool grows when usable free addresses fall below the target and shrinks only once they
 *    exceed target + band; both aim between the two. With no new arrivals the target never rises, so a release
 *    is never followed by a grow (no oscillation).
 * 4. **Step.** The static pool maths do the rest: `MINIMUM_IP_TARGET`, max pods, ENI and slot limits, the 30 s
 *    shrink interval, the 120 s subnet-full back-off, cooldown and minimum ENI age all apply unchanged — except
 *    that a *draining* node (no arrival for `drainAfterMs`, pods leaving) sets the surge floor aside and does not
 *    space its releases by the shrink interval.
 *
 * `WARM_ENI_TARGET`, `WARM_IP_TARGET` and `WARM_PREFIX_TARGET` in `targets` are ignored; `MINIMUM_IP_TARGET`
 * and prefix delegation are honoured. Throws {@link WarmPoolError} (`InvalidInput`) for malformed input.
 *
 * @example
 * ```ts
 * import { decideAdaptive, initialAdaptiveState, DEFAULT_TARGETS } from '@vpc-cni-kit/warm-pool';
 *
 * let state = initialAdaptiveState;
 * const r = decideAdaptive({
 *   stats: datastore.stats(),
 *   targets: DEFAULT_TARGETS,
 *   limits: { maxEnis: 3, ipv4PerEni: 10, maxPods: 29 },
 *   timing: { now },
 *   observation: { arrivals: 3, departures: 1, waiting: 0, leadTimesMs: [620] },
 *   state,
 * });
 * state = r.state;
 * console.log(r.targets.warm, r.why.code, r.decision.kind);
 * ```
 */
export function decideAdaptive(input: AdaptiveInput): AdaptiveDecision {
  validateInput(input);
  validateAdaptive(input.observation, input.state);
  const s = resolveAdaptiveSettings(input.settings);
  const now = input.timing.now;
  const obs = input.observation;
  const bound = obs.bound ?? 0;
  const state = observe(input.state, obs, now, s);
  const f = poolFigures(input);
  const maxWarm = s.maxWarm === 0 ? Math.max(f.maxIpsPerEni, s.minWarm) : s.maxWarm;
  const peak = decayedPeak(state, now, s.peakHalfLifeMs);
  const horizon = horizonMs(state, s);
  const prior = startupPrior(state, now, maxWarm, s);
  const demand = Math.ceil(Math.max(peak, prior) - 1e-9);
  // Draining: nothing has arrived for a while and pods are leaving. The surge floor is set aside and releases
  // are not spaced (below); a pod bound or waiting is an arrival on its way and ends it.
  const draining = bound === 0 && obs.waiting === 0 && isDraining(state, now, s.drainAfterMs);

  let code: AdaptiveReasonCode;
  let warm: number;
  if (demand < s.minWarm) {
    warm = s.minWarm;
    code = 'min-warm';
  } else if (demand > maxWarm) {
    warm = maxWarm;
    code = 'max-warm';
  } else {
    warm = demand;
    code = prior > peak ? 'startup' : 'peak-demand';
  }
  const surgeFloor =
    s.surgeWindowMs > 0 && state.surgePeak !== undefined && !draining
      ? Math.min(
          maxWarm,
          decayedPeak(
            { ...state, peak: state.surgePeak, peakAt: state.surgePeakAt ?? now },
            now,
            s.surgeHalfLifeMs,
          ),
        )
      : 0;
  if (Math.ceil(surgeFloor - 1e-9) > warm) {
    warm = Math.ceil(surgeFloor - 1e-9);
    code = 'surge-floor';
  }
  const surge = s.surgeWindowMs > 0 ? arrivalsWithin(state, now, s.surgeWindowMs) + obs.waiting + bound : 0;
  const cooling = coolingAddresses(input);
  const usable = f.available - cooling;
  const next = nextRecurringBurst(state, s.recurAfter);
  if (next !== undefined && now >= next.at - horizon - s.prewarmMs && now <= next.at + BURST_WINDOW_MS) {
    const size = Math.min(next.size, maxWarm);
    if (size > warm) {
      warm = size;
      code = 'recurring-burst';
    }
  }
  const lead = state.leadTimeMs ?? s.initialLeadTimeMs;
  // EC2's budget is spent: a call was throttled recently, or grows take so long (waiting for the account's
  // tokens, when nodes share a cluster budget) that every call must count.
  const pressured =
    (state.throttledAt !== undefined && now - state.throttledAt < s.pressureMs) ||
    (s.pressureLeadMs > 0 && lead >= s.pressureLeadMs);
  if (pressured) {
    // A grow asked for now lands one lead time from now: hold what arrives meanwhile (more than one ENI's
    // worth if need be, never more than the pods the node can still take).
    const meanwhile = Math.min(
      Math.ceil(arrivalRate(state, s) * (lead / 1000) - 1e-9),
      Math.max(0, input.limits.maxPods - f.assigned),
    );
    if (meanwhile > warm) {
      warm = meanwhile;
      code = 'lead-demand';
    }
  }
  // Bound pods count on top of the target during a surge; a lone bound pod takes a warm address (the target is
  // at least minWarm ≥ 1) and the pool grows after it, as without the watch, leaving the loop free for a burst.
  const boundCounted = !s.boundCover || surge >= 2 || obs.waiting + bound >= 2 ? bound : 0;
  if (obs.waiting + boundCounted > 0) {
    warm += obs.waiting + boundCounted;
    code = obs.waiting > 0 ? 'pods-waiting' : 'pods-bound';
  }
  // A pod seen bound (not yet asking) after a quiet spell, on a node that remembers a burst: a burst may be
  // starting. Warm for the remembered burst (its size halving every burstHalfLifeMs) while the pod is on its way.
  const recalled = s.boundBursts && bound > 0 && surge < 2 ? recalledBurst(state, now, s.burstHalfLifeMs) : 0;
  if (recalled >= s.burstMin) {
    const forBurst = Math.min(maxWarm, Math.ceil(recalled - 1e-9));
    if (forBurst > warm) {
      warm = forBurst;
      code = 'burst-starting';
    }
  }
  if (obs.subnetFreeAddresses !== undefined) {
    const share = Math.floor(obs.subnetFreeAddresses * s.subnetShare);
    if (warm > share && share >= s.minWarm) {
      warm = share;
      code = 'subnet-scarce';
    } else if (warm > s.minWarm && share < s.minWarm) {
      warm = s.minWarm;
      code = 'subnet-scarce';
    }
  }
  // A steady node (few of its arrivals in bursts) whose pods come less often than one per steadyBatchWindowMs
  // grows one address at a time: each grow lands long before the next pod, and a larger batch is only idle.
  // Faster arrivals keep the batch: on a busy node it spares the account's Assign budget.
  const rate = arrivalRate(state, s);
  const single =
    s.steadyBatchWindowMs > 0 &&
    burstiness(state) < s.burstyShare &&
    rate * (Math.max(s.steadyBatchWindowMs, 10 * lead) / 1000) < 1;
  const expected = single ? 1 : rate * (Math.max(s.batchWindowMs, 10 * lead) / 1000);
  const wanted = Math.max(1, Math.ceil(expected - 1e-9), pressured ? Math.ceil(maxWarm / 2) : 1);
  const batch = Math.min(wanted, maxWarm);
  // While a surge is under way (≥ 2 pods within one surge window), grow for the rest of the burst in one call:
  // as many again as have arrived (times surgeGrowth), or the largest burst remembered (before any, or when the
  // only one was the node's start-up: what one ENI holds, never more than the default keeps) less the pods of it
  // already here.
  const remembered = (state.bursts ?? []).reduce((m, b) => Math.max(m, b.count), 0);
  const sized = burstToGrowFor(state, now, s.startupHalfLifeMs);
  const guess = s.surgeToBurst ? (sized > 0 ? sized : maxWarm) - surge : 0;
  const bursty = s.burstyShare > 0 && remembered > 0 && burstiness(state) >= s.burstyShare;
  // A bound pod of a Job is a fan-out starting: a Job's controller creates its pods together, so the first one
  // seen bound is evidence enough to grow for the rest (a ReplicaSet's or a lone pod's is not).
  const fanOut = s.jobFanOut && (obs.boundJobPods ?? 0) > 0 && !jobFanOutRests(state, now);
  const rest =
    surge >= (bursty || fanOut ? 1 : 2)
      ? Math.min(maxWarm, Math.max(Math.ceil(surge * (s.surgeGrowth - 1) - 1e-9), guess))
      : 0;
  const aim = Math.max(warm + batch - 1, s.minWarm + rest);
  const high = aim + Math.max(1, Math.ceil(warm * s.band));

  const why: AdaptiveReason = {
    code,
    message: reasonText(code, {
      warm,
      peak,
      horizon,
      waiting: obs.waiting,
      bound,
      maxWarm,
      minWarm: s.minWarm,
      subnetFree: obs.subnetFreeAddresses,
    }),
  };
  // Outside the band, step towards `aim`; inside it, a target equal to what is there (nothing to grow or
  // release, but MINIMUM_IP_TARGET and extra-ENI cleanup still apply).
  const settling = state.grewAt !== undefined && now - state.grewAt < s.releaseDelayMs;
  const holding = pressured || settling;
  // During a surge that bound pods are part of (the pod watch sees it early), the pool grows as soon as it holds
  // less than what the burst is still expected to bring — not only below `warm`. Only on evidence of a burst:
  // a burst remembered on this node, or 3 pods within one surge window (2 come together often enough on a busy
  // node that each would be a grow for a whole ENI, released soon after). Not while a cluster budget has assigns
  // queueing: its tokens go to pods that wait, not to the rest of a burst ahead of them.
  const queued = (obs.budgetWaitMs?.assign ?? 0) > 0;
  const floor =
    s.surgeAim && rest > 0 && bound > 0 && (remembered > 0 || surge >= 3 || fanOut) && !queued
      ? Math.max(warm, s.minWarm + rest)
      : warm;
  const stepWarm = usable < floor || (usable > high && !holding) ? aim + cooling : Math.max(f.available, 1);
  // While draining, releases are not spaced by the shrink interval: the step does not see the last shrink.
  const { lastShrinkAt: _spaced, ...unspaced } = input.timing;
  const stepInput: PoolInput = {
    ...input,
    timing: draining ? unspaced : input.timing,
    targets: { ...input.targets, warmIpTarget: stepWarm },
  };
  // Under pressure no ENI is attached ahead of need: every create is budget a node that needs it may be missing.
  // Nor while a surge is under way and the attached ENIs still have free slots: an attach takes the loop for
  // 1–10 s, an assign for the surge's next pods takes 0.3–0.8 s (the ENI follows once the surge is over).
  const surging = s.surgeDefersEni && surge >= 2 && slotHeadroom(input, f) > 0;
  const plain = decide(stepInput);
  const kept = s.eniHeadroom && !pressured ? keepHeadroom(stepInput, plain, maxWarm) : plain;
  const step0 = surging && kept !== plain && kept.kind === 'create-eni' ? plain : kept;
  const step = s.wholeGrow ? wholeOnOneEni(stepInput, step0) : step0;
  // Under EC2 pressure nothing is given back (not even an empty ENI): every call is budget.
  const routed = routeByBudget(step, input, obs, s.eniLeadMs);
  const decision: PoolDecision =
    holding && (routed.kind === 'release' || routed.kind === 'free-eni')
      ? {
          kind: 'none',
          reason: {
            code: 'within-targets',
            message: pressured
              ? 'EC2 throttled recently or slow: nothing released'
              : 'grew recently: nothing released yet',
          },
        }
      : routed;
  const targets: AdaptiveTargets = {
    warm,
    high,
    aim,
    batch,
    pressured,
    cooling,
    minimum: input.targets.minimumIpTarget,
    peak,
    horizonMs: horizon,
    surgeFloor,
    surge,
    draining,
  };
  const held =
    holding && usable > high
      ? pressured
        ? ', EC2 throttled recently: nothing released'
        : ', grew recently: nothing released yet'
      : pressured
        ? ', EC2 throttled'
        : '';
  const label = `adaptive warm ${warm} (usable ${usable}, band ${warm}–${high}${held}${draining ? ', draining' : ''})`;
  const grew = decision.kind === 'assign' || decision.kind === 'create-eni';
  return {
    decision: withPrefix(decision, label),
    targets,
    why,
    state: grew ? { ...state, grewAt: now } : state,
  };
}

function reasonText(
  code: AdaptiveReasonCode,
  v: {
    warm: number;
    peak: number;
    horizon: number;
    waiting: number;
    bound: number;
    maxWarm: number;
    minWarm: number;
    subnetFree: number | undefined;
  },
): string {
  const peak = `peak ${v.peak.toFixed(1)} arrivals per ${(v.horizon / 1000).toFixed(1)} s`;
  switch (code) {
    case 'pods-waiting':
      return `${v.waiting} pods waiting${v.bound > 0 ? ` and ${v.bound} bound` : ''} on top of ${peak}: warm ${v.warm}`;
    case 'burst-starting':
      return `a pod is bound after a quiet spell and a burst is remembered: warm ${v.warm} for it`;
    case 'pods-bound':
      return `${v.bound} pods bound to the node, not yet asking, on top of ${peak}: warm ${v.warm}`;
    case 'peak-demand':
      return `${peak}: warm ${v.warm}`;
    case 'min-warm':
      return `${peak} is below minWarm ${v.minWarm}: warm ${v.warm}`;
    case 'max-warm':
      return `${peak} is above maxWarm ${v.maxWarm}: warm ${v.warm}`;
    case 'recurring-burst':
      return `bursts recur at an even period; the next is due soon: warm ${v.warm}`;
    case 'startup':
      return `little history yet: start-up prior above ${peak}: warm ${v.warm}`;
    case 'surge-floor':
      return `a surge seen earlier is kept warm for the next one's first pods: warm ${v.warm}`;
    case 'lead-demand':
      return `EC2 calls take ${(v.horizon / 1000).toFixed(1)} s: warm covers the arrivals meanwhile: warm ${v.warm}`;
    case 'subnet-scarce':
      return `subnet has ${v.subnetFree} free addresses: warm capped at ${v.warm}`;
  }
}
