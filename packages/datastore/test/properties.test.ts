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
    {
      weight: 2,
      arbitrary: fc.record({ t: fc.constant('toggle' as const), cidr: fc.nat(11), force: fc.boolean() }),
    },
  ),
  { maxLength: 250 },
);

const COOLDOWN = 30_000;

/** Three ENIs (primary + two secondaries): 4 /32s each, or 1, 2 and 1 /28 prefixes. */
function build(pd: boolean, prefixes: readonly number[] = [1, 2, 1]) {
  const env = setup({ prefixDelegation: pd, cooldownMs: COOLDOWN });
  const all: { eniId: string; cidr: string }[] = [];
  for (let n = 0; n < 3; n++) {
    eni(env.ds, n);
    for (let k = 0; k < (pd ? prefixes[n]! : 4); k++) {
      const cidr = pd ? `10.${n}.${k}.0/28` : `10.${n}.0.${k + 10}/32`;
      env.ds.addCidr(`eni-${n}`, cidr);
      all.push({ eniId: `eni-${n}`, cidr });
    }
  }
  return { ...env, all, present: new Set(all.map((c) => c.cidr)) };
}

function v4(a: string): number {
  return a.split('.').reduce((v, p) => v * 256 + Number(p), 0);
}

function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const b = v4(base!);
  return v4(address) >= b && v4(address) < b + size;
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
          const { ds, clock, all, present } = build(pd);
          const held = new Map<number, string>();
          const released = new Map<string, number>();
          for (const op of script) {
            if (op.t === 'advance') {
              clock.advance(op.ms);
              continue;
            }
            if (op.t === 'toggle') {
              // Remove a CIDR (forced or not) or add it back.
              const c = all[op.cidr % all.length]!;
              if (!present.has(c.cidr)) {
                ds.addCidr(c.eniId, c.cidr);
                present.add(c.cidr);
                continue;
              }
              try {
                const { dropped } = ds.removeCidr(c.eniId, c.cidr, { force: op.force });
                present.delete(c.cidr);
                // A re-added CIDR starts fresh (no cooldown memory), as in the reference.
                for (const a of [...released.keys()]) if (inCidr(a, c.cidr)) released.delete(a);
                for (const d of dropped) {
                  const owner = Number(d.key.containerID.slice(2));
                  expect(held.get(owner)).toBe(d.address);
                  held.delete(owner);
                }
              } catch (e) {
                expect(isDatastoreError(e, 'CidrInUse')).toBe(true);
                expect(op.force).toBe(false);
              }
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
            // Stats list exactly the CIDRs present, each ENI's in address order (also after removals and
            // re-adds: the order is kept between changes, not sorted on every call).
            for (const e of before.enis) {
              const listed = all.filter((c) => c.eniId === e.id && present.has(c.cidr)).map((c) => c.cidr);
              expect(e.cidrs.map((c) => c.cidr)).toEqual(listed.sort((a, b) => v4(a) - v4(b)));
            }
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
              // Uniqueness, and only from CIDRs that are still there.
              expect([...held.values()]).not.toContain(r.address);
              expect(present.has(r.cidr)).toBe(true);
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
        { numRuns: 300 },
      );
    });
  }

  it('assigns alone pack tightly: ceil(n/16) prefixes, and ENIs in device order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 96 }), (n) => {
        const { ds } = build(true, [2, 2, 2]);
        for (let i = 0; i < n; i++) ds.assign(pod(i));
        const used = ds.stats().enis.flatMap((e) => e.cidrs.filter((c) => c.assigned > 0));
        expect(used.length).toBe(Math.ceil(n / 16));
        const perEni = ds.stats().enis.map((e) => e.assignedIPs);
        expect(perEni).toEqual([Math.min(n, 32), Math.min(Math.max(n - 32, 0), 32), Math.max(n - 64, 0)]);
      }),
    );
  });
});
