import { Datastore, type DatastoreStats } from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { DEFAULT_TARGETS, decide, type PoolDecision, type PoolStats } from '@vpc-cni-kit/warm-pool';
import { describe, expect, it } from 'vitest';

// Compile-time check: the datastore's stats are the policy's input, with no adapter.
const _shape: (s: DatastoreStats) => PoolStats = (s) => s;
void _shape;

/** Drives a real datastore with the policy, applying decisions the way the daemon's pool loop does. */
function applyTo(ds: Datastore, d: PoolDecision, next: { ip: number; device: number }): void {
  const cidr = (unit: 'ip' | 'prefix') => {
    const n = next.ip;
    next.ip += unit === 'prefix' ? 16 : 1;
    return `10.0.${(n >> 8) & 255}.${n & 255}/${unit === 'prefix' ? 28 : 32}`;
  };
  if (d.kind === 'assign') for (let i = 0; i < d.count; i++) ds.addCidr(d.eniId, cidr(d.unit));
  if (d.kind === 'create-eni') {
    const id = `eni-${next.device}`;
    ds.addEni({ id, deviceNumber: next.device, routeTableId: next.device + 1, subnetId: 's' });
    next.device += 1;
    for (let i = 0; i < d.count; i++) ds.addCidr(id, cidr(d.unit));
  }
  if (d.kind === 'release') for (const c of d.cidrs) ds.removeCidr(c.eniId, c.cidr);
  if (d.kind === 'free-eni') ds.removeEni(d.eniId);
}

describe('warm-pool on a real datastore', () => {
  for (const [name, targets] of [
    ['defaults', DEFAULT_TARGETS],
    ['WARM_IP_TARGET=5', { ...DEFAULT_TARGETS, warmIpTarget: 5 }],
    ['PD WARM_PREFIX_TARGET=1', { ...DEFAULT_TARGETS, prefixDelegation: true, warmPrefixTarget: 1 }],
  ] as const) {
    it(`${name}: pods get addresses, the pool settles, and pod departures shrink it back`, () => {
      const clock = new ManualClock(0);
      const ds = new Datastore({
        clock,
        checkpointer: new InMemoryCheckpointer(),
        prefixDelegation: targets.prefixDelegation,
      });
      ds.addEni({
        id: 'eni-0',
        deviceNumber: 0,
        routeTableId: 254,
        subnetId: 's',
        isPrimary: true,
        createdAt: 0,
      });
      const next = { ip: 16, device: 1 };
      let lastShrinkAt: number | undefined;
      const loop = (ticks: number) => {
        for (let t = 0; t < ticks; t++) {
          clock.advance(5_000);
          const d = decide({
            stats: ds.stats(),
            targets,
            limits: { maxEnis: 3, ipv4PerEni: 10, maxPods: 110 },
            timing: lastShrinkAt === undefined ? { now: clock.now() } : { now: clock.now(), lastShrinkAt },
          });
          applyTo(ds, d, next);
          if (d.kind === 'release') lastShrinkAt = clock.now();
        }
      };
      loop(5);
      for (let p = 0; p < 20; p++) {
        ds.assign({ networkName: 'aws-cni', containerID: `p${p}`, ifName: 'eth0' });
        loop(2);
      }
      loop(60);
      const busy = ds.stats();
      expect(busy.assignedIPs).toBe(20);
      for (let p = 0; p < 20; p++)
        ds.unassign({ networkName: 'aws-cni', containerID: `p${p}`, ifName: 'eth0' });
      loop(120);
      const idle = ds.stats();
      expect(idle.assignedIPs).toBe(0);
      expect(idle.totalIPs).toBeLessThan(busy.totalIPs);
      expect(idle.enis.length).toBe(1);
      // Settled: nothing more to do.
      const d = decide({
        stats: idle,
        targets,
        limits: { maxEnis: 3, ipv4PerEni: 10, maxPods: 110 },
        timing: { now: clock.now(), ...(lastShrinkAt === undefined ? {} : { lastShrinkAt }) },
      });
      expect(d.kind).toBe('none');
    });
  }
});
