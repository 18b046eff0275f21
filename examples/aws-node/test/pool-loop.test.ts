import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { type EniManager, eniError } from '@vpc-cni-kit/eni-manager';
import type { PoolDecision } from '@vpc-cni-kit/warm-pool';
import { describe, expect, it } from 'vitest';
import { testPool as poolLoop } from './support/pool.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A datastore on one primary ENI holding `addresses` /32s. */
function nodeDatastore(addresses: number): Datastore {
  const datastore = new Datastore({
    clock: new ManualClock(),
    checkpointer: new InMemoryGroupCommitCheckpointer(),
    cooldownMs: 0,
  });
  datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  for (let i = 0; i < addresses; i++) datastore.addCidr('eni-0', `10.0.1.${10 + i}/32`);
  return datastore;
}

/**
 * A pool loop over a real datastore whose pool is full and may not grow (one ENI of 8 addresses, one ENI
 * allowed): every decision is `none`, so no EC2 call is ever made and each pass is exactly one tick.
 */
function setup(wakeDelayMs: number) {
  const datastore = nodeDatastore(8);
  const decisions: PoolDecision[] = [];
  const noEc2 = new Proxy({} as EniManager, {
    get: (_t, name) => () => {
      throw new Error(`unexpected EC2 call ${String(name)}`);
    },
  });
  const pool = poolLoop(datastore, noEc2, 8, {
    observer: { decision: (d) => decisions.push(d), actionFailed: () => {} },
    wakeDelayMs,
  });
  return { pool, decisions, datastore };
}

describe('PoolLoop scheduling', () => {
  it('a started loop ticks once, then waits for its interval', async () => {
    const { pool, decisions } = setup(5);
    pool.start(60_000);
    await sleep(40);
    expect(decisions.map((d) => d.kind)).toEqual(['none']);
    await pool.stop();
  });

  it('wakes close together share one pass, and a wake is served by one pass, not two', async () => {
    const { pool, decisions } = setup(20);
    pool.start(60_000);
    await sleep(30);
    expect(decisions).toHaveLength(1);
    pool.wake();
    pool.wake();
    await sleep(5);
    pool.wake();
    await sleep(60);
    expect(decisions).toHaveLength(2);
    pool.wake();
    await sleep(60);
    expect(decisions).toHaveLength(3);
    await pool.stop();
  });

  it('a wake while a pass is running gets exactly one more pass after it', async () => {
    const { pool, decisions, datastore } = setup(5);
    // Make the tick observe a wake made from inside it (as a DEL finishing mid-tick would).
    const stats = datastore.stats.bind(datastore);
    let wakeInside = 1;
    datastore.stats = () => {
      if (wakeInside-- > 0) pool.wake();
      return stats();
    };
    pool.start(60_000);
    await sleep(60);
    expect(decisions).toHaveLength(2);
    await pool.stop();
  });

  it('does not tick before start, and never after stop', async () => {
    const { pool, decisions } = setup(5);
    pool.wake();
    await sleep(30);
    expect(decisions).toHaveLength(0);
    pool.start(60_000);
    await sleep(30);
    pool.wake();
    await pool.stop();
    await sleep(30);
    expect(decisions).toHaveLength(1);
  });
});

describe('PoolLoop under EC2 throttling', () => {
  it('a pool action whose EC2 call ran out of retries is reported, changes nothing, and the next pass redoes it', async () => {
    const datastore = nodeDatastore(0);
    // What eni-manager throws once a storm outlasts one call's retries (its own tests cover those retries).
    let throttledCalls = 1;
    const assigned: number[] = [];
    const eni = {
      async assignIpv4(_eniId: string, request: { ipv4Count?: number }) {
        if (throttledCalls-- > 0) {
          throw eniError('RequestLimitExceeded', 'AssignPrivateIpAddresses: throttled', {
            action: 'AssignPrivateIpAddresses',
            attempts: 10,
          });
        }
        const n = request.ipv4Count ?? 0;
        assigned.push(n);
        return { ipv4Addresses: Array.from({ length: n }, (_, i) => `10.0.1.${10 + i}`), ipv4Prefixes: [] };
      },
    } as unknown as EniManager;
    const failures: string[] = [];
    const actions: string[] = [];
    const pool = poolLoop(datastore, eni, 3, {
      observer: {
        decision: () => {},
        actionFailed: (kind, code, reason) => failures.push(`${kind} ${code} ${reason}`),
        actionStarted: (kind) => actions.push(`start ${kind}`),
        actionEnded: (kind) => actions.push(`end ${kind}`),
      },
    });
    expect((await pool.tick()).kind).toBe('assign');
    expect(failures).toEqual(['assign RequestLimitExceeded AssignPrivateIpAddresses: throttled']);
    // Every action other than none is bracketed, failed or not.
    expect(actions).toEqual(['start assign', 'end assign']);
    expect(datastore.stats().totalIPs).toBe(0);
    expect((await pool.tick()).kind).toBe('assign');
    expect(assigned).toEqual([3]);
    expect(datastore.stats().totalIPs).toBe(3);
    expect((await pool.tick()).kind).toBe('none');
  });
});
