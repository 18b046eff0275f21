import {
  type AdaptiveSettings,
  type AdaptiveState,
  DEFAULT_TARGETS,
  decideAdaptive,
  initialAdaptiveState,
} from '@vpc-cni-kit/warm-pool';
import { describe, expect, it } from 'vitest';
import { mkEni, stats } from './model.js';

/** A node up for a while: the start-up prior has decayed. */
const settled: AdaptiveState = { ...initialAdaptiveState, bootAt: 0 };

const limits = { maxEnis: 3, ipv4PerEni: 10, maxPods: 29 };
const obs = (o: Partial<{ arrivals: number; departures: number; waiting: number; bound: number }> = {}) => ({
  arrivals: 0,
  departures: 0,
  waiting: 0,
  ...o,
});

/** A settled m5.large holding minWarm: 5 addresses on eni-0 (3 in use, 2 usable) and an empty eni-1. */
const atMinWarm = {
  stats: stats([mkEni(0, 5, { assigned: 3 }), mkEni(1, 0)]),
  targets: DEFAULT_TARGETS,
  limits,
  timing: { now: 1_000_000 },
  state: settled,
};

describe('decideAdaptive', () => {
  it('keeps minWarm on a quiet node and says why', () => {
    const r = decideAdaptive({
      stats: stats([mkEni(0, 9, { assigned: 3 }), mkEni(1, 0)]),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
      observation: obs(),
      state: settled,
    });
    expect(r.why.code).toBe('min-warm');
    expect(r.targets.warm).toBe(2);
    // 6 usable > high 3: release down to the aim (warm 2 + batch 1 − 1, no cooling).
    expect(r.decision.kind).toBe('release');
    expect(r.decision.kind === 'release' && r.decision.cidrs.length).toBe(4);
    expect(r.decision.reason.message).toContain('adaptive warm 2');
  });

  it('raises the target at once for a burst and for waiting pods, then forgets the burst gradually', () => {
    const enis = [mkEni(0, 9, { assigned: 9 }), mkEni(1, 1)];
    // Surges off: this is the peak alone (the surge floor has its own test).
    const settings = { surgeWindowMs: 0 };
    const first = decideAdaptive({
      stats: stats(enis),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
      observation: obs({ arrivals: 6, waiting: 3 }),
      state: settled,
      settings,
    });
    expect(first.why.code).toBe('pods-waiting');
    expect(first.targets.warm).toBe(9);
    expect(first.decision).toMatchObject({ kind: 'assign', eniId: 'eni-1', count: 8 });
    const later = decideAdaptive({
      stats: stats(enis),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 + 15_000 },
      observation: obs(),
      state: first.state,
      settings,
    });
    expect(later.why.code).toBe('peak-demand');
    expect(later.targets.warm).toBe(3); // peak 6 halved after one half-life (15 s)
  });

  it('grows for pods bound to the node before their ADD arrives, and refuses a malformed bound count', () => {
    // A settled node holding minWarm (2 usable): 4 pods are bound but have not asked yet. The target covers them
    // on top of the minimum, so the pool grows now rather than when their ADDs find it short.
    const base = { ...atMinWarm, settings: { surgeWindowMs: 0 } };
    const quiet = decideAdaptive({ ...base, observation: obs() });
    expect(quiet.decision.kind).toBe('none');
    const r = decideAdaptive({ ...base, observation: obs({ bound: 4 }) });
    expect(r.why.code).toBe('pods-bound');
    expect(r.why.message).toContain('4 pods bound');
    expect(r.targets.warm).toBe(quiet.targets.warm + 4);
    expect(r.decision.kind).toBe('assign');
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => decideAdaptive({ ...base, observation: obs({ bound: bad }) })).toThrow(
        /observation\.bound/,
      );
    }
  });

  it('lets a lone bound pod take a warm address without a grow, unless boundCover is off', () => {
    // A settled node holding minWarm (2 usable) sees one pod bound: a free address covers it, so the loop stays
    // free (a burst may follow) and the pool grows after its ADD, as it would without the pod watch.
    const base = atMinWarm;
    const lone = decideAdaptive({ ...base, observation: obs({ bound: 1 }) });
    expect(lone.why.code).toBe('min-warm');
    expect(lone.targets.warm).toBe(2);
    expect(lone.decision.kind).toBe('none');
    const counted = decideAdaptive({
      ...base,
      observation: obs({ bound: 1 }),
      settings: { boundCover: false },
    });
    expect(counted.why.code).toBe('pods-bound');
    expect(counted.targets.warm).toBe(3);
    expect(counted.decision.kind).toBe('assign');
  });

  it('warms for a remembered burst when a pod is bound after a quiet spell (burst-starting)', () => {
    // The node saw 10 pods land together 15 min ago; now one pod is bound and nothing else is happening.
    const remembered: AdaptiveState = {
      ...settled,
      lastAt: 1_000_000,
      bursts: [{ at: 1_000_000 - 900_000, count: 10 }],
    };
    const base = {
      stats: stats([mkEni(0, 5, { assigned: 3 }), mkEni(1, 1)]),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
    };
    const r = decideAdaptive({ ...base, observation: obs({ bound: 1 }), state: remembered });
    expect(r.why.code).toBe('burst-starting');
    // The burst halved once in 15 min at the default 30 min half-life: 10 / √2 ≈ 7.07 → 8 warm.
    expect(r.targets.warm).toBe(8);
    expect(r.decision.kind).toBe('assign');
    // Nobody bound: nothing to warm for.
    expect(decideAdaptive({ ...base, observation: obs(), state: remembered }).why.code).toBe('min-warm');
    // A burst long gone (2 h: 10 / 16 < burstMin 5) is not trusted; nor is any with boundBursts off.
    const old: AdaptiveState = { ...remembered, bursts: [{ at: 1_000_000 - 7_200_000, count: 10 }] };
    expect(decideAdaptive({ ...base, observation: obs({ bound: 1 }), state: old }).why.code).toBe('min-warm');
    const off = decideAdaptive({
      ...base,
      observation: obs({ bound: 1 }),
      state: remembered,
      settings: { boundBursts: false },
    });
    expect(off.why.code).toBe('min-warm');
    // Never more than one ENI's worth, however large the remembered burst.
    const huge: AdaptiveState = { ...remembered, bursts: [{ at: 1_000_000 - 60_000, count: 40 }] };
    expect(decideAdaptive({ ...base, observation: obs({ bound: 1 }), state: huge }).targets.warm).toBe(9);
  });

  it('during a surge with pods bound, grows as soon as the pool holds less than the rest of the burst', () => {
    // 2 pods just arrived and 1 more is bound, on a node with 5 usable: the warm target (5: 2 + the 3 of the
    // surge) is met, but the burst is expected to bring as many again as one ENI holds.
    const base = { ...atMinWarm, stats: stats([mkEni(0, 9, { assigned: 4 }), mkEni(1, 1)]) };
    const r = decideAdaptive({ ...base, observation: obs({ arrivals: 2, bound: 1 }) });
    expect(r.targets.surge).toBe(3);
    expect(r.decision.kind).toBe('assign');
    const off = decideAdaptive({
      ...base,
      observation: obs({ arrivals: 2, bound: 1 }),
      settings: { surgeAim: false },
    });
    expect(off.decision.kind).not.toBe('assign');
    // Without the pod watch (nobody bound) the same arrivals wait for the pool to fall below its target.
    const unwatched = decideAdaptive({ ...base, observation: obs({ arrivals: 3 }) });
    expect(unwatched.decision.kind).toBe('none');
    // Nor while a cluster budget has assigns queueing: its tokens go to pods that wait.
    const queued = decideAdaptive({
      ...base,
      observation: { ...obs({ arrivals: 2, bound: 1 }), budgetWaitMs: { assign: 2_000, eni: 0 } },
    });
    expect(queued.decision.kind).toBe('none');
  });

  it("grows for a Job's fan-out at its first pod seen bound, not for a ReplicaSet's pod", () => {
    // One pod bound on a settled node that remembers no burst. A Job's controller creates its pods together:
    // the pool grows at once for what one ENI holds (9) less the pod here, on top of minWarm, in one call.
    const job = decideAdaptive({ ...atMinWarm, observation: { ...obs({ bound: 1 }), boundJobPods: 1 } });
    expect(job.targets.aim).toBe(10);
    expect(job.decision).toMatchObject({ kind: 'assign', eniId: 'eni-1', count: 8 });
    // The same pod of a ReplicaSet (or bare): it takes a warm address when it asks; nothing grows yet.
    const replica = decideAdaptive({ ...atMinWarm, observation: obs({ bound: 1 }) });
    expect(replica.targets.aim).toBeLessThan(5);
    expect(replica.decision.kind).toBe('none');
    // jobFanOut off: a Job's pod is any pod.
    const off = decideAdaptive({
      ...atMinWarm,
      observation: { ...obs({ bound: 1 }), boundJobPods: 1 },
      settings: { jobFanOut: false },
    });
    expect(off.decision.kind).toBe('none');
  });

  it('rests the Job rule after a fan-out that was one pod, for 30 min or until a fan-out brings more', () => {
    // Decisions on the same pool (atMinWarm), the state carried: only the targets' aim matters here.
    let state = settled;
    const at = (now: number, o: Partial<{ arrivals: number; bound: number }>, jobs = 0) => {
      const r = decideAdaptive({
        ...atMinWarm,
        timing: { now },
        observation: { ...obs(o), ...(jobs > 0 ? { boundJobPods: jobs } : {}) },
        state,
      });
      state = r.state;
      return r.targets.aim;
    };
    /** A single-pod Job's run at `t`: its pod bound, asking 400 ms later, nothing else within the span. */
    const lone = (t: number) => {
      const aim = at(t, { bound: 1 }, 1);
      at(t + 400, { arrivals: 1 });
      at(t + 11_000, {});
      return aim;
    };
    const t0 = 1_000_000;
    expect(lone(t0)).toBe(10); // a Job's pod bound: grow for the fan-out
    expect(state.loneJobAt).toBe(t0 + 11_000); // the span is over: it was a single-pod Job
    expect(lone(t0 + 60_000)).toBeLessThan(5); // the next run's pod: no grow ahead of it
    // 30 min after the last lone run the rule is back.
    const last = t0 + 60_000 + 11_000;
    expect(at(last + 1_799_000, { bound: 1 }, 1)).toBeLessThan(5);
    expect(at(last + 1_800_000, { bound: 1 }, 1)).toBe(10);
    // A run that brings more pods ends the rest at once.
    state = settled;
    lone(t0);
    at(t0 + 60_000, { bound: 1 }, 1);
    at(t0 + 60_400, { arrivals: 3 });
    at(t0 + 71_000, {});
    expect(state.loneJobAt).toBeUndefined();
    // Back, and sized by that run (3 pods, a burst remembered): 3 less the pod here, on top of minWarm.
    expect(at(t0 + 120_000, { bound: 1 }, 1)).toBe(4);
  });

  it('attaches no headroom ENI while a surge is under way and attached ENIs still have free slots', () => {
    // 4 free slots on eni-1 (fewer than maxWarm 9): a headroom ENI is due, but not in the middle of a surge.
    const base = { ...atMinWarm, stats: stats([mkEni(0, 9, { assigned: 9 }), mkEni(1, 5, { assigned: 2 })]) };
    const calm = decideAdaptive({ ...base, observation: obs({ arrivals: 1 }) });
    expect(calm.decision).toMatchObject({ kind: 'create-eni', reason: { code: 'eni-headroom' } });
    const surging = decideAdaptive({
      ...base,
      observation: obs({ arrivals: 2 }),
      settings: { surgeAim: false },
    });
    expect(surging.decision.reason.code).not.toBe('eni-headroom');
    const reference = decideAdaptive({
      ...base,
      observation: obs({ arrivals: 2 }),
      settings: { surgeAim: false, surgeDefersEni: false },
    });
    expect(reference.decision).toMatchObject({ kind: 'create-eni', reason: { code: 'eni-headroom' } });
  });

  it('grows for the rest of a burst in one call while a surge is under way', () => {
    // 3 pods within one surge window on a settled node with 2 usable left, no burst remembered yet: the grow
    // covers what one ENI holds (9) less the 3 already here, on top of minWarm — one call, not three. (burstMin 5:
    // with the default 3 these pods are themselves the burst remembered, and the grow is for 3 more.)
    const run = (arrivals: number, settings: AdaptiveSettings = {}) =>
      decideAdaptive({
        stats: stats([mkEni(0, 5, { assigned: 3 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now: 1_000_000 },
        observation: obs({ arrivals }),
        state: settled,
        settings: { burstMin: 5, ...settings },
      });
    const r = run(3);
    expect(r.targets.surge).toBe(3);
    expect(r.targets.aim).toBe(8);
    // The grow of 6 (aim 8 less 2 usable) goes whole to eni-1, which has room for all of it (wholeGrow).
    expect(r.decision).toMatchObject({ kind: 'assign', eniId: 'eni-1', count: 6 });
    // Without wholeGrow it is cut to eni-0's 4 free slots (the static maths' lowest ENI first), a second call later.
    expect(run(3, { wholeGrow: false }).decision).toMatchObject({ kind: 'assign', eniId: 'eni-0', count: 4 });
    // The same arrivals spread out (no surge) grow by the usual batch only.
    const spread = run(1);
    expect(spread.targets.surge).toBe(1);
    expect(spread.targets.aim).toBeLessThan(r.targets.aim);
  });

  it("sizes a surge's grow by the largest burst remembered, but not by the node's own start-up once it is over", () => {
    // Booted at 0; 5 pods landed within one horizon at 10 s (the start-up: a burst of 5 is remembered); a later
    // burst of 7 at 600 s. Now 3 pods arrive within one surge window.
    const run = (bursts: { at: number; count: number }[]) =>
      decideAdaptive({
        stats: stats([mkEni(0, 5, { assigned: 3 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now: 1_000_000 },
        observation: obs({ arrivals: 3 }),
        state: { ...settled, bursts },
        // Three arrivals are not a burst of their own here (burstMin 3 would make them the burst remembered).
        settings: { burstMin: 5 },
      }).targets;
    // Only the start-up burst: it is not the size of what comes next, so the grow aims at one ENI's worth
    // (9) less the 3 here, on top of minWarm 2 — as on a node that remembers no burst.
    expect(run([{ at: 10_000, count: 5 }]).aim).toBe(8);
    expect(run([]).aim).toBe(8);
    // A burst after the start-up sizes it: 7 less the 3 here, on top of minWarm.
    expect(
      run([
        { at: 10_000, count: 5 },
        { at: 600_000, count: 7 },
      ]).aim,
    ).toBe(6);
  });

  it('grows a steady node taking under one pod per 15 s one address at a time, others for 30 s of arrivals', () => {
    // 12 arrivals in the 5 min rate average: 0.04 pods/s (a steady churn); none of them in bursts.
    const steady: AdaptiveState = {
      ...settled,
      rateCount: 12,
      allCount: 12,
      burstCount: 0,
      lastAt: 1_000_000,
    };
    const run = (state: AdaptiveState, settings = {}) =>
      decideAdaptive({ ...atMinWarm, observation: obs(), state, settings });
    // 0.04/s × 15 s = 0.6: one address per grow; the aim is the target itself.
    expect(run(steady).targets).toMatchObject({ warm: 2, batch: 1, aim: 2 });
    // With the steady window off, the same node grows for 0.04/s × 30 s = 1.2 arrivals: 2 at a time.
    expect(run(steady, { steadyBatchWindowMs: 0 }).targets).toMatchObject({ batch: 2, aim: 3 });
    // A node whose arrivals came in bursts keeps the 30 s window.
    const bursty: AdaptiveState = { ...steady, burstCount: 11 };
    expect(run(bursty).targets).toMatchObject({ batch: 2, aim: 3 });
    // So does a steady node taking a pod every 10 s (more than one per 15 s): 0.1/s × 30 s = 3 per grow.
    const busy: AdaptiveState = { ...steady, rateCount: 30, allCount: 30 };
    expect(run(busy).targets).toMatchObject({ batch: 3 });
  });

  it('keeps a surge floor sized from the lead time, forgotten with its half-life (5 min)', () => {
    const run = (now: number, arrivals: number, state = settled) =>
      decideAdaptive({
        stats: stats([mkEni(0, 9, { assigned: 0 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now },
        observation: { ...obs({ arrivals }), leadTimesMs: [600] },
        state,
      });
    // 4 pods within one lead time (600 ms) set the floor…
    const burst = run(1_000_000, 4);
    // …which still holds 2 min later (peak long forgotten), and has halved after one more half-life.
    const later = run(1_120_000, 0, burst.state);
    expect(later.why.code).toBe('surge-floor');
    expect(later.targets.surgeFloor).toBeCloseTo(4 * 2 ** (-120 / 300), 5);
    expect(later.targets.warm).toBe(4);
    expect(run(1_000_000 + 900_000, 0, later.state).targets.warm).toBe(2); // 4 / 8 → minWarm
  });

  it('on a draining node sets the surge floor aside and releases without the 30 s spacing, until a pod comes', () => {
    // A node of two ENIs: eni-1 full of pods, eni-0 holding 9 free addresses (far above the floor of a 4-pod
    // surge); no third ENI can be attached, so no headroom ENI enters the picture.
    const run = (
      now: number,
      o: ReturnType<typeof obs>,
      state: AdaptiveState,
      lastShrinkAt?: number,
      settings = {},
    ) =>
      decideAdaptive({
        stats: stats([mkEni(0, 9, { assigned: 0 }), mkEni(1, 9, { assigned: 9 })]),
        targets: DEFAULT_TARGETS,
        limits: { ...limits, maxEnis: 2 },
        timing: { now, ...(lastShrinkAt !== undefined ? { lastShrinkAt } : {}) },
        observation: { ...o, leadTimesMs: [600] },
        state,
        settings,
      });
    const t0 = 1_000_000;
    const burst = run(t0, obs({ arrivals: 4 }), settled);
    expect(burst.targets.draining).toBe(false);
    // A minute later pods are leaving, but the last arrival is only 60 s old: the floor holds and a release waits
    // for the shrink interval (the last was 10 s ago).
    const leaving = run(t0 + 60_000, obs({ departures: 3 }), burst.state, t0 + 50_000);
    expect(leaving.targets.draining).toBe(false);
    expect(leaving.targets.warm).toBe(4);
    expect(leaving.why.code).toBe('surge-floor');
    expect(leaving.decision.kind).toBe('none');
    expect(leaving.decision.reason.code).toBe('shrink-too-soon');
    // Over 120 s without an arrival, with departures since: draining. The floor is set aside (minWarm 2) and
    // the pool releases although the last shrink was 5 s ago.
    const draining = run(t0 + 125_000, obs(), leaving.state, t0 + 120_000);
    expect(draining.targets.draining).toBe(true);
    expect(draining.targets.surgeFloor).toBe(0);
    expect(draining.targets.warm).toBe(2);
    expect(draining.decision.kind).toBe('release');
    expect(draining.decision.reason.message).toContain('draining');
    // A pod seen bound ends it (the floor is back), as does a pod arriving (and its arrival resets the count).
    const bound = run(t0 + 126_000, obs({ bound: 1 }), draining.state, t0 + 120_000);
    expect(bound.targets.draining).toBe(false);
    expect(bound.targets.surgeFloor).toBeGreaterThan(2);
    const back = run(t0 + 127_000, obs({ arrivals: 1 }), draining.state, t0 + 120_000);
    expect(back.targets.draining).toBe(false);
    expect(back.state.leftSinceArrival).toBe(0);
    // Without departures since the last arrival a quiet node is not draining; drainAfterMs 0 turns it off.
    expect(run(t0 + 300_000, obs(), burst.state).targets.draining).toBe(false);
    expect(run(t0 + 125_000, obs(), leaving.state, t0 + 120_000, { drainAfterMs: 0 }).targets.draining).toBe(
      false,
    );
    // A malformed remembered arrival time is refused.
    expect(() => run(t0, obs(), { ...settled, lastArrivalAt: Number.NaN })).toThrow(/state\.lastArrivalAt/);
    expect(() => run(t0, obs(), { ...settled, leftSinceArrival: -1 })).toThrow(/state\.leftSinceArrival/);
    expect(() => run(t0, obs(), settled, undefined, { drainAfterMs: -1 })).toThrow(/settings\.drainAfterMs/);
  });

  it('predicts a CronJob from two bursts at the same period and warms for the third ahead of time', () => {
    let state = settled;
    const at = (now: number, arrivals: number) => {
      const r = decideAdaptive({
        stats: stats([mkEni(0, 9, { assigned: 0 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now },
        observation: obs({ arrivals }),
        state,
        settings: { surgeWindowMs: 0 },
      });
      state = r.state;
      return r;
    };
    at(1_000_000, 8); // burst 1
    at(1_000_000 + 900_000, 8); // burst 2, 15 min later
    expect(at(1_000_000 + 1_700_000, 0).why.code).toBe('min-warm'); // quiet between
    // 40 s before the third: still quiet (the pool warms prewarmMs, 20 s, and one horizon ahead).
    expect(at(1_000_000 + 1_760_000, 0).why.code).toBe('min-warm');
    const before = at(1_000_000 + 1_785_000, 0); // 15 s before the third
    expect(before.why.code).toBe('recurring-burst');
    expect(before.targets.warm).toBe(8);
  });

  it('when grows wait long for EC2 (a spent budget), holds the arrivals of one lead time and gives nothing back', () => {
    const run = (leadMs: number) =>
      decideAdaptive({
        stats: stats([mkEni(0, 29, { assigned: 10 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits: { maxEnis: 8, ipv4PerEni: 30, maxPods: 110 },
        timing: { now: 1_000_000 },
        observation: { ...obs(), leadTimesMs: [leadMs] },
        // 60 arrivals in the last 5 min: 0.2 pods/s.
        state: { ...settled, rateCount: 60, lastAt: 1_000_000 },
      });
    const quick = run(2_000);
    expect(quick.targets.pressured).toBe(false);
    expect(quick.decision.kind).toBe('release');
    const slow = run(200_000);
    expect(slow.targets.pressured).toBe(true);
    expect(slow.why.code).toBe('lead-demand');
    expect(slow.targets.warm).toBe(40); // 0.2/s × 200 s: more than one ENI (29) holds
    expect(slow.decision.kind).toBe('assign');
  });

  it('caps the target by its share of a scarce subnet', () => {
    const r = decideAdaptive({
      stats: stats([mkEni(0, 9, { assigned: 9 }), mkEni(1, 0)]),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
      observation: { ...obs({ arrivals: 8 }), subnetFreeAddresses: 8 },
      state: settled,
    });
    expect(r.why.code).toBe('subnet-scarce');
    expect(r.targets.warm).toBe(4);
  });

  it('starts a new node warm (start-up prior) and sheds it with its half-life', () => {
    const at = (now: number, state = initialAdaptiveState) =>
      decideAdaptive({
        stats: stats([mkEni(0, 9, { assigned: 0 })]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now },
        observation: obs(),
        state,
      });
    const boot = at(1_000_000);
    expect(boot.why.code).toBe('startup');
    expect(boot.targets.warm).toBe(9);
    expect(at(1_000_000 + 240_000, boot.state).targets.warm).toBe(3); // 9 / 4, rounded up
  });

  it('under EC2 throttling grows in big batches and releases nothing; after a grow it waits before releasing', () => {
    const run = (observation: ReturnType<typeof obs> & { throttled?: number }, state = settled) =>
      decideAdaptive({
        settings: { releaseDelayMs: 120_000 },
        stats: stats([mkEni(0, 9, { assigned: 3 }), mkEni(1, 0)]),
        targets: DEFAULT_TARGETS,
        limits,
        timing: { now: 1_000_000 },
        observation,
        state,
      });
    const calm = run(obs());
    expect(calm.decision.kind).toBe('release');
    const throttled = run({ ...obs(), throttled: 2 });
    expect(throttled.targets.pressured).toBe(true);
    expect(throttled.targets.batch).toBe(5); // half of maxWarm 9, rounded up
    expect(throttled.decision.kind).toBe('none');
    expect(throttled.decision.reason.message).toContain('EC2 throttled');
    const justGrew = run(obs(), { ...settled, grewAt: 1_000_000 - 60_000 });
    expect(justGrew.decision.kind).toBe('none');
    expect(justGrew.decision.reason.message).toContain('grew recently');
  });

  it('attaches a headroom ENI with one address when attached ENIs have no free slots for a burst', () => {
    const r = decideAdaptive({
      stats: stats([mkEni(0, 9, { assigned: 5 })]),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
      observation: obs(),
      state: settled,
    });
    expect(r.decision).toMatchObject({ kind: 'create-eni', count: 1, reason: { code: 'eni-headroom' } });
  });

  it('counts the headroom on one ENI: free slots split across ENIs do not hold a burst in one call', () => {
    // 10 free slots in all (5 on eni-1, 5 on eni-2), more than maxWarm 9, but no one ENI can take a grow of 9.
    const split = [mkEni(0, 9, { assigned: 9 }), mkEni(1, 4, { assigned: 4 }), mkEni(2, 4, { assigned: 2 })];
    const run = (enis: ReturnType<typeof mkEni>[]) =>
      decideAdaptive({
        stats: stats(enis),
        targets: DEFAULT_TARGETS,
        limits: { ...limits, maxEnis: 4 },
        timing: { now: 1_000_000 },
        observation: obs(),
        state: settled,
      });
    expect(run(split).decision).toMatchObject({
      kind: 'create-eni',
      count: 1,
      reason: { code: 'eni-headroom' },
    });
    // One ENI with 9 free slots is headroom enough: nothing attached.
    const whole = [mkEni(0, 9, { assigned: 9 }), mkEni(1, 4, { assigned: 2 }), mkEni(2, 0)];
    expect(run(whole).decision.reason.code).not.toBe('eni-headroom');
  });

  it('on a large instance, free slots for twice maxWarm in all are headroom enough (two calls at most)', () => {
    // m5.4xlarge-like: 29 slots per ENI, maxWarm 29. Insisting on 29 free on one ENI would attach ENI after ENI.
    const big = { maxEnis: 8, ipv4PerEni: 30, maxPods: 110 };
    const run = (enis: ReturnType<typeof mkEni>[]) =>
      decideAdaptive({
        stats: stats(enis),
        targets: DEFAULT_TARGETS,
        limits: big,
        timing: { now: 1_000_000 },
        observation: obs(),
        state: settled,
      }).decision;
    const full = mkEni(0, 29, { assigned: 29 });
    // Free slots 13 + 16 + 15 = 44: more than maxWarm in all, none with 29, less than twice: a spare ENI.
    const split = [
      full,
      mkEni(1, 16, { assigned: 14 }),
      mkEni(2, 13, { assigned: 13 }),
      mkEni(3, 14, { assigned: 14 }),
    ];
    expect(run(split)).toMatchObject({ kind: 'create-eni', reason: { code: 'eni-headroom' } });
    // One more ENI with 14 free slots: 58, twice maxWarm — a burst of 29 takes two calls at most: no spare.
    const spread = [...split, mkEni(4, 15, { assigned: 15 })];
    expect(run(spread).reason.code).not.toBe('eni-headroom');
  });

  it('routes a grow through a new ENI when the cluster budget has assigns waiting longer than an ENI takes', () => {
    const run = (budgetWaitMs?: { assign?: number; eni?: number }, maxEnis = 3) =>
      decideAdaptive({
        stats: stats([mkEni(0, 2, { assigned: 2 })]),
        targets: DEFAULT_TARGETS,
        limits: { ...limits, maxEnis },
        timing: { now: 1_000_000 },
        observation: { ...obs({ waiting: 3 }), ...(budgetWaitMs ? { budgetWaitMs } : {}) },
        state: settled,
      });
    expect(run().decision.kind).toBe('assign');
    // Assigns queue 4 s, ENIs 0 s: a new ENI (eniLeadMs 5 s) is not clearly faster, stay with the assign.
    expect(run({ assign: 4_000, eni: 0 }).decision.kind).toBe('assign');
    // ENIs queue too (8 s + 5 s): not twice as fast as waiting 20 s, stay with the assign.
    expect(run({ assign: 20_000, eni: 8_000 }).decision.kind).toBe('assign');
    const routed = run({ assign: 12_000, eni: 0 });
    const plain = run();
    expect(routed.decision).toMatchObject({ kind: 'create-eni', unit: 'ip' });
    expect(routed.decision.kind === 'create-eni' && routed.decision.count).toBe(
      plain.decision.kind === 'assign' ? plain.decision.count : -1,
    );
    expect(routed.decision.reason.message).toContain('through a new ENI');
    // No room for another ENI: the assign waits.
    expect(run({ assign: 12_000, eni: 0 }, 1).decision.kind).toBe('assign');
  });
});
