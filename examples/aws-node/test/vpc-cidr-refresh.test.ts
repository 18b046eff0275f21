import { describe, expect, it } from 'vitest';
import { startVpcCidrRefresh } from '../src/daemon/vpc-cidr-refresh.js';

const quiet = { info: () => {}, warn: () => {} };

describe('VPC CIDR refresh', () => {
  it('re-applies SNAT only when the set of blocks changed, and remembers only what was applied', async () => {
    let imds: string[] = ['10.20.0.0/16', '100.64.0.0/16'];
    const applied: (readonly string[])[] = [];
    let fail = false;
    const r = startVpcCidrRefresh({
      initial: ['10.20.0.0/16', '100.64.0.0/16'],
      read: async () => imds,
      apply: async (c) => {
        if (fail) throw new Error('iptables-restore failed');
        applied.push(c);
      },
      intervalMs: 3_600_000,
      log: quiet,
    });
    try {
      expect(await r.refreshNow()).toBe(false);
      imds = ['100.64.0.0/16', '10.20.0.0/16']; // same set, other order: nothing to do
      expect(await r.refreshNow()).toBe(false);
      imds = ['10.20.0.0/16', '100.64.0.0/16', '100.65.0.0/16'];
      fail = true;
      await expect(r.refreshNow()).rejects.toThrow('iptables-restore failed');
      expect(r.current()).toEqual(['10.20.0.0/16', '100.64.0.0/16']);
      fail = false;
      expect(await r.refreshNow()).toBe(true);
      expect(applied).toEqual([['10.20.0.0/16', '100.64.0.0/16', '100.65.0.0/16']]);
      expect(r.current()).toEqual(['10.20.0.0/16', '100.64.0.0/16', '100.65.0.0/16']);
      imds = []; // an empty answer is never applied (it would SNAT the whole VPC)
      expect(await r.refreshNow()).toBe(false);
    } finally {
      r.stop();
    }
  });

  it('runs by itself every period, keeps going after a failed read, and stops', async () => {
    let reads = 0;
    const applied: (readonly string[])[] = [];
    const warnings: string[] = [];
    const r = startVpcCidrRefresh({
      initial: ['10.20.0.0/16'],
      read: async () => {
        reads++;
        if (reads === 1) throw new Error('IMDS timeout');
        return ['10.20.0.0/16', '100.64.0.0/16'];
      },
      apply: async (c) => {
        applied.push(c);
      },
      intervalMs: 10,
      log: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    for (let i = 0; i < 100 && applied.length === 0; i++) await new Promise((res) => setTimeout(res, 10));
    r.stop();
    expect(warnings).toEqual(['VPC CIDR refresh failed; keeping the rules in force']);
    expect(applied).toEqual([['10.20.0.0/16', '100.64.0.0/16']]);
    const after = reads;
    await new Promise((res) => setTimeout(res, 50));
    expect(reads).toBe(after);
  });
});
