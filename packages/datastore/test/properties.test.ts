import type { CidrStats, DatastoreStats } from '@vpc-cni-kit/datastore';
import { isDatastoreError } from '@vpc-cni-kit/datastore';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eni, pod, setup } from './helpers.js';

const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ t: fc.constant('assign' as const), pod: fc.nat(60) }) },
    { weight: 3, arbitrary: fc.record({ t: fc.constant('unassign' as const), pod: fc.nat(60) }) },
    {
      weight: 1,
      arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 40_000 }) }),
    },
  ),
  { maxLength: 250 },
);

const COOLDOWN = 30_000;

/** Three ENIs (primary + two secondaries): 4 /32s each, or 2 /28 prefixes each. */
function build(pd: boolean) {
  const env = setup({ prefixDelegation: pd, cooldownMs: COOLDOWN });
  for (let n = 0; n < 3; n++) {
    eni(env.ds, n);
    for (let k = 0; k < (pd ? 2 : 4); k++) {
      env.ds.addCidr(`eni-${n}`, pd ? `10.${n}.${k}.0/28` : `10.${n}.0.${k + 10}/32`);
    }
  }
  return env;
}

function ready(c: CidrStats): boolean {
  return c.size - c.assigned - c.cooldown > 0;
}

function cidrIndex(stats: DatastoreStats) {
  const m = new Map<string, { eni: DatastoreStats['enis'][number]; cidr: CidrStats }>();
  for (const e of stats.enis) for (const c of e.cidrs) m.set(c.cidr, { eni: e, cidr: c });
  return m;
}

describe('datastore properties', () => {
  for (const pd of [false, true]) {
    it(`${pd ? 'prefix' : '/32'} mode: unique addresses, idempotent keys, cooldown respected, packing`, () => {
      fc.assert(
        fc.property(ops, (script) => {
          const { ds, clock } = build(pd);
          const held = new Map<number, string>();
          const released = new Map<string, number>();
          for (const op of script) {
            if (op.t === 'advance') {
              clock.advance(op.ms);
              continue;
            }
            if (op.t === 'unassign') {
              const had = held.get(op.pod);
              try {
                const r = ds.unassign(pod(op.pod));
                expect(r.address).toBe(had);
                held.delete(op.pod);
                released.set(r.address, clock.now());
              } catch (e) {
                expect(isDatastoreError(e, 'UnknownPod')).toBe(true);
                expect(had).toBeUndefined();
              }
              continue;
            }
            const before = ds.stats();
            try {
              const r = ds.assign(pod(op.pod));
              const had = held.get(op.pod);
              if (had !== undefined) {
                expect(r.address).toBe(had);
                continue;
              }
              // Cooldown: an address released at t is not reused until t + cooldown has passed.
              const at = released.get(r.address);
              if (at !== undefined) expect(clock.now() - at).toBeGreaterThan(COOLDOWN);
              // Uniqueness.
              expect([...held.values()]).not.toContain(r.address);
              held.set(op.pod, r.address);
              // Packing: open an empty CIDR only when no used CIDR had room; start using an empty,
              // freeable ENI only when nothing else had room.
              const idx = cidrIndex(before);
              const chosen = idx.get(r.cidr)!;
              const others = [...idx.values()].filter(
                (x) => x.cidr.cidr !== r.cidr && !x.eni.excluded && x.cidr.isPrefix === pd && ready(x.cidr),
              );
              if (chosen.cidr.assigned === 0) {
                expect(others.filter((x) => x.cidr.assigned > 0)).toEqual([]);
              }
              const freeable = (e: DatastoreStats['enis'][number]) => !e.isPrimary && e.assignedIPs === 0;
              if (freeable(chosen.eni)) {
                expect(others.filter((x) => !freeable(x.eni))).toEqual([]);
              }
            } catch (e) {
              if (!isDatastoreError(e, 'NoAvailableAddress')) throw e;
              // Only when nothing of the current mode is ready.
              expect(
                [...cidrIndex(before).values()].filter((x) => x.cidr.isPrefix === pd && ready(x.cidr)),
              ).toEqual([]);
            }
          }
          const s = ds.stats();
          expect(s.assignedIPs).toBe(held.size);
          expect(new Set(ds.assignments().map((a) => a.address)).size).toBe(held.size);
        }),
        { numRuns: 150 },
      );
    });
  }

  it('assigns alone pack tightly: ceil(n/16) prefixes, and ENIs in device order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 96 }), (n) => {
        const { ds } = build(true);
        for (let i = 0; i < n; i++) ds.assign(pod(i));
        const used = ds.stats().enis.flatMap((e) => e.cidrs.filter((c) => c.assigned > 0));
        expect(used.length).toBe(Math.ceil(n / 16));
        const perEni = ds.stats().enis.map((e) => e.assignedIPs);
        expect(perEni).toEqual([Math.min(n, 32), Math.min(Math.max(n - 32, 0), 32), Math.max(n - 64, 0)]);
      }),
    );
  });
});
