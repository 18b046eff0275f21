import { decide, type PoolDecision, type PoolTargets } from '@vpc-cni-kit/warm-pool';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apply, type ModelCidr, type ModelEni, mkEni, stats } from './model.js';

interface Scenario {
  targets: PoolTargets;
  limits: {
    maxEnis: number;
    ipv4PerEni: number;
    maxPods: number;
    maxEniSetting: number;
    trunkReserve: number;
  };
  enis: ModelEni[];
}

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    pd: fc.boolean(),
    warmEniTarget: fc.integer({ min: 0, max: 3 }),
    warmIpTarget: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
    minimumIpTarget: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
    warmPrefixTarget: fc.integer({ min: 0, max: 3 }),
    maxEnis: fc.integer({ min: 1, max: 5 }),
    ipv4PerEni: fc.integer({ min: 2, max: 15 }),
    maxPods: fc.integer({ min: 1, max: 300 }),
    maxEniSetting: fc.integer({ min: -1, max: 5 }),
    trunkReserve: fc.integer({ min: 0, max: 1 }),
    shape: fc.array(
      fc.record({
        cidrs: fc.nat(14),
        fill: fc.double({ min: 0, max: 1, noNaN: true }),
        ageMs: fc.integer({ min: 0, max: 300_000 }),
        efa: fc.boolean(),
      }),
      { minLength: 1, maxLength: 5 },
    ),
  })
  // No filter for the reference's start-up check (PD needs one of WARM_IP/WARM_PREFIX/MINIMUM_IP > 0):
  // the policy's no-regrow guards make even those settings converge.
  .map((s) => {
    const maxEni = s.maxEniSetting >= 1 ? Math.min(s.maxEniSetting, s.maxEnis) : s.maxEnis;
    const slots = s.ipv4PerEni - 1;
    const enis = s.shape.slice(0, maxEni).map((sh, i) => {
      const n = Math.min(sh.cidrs, slots);
      const size = s.pd ? 16 : 1;
      const e = mkEni(i, n, {
        pd: s.pd,
        createdAt: 1_000_000 - sh.ageMs,
        flags: { isEfa: i > 0 && sh.efa && sh.ageMs % 7 === 0 },
      });
      e.cidrs.forEach((c: ModelCidr) => {
        c.assigned = Math.floor(sh.fill * size);
      });
      return e;
    });
    return {
      targets: {
        prefixDelegation: s.pd,
        warmEniTarget: s.warmEniTarget,
        warmIpTarget: s.warmIpTarget,
        minimumIpTarget: s.minimumIpTarget,
        warmPrefixTarget: s.warmPrefixTarget,
      },
      limits: {
        maxEnis: s.maxEnis,
        ipv4PerEni: s.ipv4PerEni,
        maxPods: s.maxPods,
        maxEniSetting: s.maxEniSetting,
        trunkReserve: s.trunkReserve,
      },
      enis,
    };
  });

function isGrow(d: PoolDecision): boolean {
  return d.kind === 'assign' || d.kind === 'create-eni';
}

describe('warm-pool properties', () => {
  it('a decision never releases an assigned or cooling address, never frees a used ENI, never exceeds limits', () => {
    fc.assert(
      fc.property(scenario, fc.array(fc.nat(16), { maxLength: 60 }), (s, cooling) => {
        // Sprinkle cooling addresses over unassigned slots.
        let k = 0;
        for (const e of s.enis)
          for (const c of e.cidrs)
            c.cooldown = Math.min(cooling[k++ % Math.max(cooling.length, 1)] ?? 0, c.size - c.assigned);
        const d = decide({
          stats: stats(s.enis),
          targets: s.targets,
          limits: s.limits,
          timing: { now: 1_000_000 },
        });
        const find = (eniId: string, cidr: string) =>
          s.enis.find((e) => e.id === eniId)!.cidrs.find((c) => c.cidr === cidr)!;
        if (d.kind === 'release') {
          expect(d.cidrs.length).toBeGreaterThan(0);
          for (const r of d.cidrs) {
            expect(find(r.eniId, r.cidr).assigned).toBe(0);
            expect(find(r.eniId, r.cidr).cooldown).toBe(0);
          }
        }
        if (d.kind === 'free-eni') {
          const e = s.enis.find((x) => x.id === d.eniId)!;
          expect(e.isPrimary || e.isEfa).toBe(false);
          expect(e.cidrs.every((c) => c.assigned === 0 && c.cooldown === 0)).toBe(true);
        }
        const maxEni =
          s.limits.maxEniSetting >= 1 ? Math.min(s.limits.maxEniSetting, s.limits.maxEnis) : s.limits.maxEnis;
        // apply() throws when a limit would be exceeded or an assigned address released.
        apply(s.enis, d, 1_000_000, { maxEni, slots: s.limits.ipv4PerEni - 1 });
      }),
      { numRuns: 500 },
    );
  });

  it('with no pod churn, repeated decisions converge and never grow after shrinking', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const maxEni =
          s.limits.maxEniSetting >= 1 ? Math.min(s.limits.maxEniSetting, s.limits.maxEnis) : s.limits.maxEnis;
        let now = 1_000_000;
        let lastShrinkAt: number | undefined;
        let shrunk = false;
        const kinds: string[] = [];
        for (let tick = 0; tick < 200; tick++) {
          now += 5_000;
          const d = decide({
            stats: stats(s.enis),
            targets: s.targets,
            limits: s.limits,
            timing: lastShrinkAt === undefined ? { now } : { now, lastShrinkAt },
          });
          kinds.push(d.kind);
          if (isGrow(d)) expect(shrunk, `grew after shrinking: ${kinds.join(' ')}`).toBe(false);
          if (d.kind === 'release' || d.kind === 'free-eni') shrunk = true;
          if (d.kind === 'release') lastShrinkAt = now;
          apply(s.enis, d, now, { maxEni, slots: s.limits.ipv4PerEni - 1 });
        }
        expect(
          kinds.slice(-30).every((k) => k === 'none'),
          kinds.join(' '),
        ).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
