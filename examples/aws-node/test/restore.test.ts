/**
 * Start-up restore (`restoreNode`) against the ec2-simulator while IMDS lags EC2: a live pod's address is kept
 * when EC2 confirms it, waited for while IMDS catches up, dropped only when EC2 no longer assigns it, and the
 * start is refused (checkpoint untouched) when nothing can confirm it.
 */
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer } from '@vpc-cni-kit/datastore/testing';
import {
  allocationNodeOf,
  createEniManager,
  type Ec2Actions,
  type Ec2Api,
  isEniManagerError,
} from '@vpc-cni-kit/eni-manager';
import { hostVethName, routeTableId } from '@vpc-cni-kit/routing-table';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/daemon/logger.js';
import { restoreNode } from '../src/daemon/restore.js';
import { readSavedState } from '../src/daemon/saved-state.js';
import { isStartError } from '../src/daemon/start-error.js';
import { podKey } from './support/backend.js';
import { testPool } from './support/pool.js';
import { type SimNode, startSimNode } from './support/sim-node.js';

let world: SimNode | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * A node whose previous daemon gave pod p0 an address EC2 assigned while IMDS lagged by `lagMs`, then died:
 * the checkpoint lists p0, and its host veth exists.
 */
async function crashedNode(lagMs: number) {
  const w = await startSimNode();
  world = w;
  w.sim.faults.add({ kind: 'imds-delay', ms: lagMs });
  const eniId = w.node.primaryEni.eniId;
  const got = await w.eni.assignIpv4(eniId, { ipv4Count: 2 });
  const written = new InMemoryGroupCommitCheckpointer();
  const before = new Datastore({ clock: w.clock, checkpointer: written, cooldownMs: 0 });
  await testPool(before, w.eni, 0, { routeTableId }).adoptEni({
    ...w.node.primaryEni,
    ipv4Addresses: [w.node.primaryEni.ipv4Addresses[0]!, ...got.ipv4Addresses],
  });
  const address = before.assignPending(podKey(0), { namespace: 'default', name: 'p0' }).result.address;
  await before.flush();
  const text = written.read();
  const veths = new Set([hostVethName('eni', 'default', 'p0')]);
  const restart = (imdsOnly: boolean, describeEnis = () => w.eni.describeEnis()) => {
    const checkpointer = new InMemoryGroupCommitCheckpointer(text);
    const datastore = new Datastore({ clock: w.clock, checkpointer, cooldownMs: 0 });
    const pool = testPool(datastore, w.eni, 0, { routeTableId });
    const outcome = restoreNode({
      datastore,
      checkpoint: readSavedState(checkpointer, 'ipam.json').checkpoint,
      listImdsEnis: () => w.metadata.listEnis(),
      ...(imdsOnly ? {} : { describeEnis }),
      adoptEni: (e) => pool.adoptEni(e),
      podExists: (e) => veths.has(hostVethName('eni', e.metadata.k8sPodNamespace!, e.metadata.k8sPodName!)),
      confirmWaitMs: 10_000,
      retryMs: 1_000,
      sleep: async (ms) => w.clock.advance(ms),
      now: () => w.clock.now(),
      log: silentLogger,
    });
    return { outcome, datastore, checkpointer };
  };
  return { w, address, text, restart, eniId };
}

describe('restoreNode while IMDS lags EC2', () => {
  it('keeps the live pod: EC2 lists its address though IMDS does not yet (one read, no wait)', async () => {
    const { address, restart } = await crashedNode(600_000);
    const { outcome, datastore } = restart(false);
    const { report, reads } = await outcome;
    expect(reads).toBe(1);
    expect(report.dropped).toEqual([]);
    expect(datastore.findByPod(podKey(0))?.address).toBe(address);
    // The address is taken: the next pod gets the other one.
    expect(datastore.assignPending(podKey(1)).result.address).not.toBe(address);
  });

  it('IMDS-only: waits for IMDS to catch up when the lag is shorter than the wait', async () => {
    const { address, restart } = await crashedNode(3_000);
    const { outcome, datastore } = restart(true);
    const { reads } = await outcome;
    expect(reads).toBeGreaterThan(1);
    expect(datastore.findByPod(podKey(0))?.address).toBe(address);
  });

  it('IMDS-only: refuses to start when IMDS does not catch up, and leaves the checkpoint as it was', async () => {
    const { restart, text } = await crashedNode(600_000);
    const { outcome, datastore, checkpointer } = restart(true);
    const error = await outcome.catch((e: unknown) => e);
    expect(isStartError(error, 'RestoreUnconfirmed')).toBe(true);
    expect(String(error)).toContain('default/p0');
    expect(checkpointer.read()).toBe(text);
    expect(datastore.assignments()).toEqual([]);
  });

  it('drops the entry only when EC2 confirms the address is gone', async () => {
    const { w, address, restart, eniId } = await crashedNode(600_000);
    await w.admin.call('UnassignPrivateIpAddresses', {
      NetworkInterfaceId: eniId,
      PrivateIpAddresses: [address],
    });
    const { outcome, datastore } = restart(false);
    const { report } = await outcome;
    expect(report.dropped.map((d) => [d.entry.ipv4, d.reason])).toEqual([[address, 'outside-known-cidrs']]);
    expect(datastore.findByPod(podKey(0))).toBeUndefined();
  });
});

describe('restoreNode with a malformed EC2 reply', () => {
  it('an IPv4 prefix EC2 garbled fails the start with Ec2InvalidResponse before anything is restored', async () => {
    const { w, restart, text } = await crashedNode(600_000);
    // The daemon's EniManager, but its EC2 port edits the parsed DescribeNetworkInterfaces reply of the real
    // simulator (the simulator has no hook to garble a reply itself).
    const garbling: Ec2Api = {
      async call(action, input) {
        const out = await w.admin.call(action, input);
        if (action === 'DescribeNetworkInterfaces') {
          const reply = out as Ec2Actions['DescribeNetworkInterfaces'][1];
          reply.NetworkInterfaces![0]!.Ipv4Prefixes = [{ Ipv4Prefix: '10.0.0.0/8' }];
        }
        return out;
      },
      destroy: () => undefined,
    };
    const eni = createEniManager({ ec2: garbling, metadata: w.metadata, node: allocationNodeOf(w.node) });
    const { outcome, datastore, checkpointer } = restart(false, () => eni.describeEnis());
    const error = await outcome.catch((e: unknown) => e);
    expect(isEniManagerError(error, 'Ec2InvalidResponse')).toBe(true);
    expect(error).toMatchObject({
      action: 'DescribeNetworkInterfaces',
      field: 'NetworkInterfaces[0].Ipv4Prefixes[0].Ipv4Prefix',
    });
    expect(datastore.assignments()).toEqual([]);
    expect(datastore.eniIds()).toEqual([]);
    expect(checkpointer.read()).toBe(text);
  });
});
