import { Datastore, isDatastoreError, parseCheckpoint } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pod } from './helpers.js';

const ops = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ t: fc.constant('add' as const), pod: fc.nat(12) }) },
    { weight: 4, arbitrary: fc.record({ t: fc.constant('del' as const), pod: fc.nat(12) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('hold' as const) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('release' as const) }) },
    {
      weight: 2,
      arbitrary: fc.record({ t: fc.constant('fail' as const), n: fc.integer({ min: 1, max: 2 }) }),
    },
    { weight: 6, arbitrary: fc.record({ t: fc.constant('settle' as const) }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('advance' as const) }) },
  ),
  { minLength: 30, maxLength: 120 },
);

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('group commit, randomized', () => {
  it('never acknowledges one address to two pods; at rest, disk = memory ⊇ every acknowledged assignment', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (program) => {
        const clock = new ManualClock();
        const cp = new InMemoryGroupCommitCheckpointer();
        const ds = new Datastore({ clock, checkpointer: cp, cooldownMs: 0 });
        ds.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
        for (let i = 0; i < 6; i++) ds.addCidr('eni-0', `10.0.1.${10 + i}/32`);

        // What the runtime was told: pod → address, per durable ADD, removed per durable DEL.
        const acked = new Map<number, string>();
        const violations: string[] = [];
        const check = (what: string) => {
          const seen = new Map<string, number>();
          for (const [p, a] of acked) {
            if (seen.has(a)) violations.push(`${what}: ${a} acknowledged to pods ${seen.get(a)} and ${p}`);
            seen.set(a, p);
          }
        };
        const inFlight: Promise<unknown>[] = [];
        const deleting = new Map<number, number>(); // DELs in flight per pod
        const bump = (p: number, d: number) => deleting.set(p, (deleting.get(p) ?? 0) + d);

        for (const op of program) {
          if (op.t === 'add') {
            try {
              const c = ds.assignPending(pod(op.pod));
              inFlight.push(
                c.durable.then(
                  (r) => {
                    acked.set(op.pod, r.address);
                    check(`add ${op.pod}`);
                  },
                  (e) => {
                    if (!isDatastoreError(e, 'CheckpointWriteFailed')) violations.push(String(e));
                  },
                ),
              );
            } catch (e) {
              if (!isDatastoreError(e, 'NoAvailableAddress')) throw e;
            }
          } else if (op.t === 'del') {
            try {
              const c = ds.unassignPending(pod(op.pod));
              bump(op.pod, 1);
              inFlight.push(
                c.durable.then(
                  () => {
                    bump(op.pod, -1);
                    acked.delete(op.pod);
                  },
                  (e) => {
                    bump(op.pod, -1);
                    if (!isDatastoreError(e, 'CheckpointWriteFailed')) violations.push(String(e));
                  },
                ),
              );
            } catch (e) {
              if (!isDatastoreError(e, 'UnknownPod')) throw e;
              // Unknown in memory: unless a DEL of it is in flight, the runtime must not believe it holds one.
              if (acked.has(op.pod) && !deleting.get(op.pod)) {
                violations.push(`pod ${op.pod} acknowledged but unknown`);
              }
            }
          } else if (op.t === 'hold') cp.hold();
          else if (op.t === 'release') cp.release();
          else if (op.t === 'fail') cp.failWrites(op.n);
          else if (op.t === 'advance') clock.advance(1);
          else for (let i = 0; i < 3; i++) await turn();
        }
        cp.failWrites(0);
        cp.release();
        await Promise.all(inFlight);
        await cp.idle();

        expect(violations).toEqual([]);
        const memory = new Map(ds.assignments().map((a) => [a.key.containerID, a.address]));
        const disk = new Map(
          (cp.text === undefined ? [] : parseCheckpoint(cp.text).allocations).map((a) => [
            a.containerID,
            a.ipv4,
          ]),
        );
        expect(disk).toEqual(memory);
        for (const [p, a] of acked) expect(memory.get(pod(p).containerID)).toBe(a);
      }),
      { numRuns: 200 },
    );
  });
});
