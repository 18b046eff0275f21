import { Datastore, nullCheckpointer } from '@vpc-cni-kit/datastore';
import type { Ec2Eni, ImdsEni } from '@vpc-cni-kit/eni-manager';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/daemon/logger.js';
import { DaemonMetrics } from '../src/daemon/metrics.js';
import { RECONCILE_COOLDOWN_MS, reconcileWithImds } from '../src/daemon/reconcile.js';

const clock = { now: () => 1_000_000 };
function eni(id: string, device: number, addresses: string[]): ImdsEni {
  return {
    mac: `0a:00:00:00:00:0${device}`,
    eniId: id,
    deviceNumber: device,
    networkCard: 0,
    subnetId: 'subnet-1',
    subnetIpv4Cidr: '10.0.0.0/24',
    vpcId: 'vpc-1',
    vpcIpv4Cidrs: ['10.0.0.0/16'],
    securityGroupIds: [],
    ipv4Addresses: addresses,
    ipv4Prefixes: [],
    ipv6Addresses: [],
    ipv6Prefixes: [],
    subnetIpv6Cidrs: [],
    vpcIpv6Cidrs: [],
  };
}

function setup() {
  const ds = new Datastore({ clock, checkpointer: nullCheckpointer });
  ds.addEni({ id: 'eni-p', deviceNumber: 0, routeTableId: 254, subnetId: 'subnet-1', isPrimary: true });
  ds.addCidr('eni-p', '10.0.0.11/32');
  ds.addCidr('eni-p', '10.0.0.12/32');
  ds.addEni({ id: 'eni-s', deviceNumber: 1, routeTableId: 2, subnetId: 'subnet-1' });
  ds.addCidr('eni-s', '10.0.0.21/32');
  const adopted: string[] = [];
  const torn: string[] = [];
  const deps = (enis: ImdsEni[], recentlyReleased = new Map<string, number>()) => ({
    datastore: ds,
    metadata: { listEnis: async () => enis },
    log: silentLogger,
    now: clock.now,
    adoptEni: async (e: ImdsEni) => {
      adopted.push(e.eniId);
      ds.addEni({
        id: e.eniId,
        deviceNumber: e.deviceNumber,
        routeTableId: e.deviceNumber + 1,
        subnetId: e.subnetId,
      });
    },
    teardownEni: async (id: string) => {
      torn.push(id);
    },
    recentlyReleased,
  });
  return { ds, adopted, torn, deps };
}

describe('reconcileWithImds', () => {
  it('changes nothing when IMDS and the datastore agree', async () => {
    const { deps } = setup();
    const r = await reconcileWithImds(
      deps([
        eni('eni-p', 0, ['10.0.0.10', '10.0.0.11', '10.0.0.12']),
        eni('eni-s', 1, ['10.0.0.20', '10.0.0.21']),
      ]),
    );
    expect(r).toEqual({
      adoptedEnis: [],
      removedEnis: [],
      addedCidrs: [],
      removedCidrs: [],
      droppedPods: [],
      forceRemovedEnis: [],
    });
  });

  it('adds addresses IMDS has and the datastore lacks, and drops the ones EC2 took away (pods included)', async () => {
    const { ds, deps } = setup();
    const key = { networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' };
    expect(ds.assign(key).address).toBe('10.0.0.11');
    const r = await reconcileWithImds(
      deps([
        eni('eni-p', 0, ['10.0.0.10', '10.0.0.12', '10.0.0.13']),
        eni('eni-s', 1, ['10.0.0.20', '10.0.0.21']),
      ]),
    );
    expect(r.addedCidrs).toEqual(['eni-p 10.0.0.13/32']);
    expect(r.removedCidrs).toEqual(['eni-p 10.0.0.11/32']);
    expect(r.droppedPods.map((d) => d.address)).toEqual(['10.0.0.11']);
    expect(ds.findByPod(key)).toBeUndefined();
  });

  it('does not re-add a CIDR released within the cooldown (IMDS may still list it)', async () => {
    const { ds, deps } = setup();
    ds.removeCidr('eni-p', '10.0.0.12/32');
    const imds = [
      eni('eni-p', 0, ['10.0.0.10', '10.0.0.11', '10.0.0.12']),
      eni('eni-s', 1, ['10.0.0.20', '10.0.0.21']),
    ];
    const recent = new Map([['eni-p 10.0.0.12/32', clock.now() - 1000]]);
    expect((await reconcileWithImds(deps(imds, recent))).addedCidrs).toEqual([]);
    recent.set('eni-p 10.0.0.12/32', clock.now() - RECONCILE_COOLDOWN_MS - 1);
    expect((await reconcileWithImds(deps(imds, recent))).addedCidrs).toEqual(['eni-p 10.0.0.12/32']);
  });

  it('adopts new ENIs and removes ENIs gone from IMDS (never the primary)', async () => {
    const { adopted, torn, deps, ds } = setup();
    const r = await reconcileWithImds(
      deps([eni('eni-p', 0, ['10.0.0.10', '10.0.0.11', '10.0.0.12']), eni('eni-n', 2, ['10.0.0.30'])]),
    );
    expect(adopted).toEqual(['eni-n']);
    expect(r.removedEnis).toEqual(['eni-s']);
    expect(torn).toEqual(['eni-s']);
    expect(ds.eniIds().sort()).toEqual(['eni-n', 'eni-p']);
  });

  it('an ENI that leaves with pods on it is a force removal, counted in the reference series', async () => {
    const { ds, deps } = setup();
    // eni-p's two addresses, then eni-s's one.
    for (const c of ['c1', 'c2', 'c3']) ds.assign({ networkName: 'aws-cni', containerID: c, ifName: 'eth0' });
    const r = await reconcileWithImds(
      deps([eni('eni-p', 0, ['10.0.0.10', '10.0.0.11', '10.0.0.12']), eni('eni-n', 2, ['10.0.0.30'])]),
    );
    expect(r.forceRemovedEnis).toEqual(['eni-s']);
    expect(r.droppedPods.map((d) => d.address)).toEqual(['10.0.0.21']);
    const m = new DaemonMetrics();
    m.reconciled(r);
    const text = await m.registry.metrics();
    expect(text).toContain('awscni_reconcile_count{fn="eniReconcileAdd"} 1');
    expect(text).toContain('awscni_reconcile_count{fn="eniReconcileDel"} 1');
    expect(text).toMatch(/^awscni_force_removed_enis 1$/m);
    expect(text).toMatch(/^awscni_force_removed_ips 1$/m);
  });

  it('settles a difference with EC2: an address IMDS does not list yet (lag) stays, with its pod', async () => {
    const { ds, deps } = setup();
    const key = { networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' };
    expect(ds.assign(key).address).toBe('10.0.0.11');
    const asked: string[][] = [];
    const ec2Eni = (id: string, primary: string, secondary: string[]) =>
      ({ eniId: id, primaryIpv4: primary, secondaryIpv4: secondary, ipv4Prefixes: [] }) as unknown as Ec2Eni;
    const r = await reconcileWithImds({
      ...deps([
        // IMDS lags: 10.0.0.11 (assigned a moment ago) is missing, 10.0.0.13 (released) still shows.
        eni('eni-p', 0, ['10.0.0.10', '10.0.0.12', '10.0.0.13']),
        eni('eni-s', 1, ['10.0.0.20', '10.0.0.21']),
      ]),
      describeEnis: async (ids) => {
        asked.push([...ids]);
        return [ec2Eni('eni-p', '10.0.0.10', ['10.0.0.11', '10.0.0.12'])];
      },
    });
    expect(asked).toEqual([['eni-p']]);
    expect(r.removedCidrs).toEqual([]);
    expect(r.addedCidrs).toEqual([]);
    expect(ds.findByPod(key)?.address).toBe('10.0.0.11');
  });

  it('removes nothing when EC2 cannot be read to settle a difference', async () => {
    const { ds, deps } = setup();
    const key = { networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' };
    ds.assign(key);
    const r = await reconcileWithImds({
      ...deps([eni('eni-p', 0, ['10.0.0.10', '10.0.0.12']), eni('eni-s', 1, ['10.0.0.20', '10.0.0.21'])]),
      describeEnis: async () => {
        throw new Error('EC2 unreachable');
      },
    });
    expect(r.removedCidrs).toEqual([]);
    expect(ds.findByPod(key)?.address).toBe('10.0.0.11');
  });
});
