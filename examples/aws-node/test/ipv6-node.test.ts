import { Datastore, nullCheckpointer } from '@vpc-cni-kit/datastore';
import type { ImdsEni } from '@vpc-cni-kit/eni-manager';
import { describe, expect, it } from 'vitest';
import { adoptPrimaryIpv6, primaryIpv6Prefix, requireIpv6Subnet } from '../src/daemon/ipv6-node.js';
import { silentLogger } from '../src/daemon/logger.js';
import { isStartError } from '../src/daemon/start-error.js';

const primary: ImdsEni = {
  mac: '02:00:00:00:00:01',
  eniId: 'eni-0a000000000000001',
  deviceNumber: 0,
  networkCard: 0,
  subnetId: 'subnet-0a000000000000001',
  subnetIpv4Cidr: '10.0.0.0/24',
  vpcId: 'vpc-0a000000000000001',
  vpcIpv4Cidrs: ['10.0.0.0/16'],
  securityGroupIds: [],
  ipv4Addresses: ['10.0.0.10'],
  ipv4Prefixes: [],
  ipv6Addresses: ['2001:db8:c00:1::a'],
  ipv6Prefixes: [],
  subnetIpv6Cidrs: ['2001:db8:c00:1::/64'],
  vpcIpv6Cidrs: ['2001:db8:c00::/56'],
};
const P1 = '2001:db8:c00:1:1::/80';
const P2 = '2001:db8:c00:1:2::/80';

describe('primaryIpv6Prefix', () => {
  it('assigns one /80 when EC2 lists none, and only then', async () => {
    const calls: string[] = [];
    const got = await primaryIpv6Prefix({
      primary,
      describePrefixes: async () => [],
      assignPrefix: async () => {
        calls.push('assign');
        return [P1];
      },
      log: silentLogger,
    });
    expect(got).toBe(P1);
    expect(calls).toEqual(['assign']);
    const again = await primaryIpv6Prefix({
      primary,
      describePrefixes: async () => [P1, P2],
      assignPrefix: async () => {
        calls.push('assign');
        return [P2];
      },
      log: silentLogger,
    });
    expect(again).toBe(P1);
    expect(calls).toEqual(['assign']);
  });

  it("uses IMDS's list in IMDS-only mode", async () => {
    expect(await primaryIpv6Prefix({ primary: { ...primary, ipv6Prefixes: [P2] }, log: silentLogger })).toBe(
      P2,
    );
  });

  it('refuses to start without an IPv6 subnet, or without a prefix it may not assign', async () => {
    let noSubnet: unknown;
    try {
      requireIpv6Subnet({ ...primary, subnetIpv6Cidrs: [] });
    } catch (e) {
      noSubnet = e;
    }
    expect(isStartError(noSubnet, 'Ipv6SubnetMissing')).toBe(true);
    expect(() => requireIpv6Subnet(primary)).not.toThrow();
    const noPrefix = await primaryIpv6Prefix({ primary, log: silentLogger }).catch((e: unknown) => e);
    expect(isStartError(noPrefix, 'Ipv6PrefixMissing')).toBe(true);
  });
});

describe('adoptPrimaryIpv6', () => {
  it('records the primary ENI with its /80 in table main once; pods get /128s from it', () => {
    const ds = new Datastore({
      clock: { now: () => 0 },
      checkpointer: nullCheckpointer,
      prefixDelegation: true,
      family: 6,
    });
    adoptPrimaryIpv6(ds, primary, P1);
    adoptPrimaryIpv6(ds, primary, P1);
    const eni = ds.stats().enis[0]!;
    expect(eni).toMatchObject({ id: primary.eniId, isPrimary: true, routeTableId: 254 });
    expect(eni.cidrs.map((c) => c.cidr)).toEqual([P1]);
    const a = ds.assign({ networkName: 'aws-cni', containerID: 'c1', ifName: 'eth0' });
    // The prefix base first, as the reference hands addresses out of a /80 (getUnusedIP).
    expect(a.address).toBe('2001:db8:c00:1:1::');
    expect(a.routeTableId).toBe(254);
  });
});
