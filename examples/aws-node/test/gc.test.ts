import { Datastore, nullCheckpointer } from '@vpc-cni-kit/datastore';
import { describe, expect, it } from 'vitest';
import { collectStaleAttachments, gcInputOf, podReadiness } from '../src/daemon/gc.js';
import { silentLogger } from '../src/daemon/logger.js';

function world() {
  let now = 1_000;
  const ds = new Datastore({ clock: { now: () => now }, checkpointer: nullCheckpointer });
  ds.addEni({ id: 'eni-p', deviceNumber: 0, routeTableId: 254, subnetId: 'subnet-1', isPrimary: true });
  for (let i = 11; i <= 15; i++) ds.addCidr('eni-p', `10.0.0.${i}/32`);
  const torn: string[] = [];
  const links = new Set<string>();
  const assign = (id: string, at: number) => {
    now = at;
    return ds.assign(
      { networkName: 'aws-cni', containerID: id, ifName: 'eth0' },
      { namespace: 'default', name: id },
    ).address;
  };
  const deps = {
    datastore: ds,
    plumber: {
      setup: async () => ({ hostVeth: '', hostMac: '' }),
      teardown: async (p: { podIp: string }) => void torn.push(p.podIp),
      hostVethName: (_prefix: string, _ns: string, name: string) => `veth-${name}`,
    },
    vethPrefix: 'eni',
    hostLinks: async () => links,
    log: silentLogger,
  };
  return { ds, torn, links, assign, deps };
}

describe('GC of stale attachments', () => {
  it('releases exactly the stale ones: never a listed one, one in use, or one younger than the request', async () => {
    const w = world();
    const live = w.assign('live', 1_000);
    const stale = w.assign('stale', 1_100);
    const inUse = w.assign('in-use', 1_200);
    const young = w.assign('young', 3_000);
    w.links.add('veth-in-use');
    const out = await collectStaleAttachments(w.deps, {
      networkName: 'aws-cni',
      valid: [{ containerID: 'live', ifName: 'eth0' }],
      requestedAt: 2_000,
    });
    expect(out.released).toEqual([stale]);
    expect(out.kept).toEqual([
      { address: inUse, containerID: 'in-use', why: 'in-use' },
      { address: young, containerID: 'young', why: 'younger-than-request' },
    ]);
    expect(w.torn).toEqual([stale]);
    expect(
      w.ds
        .assignments()
        .map((a) => a.address)
        .sort(),
    ).toEqual([live, inUse, young].sort());
    // Another network's attachments are not looked at.
    const other = await collectStaleAttachments(w.deps, {
      networkName: 'other',
      valid: [],
      requestedAt: 9_000,
    });
    expect(other.released).toEqual([]);
  });

  it('a malformed request is refused before anything is looked at', () => {
    const ok = { NetworkName: 'aws-cni', ValidAttachments: [], RequestedAtMs: '5', ClientVersion: '' };
    expect(gcInputOf(ok)).toEqual({ networkName: 'aws-cni', valid: [], requestedAt: 5 });
    expect(() => gcInputOf({ ...ok, NetworkName: '' })).toThrow(/NetworkName/);
    expect(() => gcInputOf({ ...ok, RequestedAtMs: 'soon' })).toThrow(/RequestedAtMs/);
    expect(() => gcInputOf({ ...ok, ValidAttachments: [{ ContainerID: '', IfName: 'eth0' }] })).toThrow(
      /ContainerID/,
    );
  });

  it('STATUS: not ready only when nothing is free and the pool cannot grow', () => {
    const base = { free: 0, canProvision: true, subnetExhausted: false, eniLimitReached: false };
    expect(podReadiness({ ...base, free: 1, canProvision: false }).Ready).toBe(true);
    expect(podReadiness(base).Ready).toBe(true);
    expect(podReadiness({ ...base, canProvision: false }).Ready).toBe(false);
    expect(podReadiness({ ...base, subnetExhausted: true }).Ready).toBe(false);
    expect(podReadiness({ ...base, eniLimitReached: true }).Ready).toBe(false);
  });
});
