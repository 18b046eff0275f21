import { describe, expect, it } from 'vitest';
import { parseScenario } from '../src/scenario.js';
import { isVpcError, runIdOfNetns, runNames, VpcError } from '../src/vpc/index.js';
import { newRunId } from '../src/vpc/names.js';
import {
  nextEthName,
  nftBase,
  nftEniRemove,
  nftEniUpsert,
  nftOwnership,
  ownedDestinations,
  subnetAddressing,
} from '../src/vpc/plan.js';

describe('virtual VPC plans (pure)', () => {
  it('puts the gateway at base + 1 with the subnet mask, and rejects bad CIDRs with a typed error', () => {
    expect(subnetAddressing('10.0.0.0/24')).toEqual({
      cidr: '10.0.0.0/24',
      prefixLength: 24,
      gateway: '10.0.0.1',
    });
    expect(subnetAddressing('100.64.16.0/20').gateway).toBe('100.64.16.1');
    for (const bad of ['10.0.0.0/30', 'nope', '10.0.0.0/33']) {
      let err: unknown;
      try {
        subnetAddressing(bad);
      } catch (e) {
        err = e;
      }
      expect(isVpcError(err) && err.code).toBe('VPC_INVALID_OPTIONS');
    }
  });

  it('lists owned destinations: primary and secondaries as /32, prefixes as given', () => {
    expect(
      ownedDestinations({ primary: '10.0.0.5', secondaries: ['10.0.0.6'], prefixes: ['10.0.0.32/28'] }),
    ).toEqual(['10.0.0.5/32', '10.0.0.6/32', '10.0.0.32/28']);
  });

  it('renders the nft base table with every drop reason counted', () => {
    const base = nftBase(['10.0.0.0/16', '100.64.0.0/16']).join('\n');
    expect(base).toContain('add counter ip vckvpc unowned_dst');
    expect(base).toContain('add counter ip vckvpc egress_not_public');
    expect(base).toContain('add counter ip vckvpc ingress_not_public');
    expect(base).toContain('add element ip vckvpc vpc_cidrs { 10.0.0.0/16, 100.64.0.0/16 }');
    expect(base).toContain('iifname vmap @eni_dispatch');
  });

  it('creates the per-ENI check once, then only replaces its contents; disabling the check drops the rules', () => {
    const first = nftEniUpsert('e3', ['10.0.0.5/32', '10.0.0.32/28'], true, true);
    expect(first).toContain('add counter ip vckvpc sdc_e3');
    expect(first).toContain('add element ip vckvpc src_e3 { 10.0.0.5, 10.0.0.32/28 }');
    expect(first.at(-1)).toBe('add element ip vckvpc eni_dispatch { "e3" : jump eni_e3 }');
    const again = nftEniUpsert('e3', ['10.0.0.5/32'], false, false);
    expect(again.some((c) => c.startsWith('add counter') || c.includes('eni_dispatch'))).toBe(false);
    expect(again.some((c) => c.startsWith('add rule'))).toBe(false);
    expect(nftEniRemove('e3')).toEqual([
      'delete element ip vckvpc eni_dispatch { "e3" }',
      'flush chain ip vckvpc eni_e3',
      'delete chain ip vckvpc eni_e3',
      'delete set ip vckvpc src_e3',
    ]);
  });

  it('never emits an empty element list', () => {
    expect(nftOwnership([], [])).toEqual(['flush set ip vckvpc owned', 'flush set ip vckvpc public_addrs']);
  });

  it('names links and namespaces per run, and recognises only its own namespaces', () => {
    expect(nextEthName(new Set(['lo', 'eth0', 'eth2']))).toBe('eth1');
    const n = runNames('0a1b2c3d');
    expect([n.router, n.internet, n.instance('i-0a000000000000001')]).toEqual([
      'vckvpc-0a1b2c3d-rtr',
      'vckvpc-0a1b2c3d-inet',
      'vckvpc-0a1b2c3d-i-0a000000000000001',
    ]);
    expect(runIdOfNetns(n.router)).toBe('0a1b2c3d');
    expect(runIdOfNetns('vckvpc-xyz-rtr')).toBeUndefined();
    expect(runIdOfNetns('other-0a1b2c3d-rtr')).toBeUndefined();
    let i = 0;
    expect(newRunId(() => (i++ % 16) / 16)).toBe('01234567');
  });

  it('keeps a stable error shape', () => {
    const e = new VpcError('VPC_DATAPLANE', 'router.plug', 'boom');
    expect(isVpcError(e)).toBe(true);
    expect({ code: e.code, op: e.op }).toEqual({ code: 'VPC_DATAPLANE', op: 'router.plug' });
    expect(isVpcError({ kind: 'VpcError', code: 'NOPE' })).toBe(false);
    expect(
      parseScenario({ vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] }], subnets: [] })
        .region,
    ).toBe('us-west-2');
  });
});
