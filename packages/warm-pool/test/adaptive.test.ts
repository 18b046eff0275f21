import { DEFAULT_TARGETS, decideAdaptive, initialAdaptiveState } from '@vpc-cni-kit/warm-pool';
import { describe, expect, it } from 'vitest';
import { mkEni, stats } from './model.js';

/** A node up for a while: the start-up prior has decayed. */
const settled = { ...initialAdaptiveState, bootAt: 0 };

const limits = { maxEnis: 3, ipv4PerEni: 10, maxPods: 29 };
const obs = (o: Partial<{ arrivals: number; departures: number; waiting: number }> = {}) => ({
  arrivals: 0,
  departures: 0,
  waiting: 0,
  ...o,
});

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
    const first = decideAdaptive({
      stats: stats(enis),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 },
      observation: obs({ arrivals: 6, waiting: 3 }),
      state: settled,
    });
    expect(first.why.code).toBe('pods-waiting');
    expect(first.targets.warm).toBe(9);
    expect(first.decision).toMatchObject({ kind: 'assign', eniId: 'eni-1', count: 8 });
    const later = decideAdaptive({
      stats: stats(enis),
      targets: DEFAULT_TARGETS,
      limits,
      timing: { now: 1_000_000 + 600_000 },
      observation: obs(),
      state: first.state,
    });
    expect(later.why.code).toBe('peak-demand');
    expect(later.targets.warm).toBe(3); // peak 6 halved after one half-life (10 min)
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
});
