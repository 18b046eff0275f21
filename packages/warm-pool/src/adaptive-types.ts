import type { PoolDecision, PoolInput } from './types.js';

/**
 * Operator bounds and tuning of the adaptive policy. Every field is optional; {@link ADAPTIVE_DEFAULTS} fills
 * the rest. `MINIMUM_IP_TARGET` and prefix delegation still come from {@link PoolInput.targets}.
 */
export interface AdaptiveSettings {
  /** Fewest usable free addresses ever kept, whatever the node observes. At least 1. */
  readonly minWarm?: number;
  /**
   * Most usable free addresses ever kept. Default: one ENI's worth of addresses (what `WARM_ENI_TARGET=1`
   * keeps), so the adaptive pool never holds more warm addresses than the reference's default.
   */
  readonly maxWarm?: number;
  /** Time from a pod finding the pool low to the pool loop acting on it (the loop period), ms. */
  readonly reactionMs?: number;
  /** Lead time assumed before any grow has been measured, ms (an `AssignPrivateIpAddresses` plus IMDS). */
  readonly initialLeadTimeMs?: number;
  /** Half-life of the remembered peak demand, ms: how quickly the pool forgets a burst. */
  readonly peakHalfLifeMs?: number;
  /** Smoothing of measured lead times: weight of the newest sample, in (0, 1]. */
  readonly leadTimeWeight?: number;
  /**
   * Hysteresis band, as a fraction of the warm target (at least one address): the pool grows when usable
   * free addresses fall below the target and shrinks only when they exceed target + band.
   */
  readonly band?: number;
  /**
   * Keep free IPv4 slots for `maxWarm` addresses on attached ENIs, attaching an ENI with one address when there
   * are fewer: a burst then needs an `AssignPrivateIpAddresses` (≈ 0.5 s), not a create + attach (1–10 s).
   */
  readonly eniHeadroom?: boolean;
  /**
   * A burst is this many arrivals within one horizon. Three bursts at an even period (a CronJob) make the pool
   * warm up for the next one ahead of time.
   */
  readonly burstMin?: number;
  /** How long before a predicted recurring burst the pool warms up for it, ms. */
  readonly prewarmMs?: number;
  /**
   * Grow and shrink in batches of the arrivals expected over this long (or ten lead times, if longer), ms: fewer,
   * larger EC2 calls when pods come fast or EC2 is slow (throttled), single addresses when they come slowly.
   */
  readonly batchWindowMs?: number;
  /**
   * On a steady node (fewer than `burstyShare` of recent arrivals came in bursts) whose pods come less often than
   * one per this long, grow one address at a time, ms; 0 = off. Such pods come one at a time: each grow is one
   * assign (0.3–0.8 s) that lands long before the next pod, and every address a batch adds beyond one is held
   * idle. Faster arrivals keep `batchWindowMs` (fewer calls on a busy node, where the account's budget binds).
   */
  readonly steadyBatchWindowMs?: number;
  /** Time constant of the arrival-rate average, ms. */
  readonly rateWindowMs?: number;
  /**
   * A node with no history starts as if it had just seen a burst of `maxWarm` arrivals, forgotten with this
   * half-life (ms): a new node that pods are about to land on is warm, one that stays quiet sheds it fast.
   */
  readonly startupHalfLifeMs?: number;
  /**
   * For this long after EC2 throttled a call, ms, the pool saves the account's request budget: it grows in
   * batches of at least half of `maxWarm` and releases nothing (a release is one more call).
   */
  readonly pressureMs?: number;
  /**
   * The pool is also under pressure (as after a throttle) while the smoothed lead time of grows is at least
   * this long, ms: calls are queueing for the account's budget (0 = off).
   */
  readonly pressureLeadMs?: number;
  /**
   * Nothing is released for this long after a grow, ms (default 0: off; it saves calls at the price of idle
   * addresses after each burst).
   */
  readonly releaseDelayMs?: number;
  /** Keep at most this fraction of the subnet's free addresses warm on this node, in (0, 1]. */
  readonly subnetShare?: number;
  /**
   * The surge window, ms: arrivals within this long are a *surge* (the pods that land before a grow started
   * now can land: about one `AssignPrivateIpAddresses`). 0 turns surges off.
   */
  readonly surgeWindowMs?: number;
  /**
   * While a surge of at least 2 pods is under way, a grow asks for this many times the surge's arrivals (grow
   * fast: a burst is expected to go on at least as long as it has lasted).
   */
  readonly surgeGrowth?: number;
  /**
   * Half-life of the surge floor, ms: the most arrivals seen within one surge window stays warm, halving this
   * slowly (shrink slowly), so the next burst's first pods find addresses while its grow is in flight.
   */
  readonly surgeHalfLifeMs?: number;
  /**
   * While a surge is under way, grow at least to the largest burst remembered (or `maxWarm` before any) in one
   * call, instead of doubling call by call.
   */
  readonly surgeToBurst?: boolean;
  /**
   * The surge floor counts arrivals within this many smoothed lead times (at most `surgeWindowMs`): the pods
   * that land while a grow is in flight.
   */
  readonly floorLeads?: number;
  /**
   * On a node where at least this share of recent arrivals came in bursts (0 = off), the first arrival after
   * a quiet spell already grows for a whole remembered burst: there, a pod arriving is a burst starting.
   */
  readonly burstyShare?: number;
  /**
   * Time from deciding on a new ENI to its addresses being usable, ms, assumed when a cluster budget's queues
   * route an assign through a new ENI (`observation.budgetWaitMs`).
   */
  readonly eniLeadMs?: number;
  /** Bursts needed at an even period before the next one is predicted and warmed for (2 or more). */
  readonly recurAfter?: number;
  /**
   * While a surge that bound pods are part of is under way (`observation.bound` > 0: the pod watch saw it coming),
   * the pool grows as soon as its usable free addresses fall below what the burst is still expected to bring
   * (`minWarm` + the rest of the burst), not only below the warm target. Only on evidence of a burst (one
   * remembered on this node, or at least 3 pods within one surge window), and not while a cluster budget reports
   * assigns queueing (`observation.budgetWaitMs.assign` > 0).
   */
  readonly surgeAim?: boolean;
  /**
   * While a surge is under way and the attached ENIs still have free slots, no ENI is attached for headroom:
   * an attach holds the pool loop for 1–10 s, an assign for the surge's next pods 0.3–0.8 s.
   */
  readonly surgeDefersEni?: boolean;
  /**
   * Bound pods (`observation.bound`) the free addresses already cover raise the target only during a surge: a
   * lone bound pod takes a warm address when it asks, and the pool grows after it, as without the pod watch,
   * leaving the loop free for a burst that may be starting.
   */
  readonly boundCover?: boolean;
  /**
   * On a node that remembers a burst, a pod seen bound after a quiet spell is a burst starting: the pool grows
   * for the remembered burst in one call while the pod is still on its way (needs the pod watch).
   */
  readonly boundBursts?: boolean;
  /**
   * Half-life of the remembered bursts' sizes when a bound pod starts a grow for them, ms: a burst seen once is
   * still trusted at the next one, a burst long gone is not.
   */
  readonly burstHalfLifeMs?: number;
  /**
   * A node is *draining* when no pod has arrived for this long (ms) and pods have left since the last one came
   * (and none is bound or waiting); 0 = never. While draining the surge floor is set aside (the surge it
   * remembers has passed: pods are leaving, not coming) and releases are not spaced `SHRINK_INTERVAL_MS` apart
   * (the leaving pods' addresses come back one by one as they cool, and holding each for up to 30 s more is only
   * idle). The next pod seen bound or arriving ends it.
   */
  readonly drainAfterMs?: number;
  /**
   * A bound pod of a Job (`observation.boundJobPods` > 0) is evidence of a burst: a Job's controller creates its
   * pods together (up to its parallelism; a CronJob's run is a Job), so the first one seen bound already grows
   * for the rest of the fan-out as a surge of several pods does (the largest burst remembered, or what one ENI
   * holds, less the pods here). A ReplicaSet's pod or a bare pod is not such evidence. A fan-out that brings no
   * other arrival within 10 s was a single-pod Job: the rule then rests (30 min, or until a fan-out brings more),
   * so a node running single-pod CronJobs does not grow one ENI's worth at each run.
   */
  readonly jobFanOut?: boolean;
  /**
   * A grow that the lowest-numbered ENI's free slots would cut short goes whole to the first ENI with room for
   * all of it: one `AssignPrivateIpAddresses`, not two in a row (secondary IP mode).
   */
  readonly wholeGrow?: boolean;
}

/** {@link AdaptiveSettings} with every field present (`maxWarm` 0 = one ENI's worth). */
export type ResolvedAdaptiveSettings = Required<AdaptiveSettings>;

/** What the node saw since the previous call. Counts are since the previous observation, not totals. */
export interface AdaptiveObservation {
  /** Pods that got an address since the previous call (successful ADDs). */
  readonly arrivals: number;
  /** Pods that released their address since the previous call (DELs). */
  readonly departures: number;
  /**
   * Pods waiting for an address now. A caller that cannot tell pods apart passes the ADDs that found the pool
   * empty since the previous call.
   */
  readonly waiting: number;
  /**
   * Pods bound to this node (seen through the API server) that have not asked for an address yet, now: a level,
   * not a count since the previous call. Kubelet mounts volumes and starts the sandbox before the CNI ADD, so a
   * bound pod is an arrival seen a few hundred ms early. Pods that need no pool address (host network, branch
   * ENI) are not counted; pods already waiting are in `waiting`, not here. Default 0.
   */
  readonly bound?: number;
  /**
   * Of `bound`, the pods a Job controls (their controller `ownerReference` is a `batch/v1` Job; a CronJob's pods
   * are its Jobs'). Default 0. At most `bound`.
   */
  readonly boundJobPods?: number;
  /**
   * Lead times of grows that completed since the previous call: ms from the decision to the addresses being
   * usable (EC2 call, attach, IMDS).
   */
  readonly leadTimesMs?: readonly number[];
  /** Free addresses left in the subnet new addresses come from, when known. */
  readonly subnetFreeAddresses?: number;
  /** EC2 calls answered `RequestLimitExceeded` since the previous call (the account's budget is spent). */
  readonly throttled?: number;
  /**
   * When nodes share a cluster EC2 budget that reports its queues: how long a call would wait for its tokens
   * now, ms — `assign` for `AssignPrivateIpAddresses`, `eni` for the longer of `CreateNetworkInterface` and
   * `AttachNetworkInterface`. An assign that would wait at least twice as long as a new ENI takes (its wait
   * plus `eniLeadMs`) becomes a new ENI.
   */
  readonly budgetWaitMs?: { readonly assign?: number; readonly eni?: number };
}

/** One slot of the arrival history: arrivals counted at one observation. */
export interface ArrivalSample {
  /** Observation time, ms. */
  readonly at: number;
  /** Arrivals (and waiting pods) counted then. */
  readonly count: number;
}

/**
 * What the adaptive policy remembers between calls: plain data (JSON-safe), owned by the caller, returned anew
 * by every call. Start with {@link initialAdaptiveState}.
 */
export interface AdaptiveState {
  /** Time of the previous observation, ms (undefined before the first). */
  readonly lastAt?: number;
  /** Recent arrival samples, oldest first, within one horizon of `lastAt`. */
  readonly recent: readonly ArrivalSample[];
  /** Largest demand seen within one horizon. */
  readonly peak: number;
  /** When `peak` was seen, ms. */
  readonly peakAt: number;
  /** Smoothed EC2 lead time, ms (undefined until one grow has been measured). */
  readonly leadTimeMs?: number;
  /** Total arrivals observed (for rates and introspection). */
  readonly arrivals: number;
  /** Total departures observed. */
  readonly departures: number;
  /** Arrivals, exponentially averaged over `rateWindowMs` (arrivals per rate window). */
  readonly rateCount?: number;
  /** When this policy last decided to grow, ms. */
  readonly grewAt?: number;
  /** When EC2 last throttled this node, ms. */
  readonly throttledAt?: number;
  /** The first observation's time, ms (start-up prior). */
  readonly bootAt?: number;
  /** The last few bursts (start time and size), oldest first, for recurring-burst prediction. */
  readonly bursts?: readonly ArrivalSample[];
  /** Arrivals, exponentially averaged over 30 min (burstiness). */
  readonly allCount?: number;
  /** Arrivals that came in bursts, averaged like `allCount`. */
  readonly burstCount?: number;
  /** When a pod last arrived, ms (undefined before the first). */
  readonly lastArrivalAt?: number;
  /** Pods that left since the last arrival (draining, with `drainAfterMs`). */
  readonly leftSinceArrival?: number;
  /** Most arrivals seen within one surge window (the surge floor, before decay). */
  readonly surgePeak?: number;
  /** When `surgePeak` was seen, ms. */
  readonly surgePeakAt?: number;
  /** When the Job fan-out under watch began (a Job's pod first seen bound), ms; undefined when none is. */
  readonly fanOutAt?: number;
  /** `arrivals` when that fan-out began (its own pods arrive after). */
  readonly fanOutArrivals?: number;
  /**
   * When a Job fan-out last turned out to be one pod (a single-pod Job, such as most CronJobs' runs), ms: the
   * `jobFanOut` rule rests for 30 min after it, or until a fan-out brings more.
   */
  readonly loneJobAt?: number;
}

/**
 * Stable codes of why the adaptive policy chose its warm target.
 * - `pods-waiting`: pods are waiting for an address; the target covers them on top of the expected demand.
 * - `pods-bound`: pods are bound to the node but have not asked yet; the target covers them on top of the
 *   expected demand.
 * - `burst-starting`: a pod is bound after a quiet spell on a node that remembers a burst; the target covers
 *   the remembered burst (needs the pod watch).
 * - `peak-demand`: the remembered peak of pod arrivals within one lead time sets the target.
 * - `min-warm`: demand is below the operator's minimum warm; the minimum applies.
 * - `max-warm`: demand exceeds the operator's maximum warm; the maximum applies.
 * - `recurring-burst`: bursts have come at an even period; the pool is warm for the next one, due soon.
 * - `startup`: a node with little history keeps the start-up prior (decaying from `maxWarm`).
 * - `lead-demand`: under EC2 pressure, the arrivals expected within one lead time set the target.
 * - `surge-floor`: the most pods seen arriving within one surge window (slowly forgotten) sets the target.
 * - `subnet-scarce`: the subnet's free addresses cap the target (this node keeps only its share).
 */
export type AdaptiveReasonCode =
  | 'pods-waiting'
  | 'pods-bound'
  | 'burst-starting'
  | 'peak-demand'
  | 'min-warm'
  | 'max-warm'
  | 'recurring-burst'
  | 'startup'
  | 'surge-floor'
  | 'lead-demand'
  | 'subnet-scarce';

/** Why the warm target is what it is. */
export interface AdaptiveReason {
  /** Stable code. */
  readonly code: AdaptiveReasonCode;
  /** The numbers, for people. */
  readonly message: string;
}

/** The targets the adaptive policy derived for this call (exported as metrics by the daemon). */
export interface AdaptiveTargets {
  /** Usable free addresses wanted now (the pool grows below it). */
  readonly warm: number;
  /** Usable free addresses above which the pool shrinks (aim + band). */
  readonly high: number;
  /** Free addresses a grow or shrink aims for (warm + batch − 1). */
  readonly aim: number;
  /** Addresses per grow: the arrivals expected over the batch window. */
  readonly batch: number;
  /** EC2 throttled this node within `pressureMs`: big batches, no releases. */
  readonly pressured: boolean;
  /** Addresses cooling down now: they count as available in the pool maths but cannot be used yet. */
  readonly cooling: number;
  /** `MINIMUM_IP_TARGET`, passed through. */
  readonly minimum: number;
  /** The remembered peak demand within one horizon, after decay. */
  readonly peak: number;
  /** Horizon: reaction time plus smoothed lead time, ms. */
  readonly horizonMs: number;
  /** The surge floor after decay: most arrivals seen within one surge window. */
  readonly surgeFloor: number;
  /** Arrivals within the last surge window (a surge is under way when ≥ 2). */
  readonly surge: number;
  /**
   * The node is draining (`drainAfterMs`): no surge floor, releases not spaced by the shrink interval.
   */
  readonly draining: boolean;
}

/** Input of {@link decideAdaptive}: the static policy's input plus observations, settings and state. */
export interface AdaptiveInput extends PoolInput {
  /** What the node observed since the previous call. */
  readonly observation: AdaptiveObservation;
  /** The state returned by the previous call, or {@link initialAdaptiveState}. */
  readonly state: AdaptiveState;
  /** Bounds and tuning. */
  readonly settings?: AdaptiveSettings;
}

/** Output of {@link decideAdaptive}. */
export interface AdaptiveDecision {
  /** The one thing to do now (apply it exactly like a static decision). */
  readonly decision: PoolDecision;
  /** The targets behind it. */
  readonly targets: AdaptiveTargets;
  /** Why the warm target is what it is. */
  readonly why: AdaptiveReason;
  /** Pass this back on the next call. */
  readonly state: AdaptiveState;
}
