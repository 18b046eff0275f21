import {
  Datastore,
  isDatastoreError,
  LEGACY_IF_NAME,
  LEGACY_NETWORK_NAME,
  nullCheckpointer,
} from '@vpc-cni-kit/datastore';
import { describe, expect, it } from 'vitest';
import { eni, pod, setup } from './helpers.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isDatastoreError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('ENIs and CIDRs', () => {
  it('refuses duplicates, unknown ENIs, bad CIDRs and overlaps with typed errors', () => {
    const { ds } = setup();
    eni(ds, 0);
    expect(code(() => eni(ds, 0))).toBe('DuplicateEni');
    expect(code(() => ds.addCidr('eni-9', '10.0.0.1/32'))).toBe('UnknownEni');
    expect(code(() => ds.addCidr('eni-0', '10.0.0.1/24'))).toBe('InvalidCidr');
    expect(code(() => ds.addCidr('eni-0', '10.0.0.1/28'))).toBe('InvalidCidr');
    expect(code(() => ds.addCidr('eni-0', 'nonsense'))).toBe('InvalidCidr');
    expect(code(() => ds.addEni({ id: '', deviceNumber: 0, routeTableId: 1, subnetId: 's' }))).toBe(
      'InvalidArgument',
    );
    ds.addCidr('eni-0', '10.0.0.16/28');
    expect(code(() => ds.addCidr('eni-0', '10.0.0.16/28'))).toBe('DuplicateCidr');
    expect(code(() => ds.addCidr('eni-0', '10.0.0.20/32'))).toBe('DuplicateCidr');
    ds.addCidr('eni-0', '10.0.0.40/32');
    expect(code(() => ds.addCidr('eni-0', '10.0.0.32/28'))).toBe('DuplicateCidr');
    expect(code(() => ds.removeCidr('eni-0', '10.0.0.41/32'))).toBe('UnknownCidr');
  });

  it('refuses to remove an ENI or CIDR in use unless forced, and reports what a forced removal dropped', () => {
    const { ds, cp } = setup();
    eni(ds, 0);
    eni(ds, 1);
    ds.addCidr('eni-1', '10.0.1.5/32');
    const r = ds.assign(pod(1), { namespace: 'ns', name: 'p1' });
    expect(r).toEqual({
      address: '10.0.1.5',
      eniId: 'eni-1',
      deviceNumber: 1,
      routeTableId: 2,
      cidr: '10.0.1.5/32',
    });
    expect(code(() => ds.removeEni('eni-1'))).toBe('EniInUse');
    expect(code(() => ds.removeCidr('eni-1', '10.0.1.5/32'))).toBe('CidrInUse');
    expect(ds.findByPod(pod(1))?.address).toBe('10.0.1.5');
    const removed = ds.removeEni('eni-1', { force: true });
    expect(removed.dropped).toEqual([
      { key: pod(1), metadata: { namespace: 'ns', name: 'p1' }, address: '10.0.1.5', cidr: '10.0.1.5/32' },
    ]);
    expect(removed.checkpointError).toBeUndefined();
    expect(ds.findByPod(pod(1))).toBeUndefined();
    expect(ds.eniIds()).toEqual(['eni-0']);
    expect((cp.json() as { allocations: unknown[] }).allocations).toEqual([]);
  });

  it('forced CIDR removal drops only that CIDR', () => {
    const { ds } = setup({ prefixDelegation: true });
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.2.0/28');
    ds.addCidr('eni-0', '10.0.2.16/28');
    for (let i = 0; i < 17; i++) ds.assign(pod(i));
    const before = ds.stats();
    expect(before.assignedIPs).toBe(17);
    const { dropped } = ds.removeCidr('eni-0', '10.0.2.16/28', { force: true });
    expect(dropped.map((d) => d.address)).toEqual(['10.0.2.16']);
    expect(ds.stats().assignedIPs).toBe(16);
    expect(ds.stats().totalIPs).toBe(16);
  });
});

describe('assign and unassign', () => {
  it('is idempotent per pod key and validates the key', () => {
    const { ds, cp } = setup();
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    ds.addCidr('eni-0', '10.0.0.6/32');
    const a = ds.assign(pod(1));
    const writes = cp.writes;
    expect(ds.assign(pod(1))).toEqual(a);
    expect(cp.writes).toBe(writes);
    expect(code(() => ds.assign({ networkName: '', containerID: 'x', ifName: 'eth0' }))).toBe(
      'InvalidArgument',
    );
    expect(code(() => ds.assign(pod(2), { interfacesCount: -1 }))).toBe('InvalidArgument');
    expect(ds.assign(pod(2)).address).toBe('10.0.0.6');
    expect(code(() => ds.assign(pod(3)))).toBe('NoAvailableAddress');
  });

  it('skips addresses in cooldown until the period has passed', () => {
    const { ds, clock } = setup({ cooldownMs: 30_000 });
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    ds.addCidr('eni-0', '10.0.0.6/32');
    expect(ds.assign(pod(1)).address).toBe('10.0.0.5');
    ds.unassign(pod(1));
    expect(ds.stats().cooldownIPs).toBe(1);
    expect(ds.assign(pod(2)).address).toBe('10.0.0.6');
    expect(code(() => ds.assign(pod(3)))).toBe('NoAvailableAddress');
    clock.advance(30_000);
    expect(code(() => ds.assign(pod(3)))).toBe('NoAvailableAddress');
    clock.advance(1);
    expect(ds.stats().cooldownIPs).toBe(0);
    expect(ds.assign(pod(3)).address).toBe('10.0.0.5');
  });

  it('reuses the lowest address of a prefix that is neither assigned nor cooling', () => {
    const { ds, clock } = setup({ prefixDelegation: true, cooldownMs: 1000 });
    eni(ds, 0);
    ds.addCidr('eni-0', '10.1.0.0/28');
    for (let i = 0; i < 4; i++) ds.assign(pod(i));
    ds.unassign(pod(1));
    expect(ds.assign(pod(10)).address).toBe('10.1.0.4');
    clock.advance(1001);
    expect(ds.assign(pod(11)).address).toBe('10.1.0.1');
  });

  it('draws from prefixes with prefix delegation and from /32s otherwise', () => {
    for (const pd of [false, true]) {
      const { ds } = setup({ prefixDelegation: pd });
      eni(ds, 0);
      ds.addCidr('eni-0', '10.0.0.5/32');
      ds.addCidr('eni-0', '10.0.0.32/28');
      expect(ds.assign(pod(1)).cidr).toBe(pd ? '10.0.0.32/28' : '10.0.0.5/32');
      expect(ds.stats().totalIPs).toBe(pd ? 16 : 1);
      expect(ds.stats().totalPrefixes).toBe(1);
    }
  });

  it('assigns IPv6 addresses from /80 prefixes', () => {
    const { ds } = setup({ prefixDelegation: true, family: 6 });
    eni(ds, 0);
    ds.addCidr('eni-0', '2001:db8:0:1:2::/80');
    ds.addCidr('eni-0', '10.0.0.0/28');
    expect(ds.assign(pod(1)).address).toBe('2001:db8:0:1:2::');
    expect(ds.assign(pod(2)).address).toBe('2001:db8:0:1:2::1');
    expect(ds.findByAddress('2001:0db8:0000:0001:0002:0000:0000:0001')?.key).toEqual(pod(2));
    expect(ds.stats().totalIPs).toBe(2 ** 48);
  });

  it('never assigns from excluded ENIs', () => {
    const { ds } = setup();
    eni(ds, 0, { excluded: true });
    ds.addCidr('eni-0', '10.0.0.5/32');
    expect(code(() => ds.assign(pod(1)))).toBe('NoAvailableAddress');
    expect(ds.stats().totalIPs).toBe(0);
  });

  it('unassigns by key, falls back to the legacy key, and reports interfacesCount 0 as 1', () => {
    const { ds } = setup();
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    ds.addCidr('eni-0', '10.0.0.6/32');
    ds.assign({ networkName: LEGACY_NETWORK_NAME, containerID: 'c-7', ifName: LEGACY_IF_NAME });
    const r = ds.unassign(pod(7));
    expect(r.address).toBe('10.0.0.5');
    expect(r.key.networkName).toBe(LEGACY_NETWORK_NAME);
    expect(r.interfacesCount).toBe(1);
    ds.assign(pod(8), { interfacesCount: 2 });
    expect(ds.unassign(pod(8)).interfacesCount).toBe(2);
    expect(code(() => ds.unassign(pod(8)))).toBe('UnknownPod');
  });

  it('looks assignments up by pod and by address', () => {
    const { ds, clock } = setup();
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    ds.assign(pod(1), { namespace: 'default', name: 'web' });
    expect(ds.findByAddress('10.0.0.5')).toEqual({
      key: pod(1),
      metadata: { namespace: 'default', name: 'web' },
      address: '10.0.0.5',
      family: 4,
      eniId: 'eni-0',
      cidr: '10.0.0.5/32',
      assignedAt: clock.now(),
    });
    expect(ds.findByPod(pod(1))?.address).toBe('10.0.0.5');
    expect(ds.findByAddress('10.0.0.6')).toBeUndefined();
    expect(ds.findByAddress('garbage')).toBeUndefined();
    expect(ds.assignments()).toHaveLength(1);
  });

  it('undoes an assign when the checkpoint write fails, and an unassign likewise', () => {
    const { ds, cp } = setup();
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    cp.failWrites(1);
    expect(code(() => ds.assign(pod(1)))).toBe('CheckpointWriteFailed');
    expect(ds.findByPod(pod(1))).toBeUndefined();
    expect(ds.stats().assignedIPs).toBe(0);
    expect(ds.assign(pod(2)).address).toBe('10.0.0.5');
    cp.failWrites(1);
    expect(code(() => ds.unassign(pod(2)))).toBe('CheckpointWriteFailed');
    expect(ds.findByPod(pod(2))?.address).toBe('10.0.0.5');
    expect(ds.stats().cooldownIPs).toBe(0);
    ds.unassign(pod(2));
    expect(ds.stats().cooldownIPs).toBe(1);
  });
});

describe('stats and releasable', () => {
  it('counts per ENI and CIDR and lists what a shrink may release', () => {
    const { ds, clock } = setup({ cooldownMs: 1000 });
    eni(ds, 0);
    eni(ds, 1);
    eni(ds, 2, { excluded: true });
    ds.addCidr('eni-0', '10.0.0.5/32');
    ds.addCidr('eni-0', '10.0.0.6/32');
    ds.addCidr('eni-1', '10.0.1.5/32');
    ds.addCidr('eni-1', '10.0.1.6/32');
    ds.addCidr('eni-2', '10.0.2.5/32');
    ds.assign(pod(1));
    ds.assign(pod(2));
    ds.unassign(pod(2));
    const s = ds.stats();
    expect(s).toMatchObject({
      totalIPs: 4,
      assignedIPs: 1,
      cooldownIPs: 1,
      availableIPs: 3,
      totalPrefixes: 0,
    });
    expect(s.enis.map((e) => [e.id, e.totalIPs, e.assignedIPs, e.cooldownIPs])).toEqual([
      ['eni-0', 2, 1, 1],
      ['eni-1', 2, 0, 0],
      ['eni-2', 1, 0, 0],
    ]);
    expect(s.enis[0]!.cidrs).toEqual([
      { cidr: '10.0.0.5/32', isPrefix: false, family: 4, size: 1, assigned: 1, cooldown: 0 },
      { cidr: '10.0.0.6/32', isPrefix: false, family: 4, size: 1, assigned: 0, cooldown: 1 },
    ]);
    expect(ds.releasable()).toEqual({
      cidrs: [
        { eniId: 'eni-1', cidr: '10.0.1.6/32' },
        { eniId: 'eni-1', cidr: '10.0.1.5/32' },
      ],
      enis: ['eni-1'],
    });
    clock.advance(1001);
    expect(ds.releasable().cidrs).toContainEqual({ eniId: 'eni-0', cidr: '10.0.0.6/32' });
  });
});

describe('churn of CIDRs', () => {
  it('keeps working when many /32s are removed and re-added (stale ready entries are dropped)', () => {
    const { ds } = setup();
    eni(ds, 0);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 100; i++) ds.addCidr('eni-0', `10.0.${round}.${i}/32`);
      for (let i = 0; i < 99; i++) ds.removeCidr('eni-0', `10.0.${round}.${i}/32`);
    }
    expect(ds.assign(pod(1)).address).toBe('10.0.0.99');
    expect(ds.assign(pod(2)).address).toBe('10.0.1.99');
    expect(ds.assign(pod(3)).address).toBe('10.0.2.99');
    expect(code(() => ds.assign(pod(4)))).toBe('NoAvailableAddress');
  });

  it('restores IPv6 allocations into /80 prefixes', () => {
    const { ds, cp } = setup({ prefixDelegation: true, family: 6 });
    eni(ds, 0);
    ds.addCidr('eni-0', '2001:db8:1:2:3::/80');
    cp.text =
      '{"version":"vpc-cni-ipam/1","allocations":[{"networkName":"aws-cni","containerID":"x","ifName":"eth0","ipv6":"2001:DB8:1:2:3:0:0:5","allocationTimestamp":1,"metadata":{}}]}';
    expect(ds.restore().restored).toBe(1);
    expect(ds.findByAddress('2001:db8:1:2:3::5')?.key.containerID).toBe('x');
    const got = new Set<string>();
    for (let i = 0; i < 8; i++) got.add(ds.assign(pod(i)).address);
    expect(got.has('2001:db8:1:2:3::5')).toBe(false);
    expect(got.size).toBe(8);
  });

  it('refuses bad options and metadata with InvalidArgument', () => {
    const clockless = () => setup({ family: 6 });
    expect(code(clockless)).toBe('InvalidArgument');
    expect(code(() => setup({ cooldownMs: -1 }))).toBe('InvalidArgument');
    const { ds } = setup();
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.0.5/32');
    expect(code(() => ds.assign(pod(1), { name: 5 as unknown as string }))).toBe('InvalidArgument');
    expect(code(() => ds.removeEni('eni-9'))).toBe('UnknownEni');
    expect(ds.assignments()).toEqual([]);
  });
});

describe('removed CIDRs', () => {
  it('never assigns from a removed prefix or /32', () => {
    for (const pd of [true, false]) {
      const { ds } = setup({ prefixDelegation: pd });
      eni(ds, 0);
      const a = pd ? '10.0.0.0/28' : '10.0.0.5/32';
      const b = pd ? '10.0.0.16/28' : '10.0.0.6/32';
      ds.addCidr('eni-0', a);
      ds.addCidr('eni-0', b);
      ds.removeCidr('eni-0', a);
      expect(ds.assign(pod(1)).cidr).toBe(b);
      ds.assign(pod(1));
      if (pd) {
        ds.removeCidr('eni-0', b, { force: true });
        expect(code(() => ds.assign(pod(2)))).toBe('NoAvailableAddress');
      }
    }
  });
});

describe('releasedAddresses', () => {
  it('lists addresses given back with their last assigned and released times, not reassigned ones', () => {
    let now = 1_000;
    const ds = new Datastore({ clock: { now: () => now }, checkpointer: nullCheckpointer, cooldownMs: 0 });
    ds.addEni({ id: 'eni-1', deviceNumber: 0, routeTableId: 254, subnetId: 'subnet-1', isPrimary: true });
    ds.addCidr('eni-1', '10.0.0.5/32');
    ds.addCidr('eni-1', '10.0.0.6/32');
    const key = (id: string) => ({ networkName: 'aws-cni', containerID: id, ifName: 'eth0' });
    expect(ds.releasedAddresses()).toEqual([]);
    const a = ds.assign(key('a')).address;
    now = 2_000;
    ds.unassign(key('a'));
    expect(ds.releasedAddresses()).toEqual([
      { address: a, eniId: 'eni-1', cidr: `${a}/32`, assignedAt: 1_000, unassignedAt: 2_000 },
    ]);
    now = 3_000;
    ds.assign(key('b'));
    ds.assign(key('c'));
    expect(ds.releasedAddresses()).toEqual([]);
  });
});
