import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Datastore } from '@vpc-cni-kit/datastore';
import { InMemoryGroupCommitCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { hostVethName } from '@vpc-cni-kit/routing-table';
import { describe, expect, it } from 'vitest';
import type { PlumbRequest, PodPlumber } from '../src/daemon/ipam-backend.js';
import { type NetnsCheck, netnsGuard } from '../src/daemon/netns-guard.js';
import { RpcStatusError } from '../src/rpc/grpc-server.js';
import type { AddNetworkRequest } from '../src/rpc/messages.js';
import { addRequest, delRequest, testBackend } from './support/backend.js';

/** A plumber that records what it was asked to do (the kernel side is covered by the e2e suites). */
class RecordingPlumber implements PodPlumber {
  readonly plumbed = new Map<string, PlumbRequest>();
  readonly tornDown: string[] = [];
  async setup(pod: PlumbRequest) {
    this.plumbed.set(pod.podIp, pod);
    return { hostVeth: pod.hostVeth, hostMac: '02:00:00:00:00:01' };
  }
  async teardown(pod: { podIp: string }) {
    this.plumbed.delete(pod.podIp);
    this.tornDown.push(pod.podIp);
  }
  hostVethName(prefix: string, namespace: string, name: string) {
    return hostVethName(prefix, namespace, name);
  }
}

function setup(addresses = 8, checkNetns: NetnsCheck = () => undefined) {
  const cp = new InMemoryGroupCommitCheckpointer();
  const datastore = new Datastore({ clock: new ManualClock(), checkpointer: cp, cooldownMs: 0 });
  datastore.addEni({ id: 'eni-0', deviceNumber: 0, routeTableId: 254, subnetId: 's', isPrimary: true });
  for (let i = 0; i < addresses; i++) datastore.addCidr('eni-0', `10.0.1.${10 + i}/32`);
  const plumber = new RecordingPlumber();
  const outcomes: string[] = [];
  const wakes: string[] = [];
  const failures: { code: string; message: string; pod: string }[] = [];
  const backend = testBackend(datastore, plumber, {
    onAddFailure: (f) => failures.push(f),
    observer: {
      addNetwork: (_ms, outcome) => outcomes.push(outcome),
      delNetwork: () => {},
      noAvailableAddress: () => {},
    },
    wakePool: () => void wakes.push(outcomes.at(-1) ?? ''),
    checkNetns,
  });
  return { cp, datastore, plumber, backend, outcomes, wakes, failures };
}

const stored = (cp: InMemoryGroupCommitCheckpointer) =>
  ((cp.json() as { allocations: { containerID: string }[] } | undefined)?.allocations ?? []).map(
    (a) => a.containerID,
  );

describe('ipam backend with a group-commit checkpoint', () => {
  it('replies to AddNetwork only once the assignment is durable', async () => {
    const { cp, backend } = setup();
    cp.hold();
    let replied = false;
    const reply = backend.addNetwork(addRequest(1)).then((r) => {
      replied = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(replied).toBe(false);
    expect(stored(cp)).toEqual([]);
    cp.release();
    expect((await reply).Success).toBe(true);
    expect(stored(cp)).toEqual(['c-1']);
  });

  it('wakes the pool loop after every ADD that took an address and every DEL, not after a failed ADD', async () => {
    const { backend, wakes } = setup(1);
    expect((await backend.addNetwork(addRequest(1))).Success).toBe(true);
    expect(wakes).toEqual(['success']);
    // Pool empty: the ADD fails and wakes the loop to grow the pool.
    expect((await backend.addNetwork(addRequest(2))).FailureCode).toBe('PoolEmpty');
    expect(wakes).toHaveLength(2);
    await backend.delNetwork(delRequest(1));
    expect(wakes).toHaveLength(3);

    const failing = setup();
    failing.cp.failWrites(1);
    expect((await failing.backend.addNetwork(addRequest(3))).Success).toBe(false);
    expect(failing.wakes).toEqual([]);
  });

  it('shares writes between concurrent ADDs, each with its own address', async () => {
    const { cp, backend } = setup();
    const replies = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => backend.addNetwork(addRequest(n))));
    expect(replies.every((r) => r.Success)).toBe(true);
    const addresses = replies.map((r) => r.IPAllocationMetadata![0]!.IPv4Addr);
    expect(new Set(addresses).size).toBe(6);
    expect(cp.stats().writes).toBeLessThan(6);
    expect(stored(cp).sort()).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
  });

  it('a failed checkpoint write fails the ADD, frees the address and removes the plumbing', async () => {
    const { cp, datastore, plumber, backend, outcomes } = setup();
    cp.failWrites(1);
    const reply = await backend.addNetwork(addRequest(1));
    expect(reply).toMatchObject({ Success: false, FailureCode: 'Internal' });
    expect(reply.FailureMessage).toContain('checkpoint');
    expect(datastore.assignments()).toEqual([]);
    expect(plumber.plumbed.size).toBe(0);
    expect(plumber.tornDown).toEqual(['10.0.1.10']);
    expect(outcomes).toEqual(['Internal']);
    // The next ADD succeeds and the checkpoint never listed the failed one.
    expect((await backend.addNetwork(addRequest(2))).Success).toBe(true);
    expect(stored(cp)).toEqual(['c-2']);
  });

  it('a failed checkpoint write fails the DEL and leaves the pod, plumbing included, as it was', async () => {
    const { cp, datastore, plumber, backend } = setup();
    const added = await backend.addNetwork(addRequest(1));
    const address = added.IPAllocationMetadata![0]!.IPv4Addr;
    cp.failWrites(1);
    await expect(backend.delNetwork(delRequest(1))).rejects.toBeInstanceOf(RpcStatusError);
    expect(datastore.findByAddress(address)?.key.containerID).toBe('c-1');
    expect(plumber.plumbed.has(address)).toBe(true);
    expect(plumber.tornDown).toEqual([]);
    // The runtime retries the DEL.
    expect((await backend.delNetwork(delRequest(1))).Success).toBe(true);
    expect(plumber.plumbed.size).toBe(0);
    expect(stored(cp)).toEqual([]);
  });
});

describe('ipam backend refuses a bad AddNetwork before taking an address', () => {
  const cases: [string, Partial<AddNetworkRequest>, RegExp][] = [
    ["the node's own namespace (/proc/self/ns/net)", { Netns: '/proc/self/ns/net' }, /node's own/],
    ["the node's own namespace by pid", { Netns: `/proc/${process.pid}/ns/net` }, /node's own/],
    ["the node's own namespace by thread", { Netns: `/proc/thread-self/ns/net` }, /node's own/],
    ['a relative namespace path', { Netns: 'proc/self/ns/net' }, /absolute/],
    ['a missing namespace path', { Netns: '/nonexistent/netns/x' }, /ENOENT/],
    ['an empty namespace path', { Netns: '' }, /required/],
    ['a plain file as namespace', { Netns: fileURLToPath(import.meta.url) }, /is not a namespace/],
    ['a directory as namespace', { Netns: tmpdir() }, /is not a namespace/],
    ['an invalid veth prefix', { VethPrefix: 'toolong' }, /vethPrefix/],
    ['a reserved veth prefix', { VethPrefix: 'eth' }, /reserved/],
    ['an invalid interface name', { IfName: 'eth0/../x' }, /interface name/],
    ['an out-of-range MTU', { Mtu: 100 }, /Mtu/],
  ];
  it.each(cases)(
    '%s: InvalidRequest, nothing assigned, nothing written, nothing plumbed',
    async (_what, change, message) => {
      const { cp, datastore, plumber, backend, wakes, failures } = setup(8, netnsGuard());
      const reply = await backend.addNetwork({ ...addRequest(1), Netns: '/proc/1/ns/mnt', ...change });
      expect(reply).toMatchObject({ Success: false, FailureCode: 'InvalidRequest' });
      expect(reply.FailureMessage).toMatch(message);
      // The daemon's recent-failures ring hears of it, with the cause the plugin gets.
      expect(failures).toEqual([
        { code: 'InvalidRequest', message: reply.FailureMessage, pod: expect.stringMatching(/\//) },
      ]);
      expect(datastore.assignments()).toEqual([]);
      expect(plumber.plumbed.size).toBe(0);
      expect(stored(cp)).toEqual([]);
      expect(cp.stats().writes).toBe(0);
      expect(wakes).toEqual([]);
    },
  );

  it("refuses the node's own namespace when the plugin plumbs too (PodPlumbing false)", async () => {
    const { datastore, backend } = setup(8, netnsGuard());
    const reply = await backend.addNetwork({
      ...addRequest(1),
      PodPlumbing: false,
      Netns: '/proc/self/ns/net',
    });
    expect(reply).toMatchObject({ Success: false, FailureCode: 'InvalidRequest' });
    expect(datastore.assignments()).toEqual([]);
  });

  it("accepts a namespace that is not the node's (another namespace file)", async () => {
    const { backend, plumber } = setup(8, netnsGuard());
    // Any other nsfs file has another inode; the guard compares identities, not types.
    const reply = await backend.addNetwork({ ...addRequest(1), Netns: '/proc/self/ns/mnt' });
    expect(reply.Success).toBe(true);
    expect(plumber.plumbed.size).toBe(1);
  });
});
