import { describe, expect, it } from 'vitest';
import type { SecurityGroupRule } from '../src/model.js';
import { parseScenario } from '../src/scenario.js';
import { isVpcError, runIdOfNetns, runNames, VpcError } from '../src/vpc/index.js';
import { eui64LinkLocal, nft6EniRemove, nft6EniUpsert, ownedIpv6Destinations } from '../src/vpc/ipv6-plan.js';
import { newRunId } from '../src/vpc/names.js';
import {
  nextEthName,
  nftBase,
  nftBranchRemove,
  nftBranchUpsert,
  nftEniRemove,
  nftEniUpsert,
  nftOwnership,
  ownedDestinations,
  subnetAddressing,
} from '../src/vpc/plan.js';
import { nftSecurityGroups, ruleMatch } from '../src/vpc/security-plan.js';

describe('virtual VPC plans (pure)', () => {
  it("routes IPv6 to the ENI's modified EUI-64 link-local address, as Linux makes it from the MAC", () => {
    expect(eui64LinkLocal('02:00:00:00:00:01')).toBe('fe80::ff:fe00:1');
    expect(eui64LinkLocal('0a:1b:2c:3d:4e:5f')).toBe('fe80::81b:2cff:fe3d:4e5f');
    expect(() => eui64LinkLocal('0a:1b:2c')).toThrow();
    expect(ownedIpv6Destinations({ addresses: ['2001:db8::a'], prefixes: ['2001:db8:0:0:1::/80'] })).toEqual([
      '2001:db8::a/128',
      '2001:db8:0:0:1::/80',
    ]);
  });

  it('checks IPv6 sources per ENI link (link-local allowed), and drops nothing with the check off', () => {
    const on = nft6EniUpsert('e1', ['2001:db8::a/128'], true, true);
    expect(on).toContain('add rule ip6 vckvpc6 eni_e1 ip6 saddr @src_e1 return');
    expect(on).toContain('add rule ip6 vckvpc6 eni_e1 ip6 saddr fe80::/10 return');
    expect(on).toContain('add rule ip6 vckvpc6 eni_e1 counter name sdc_e1 drop');
    expect(on.at(-1)).toBe('add element ip6 vckvpc6 eni_dispatch { "e1" : jump eni_e1 }');
    const off = nft6EniUpsert('e1', [], false, false);
    expect(off).toEqual(['flush set ip6 vckvpc6 src_e1', 'flush chain ip6 vckvpc6 eni_e1']);
    expect(nft6EniRemove('e1')[0]).toBe('delete element ip6 vckvpc6 eni_dispatch { "e1" }');
  });

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

  it('creates the per-ENI check once, then only replaces its contents; disabling the check drops the source rules', () => {
    const first = nftEniUpsert('e3', ['10.0.0.5/32', '10.0.0.32/28'], true, true, 3);
    expect(first).toContain('add counter ip vckvpc sdc_e3');
    expect(first).toContain('add element ip vckvpc src_e3 { 10.0.0.5, 10.0.0.32/28 }');
    expect(first.at(-1)).toBe('add element ip vckvpc eni_dispatch { "e3" : jump eni_e3 }');
    expect(first).toContain('add rule ip vckvpc eni_e3 meta mark set 3');
    expect(first).toContain('add rule ip vckvpc eni_e3 ether saddr vmap @brm_e3');
    const again = nftEniUpsert('e3', ['10.0.0.5/32'], false, false, 3);
    expect(again.some((c) => c.startsWith('add counter') || c.includes('eni_dispatch'))).toBe(false);
    expect(again.filter((c) => c.startsWith('add rule'))).toEqual([
      'add rule ip vckvpc eni_e3 ether saddr vmap @brm_e3',
      'add rule ip vckvpc eni_e3 meta mark set 3',
    ]);
    expect(nftEniRemove('e3')).toEqual([
      'delete element ip vckvpc eni_dispatch { "e3" }',
      'flush chain ip vckvpc eni_e3',
      'delete map ip vckvpc brm_e3',
      'delete chain ip vckvpc eni_e3',
      'delete set ip vckvpc src_e3',
    ]);
  });

  it('keys a branch check by its MAC on the trunk link', () => {
    const b = nftBranchUpsert('e3', 'b7', '02:00:00:00:00:07', ['10.0.0.9/32'], true, true, 7);
    expect(b).toContain('add element ip vckvpc brm_e3 { 02:00:00:00:00:07 : goto eni_b7 }');
    expect(b).toContain('add rule ip vckvpc eni_b7 ip saddr @src_b7 return');
    expect(nftBranchRemove('e3', 'b7', '02:00:00:00:00:07')[0]).toBe(
      'delete element ip vckvpc brm_e3 { 02:00:00:00:00:07 }',
    );
  });

  it('renders security-group rules as nft matches and one check per ENI and direction', () => {
    const rule = (r: Partial<SecurityGroupRule>): SecurityGroupRule => ({
      id: 'sgr-1',
      groupId: 'sg-0a',
      isEgress: false,
      ipProtocol: '-1',
      fromPort: -1,
      toPort: -1,
      cidrIpv4: undefined,
      referencedGroupId: undefined,
      description: '',
      ...r,
    });
    expect(
      ruleMatch(rule({ ipProtocol: 'tcp', fromPort: 5432, toPort: 5432, referencedGroupId: 'sg-0b' })),
    ).toBe('ip saddr @gm_0b tcp dport 5432');
    expect(ruleMatch(rule({ ipProtocol: 'udp', fromPort: 0, toPort: 65535, cidrIpv4: '10.0.0.0/16' }))).toBe(
      'ip saddr 10.0.0.0/16 meta l4proto udp',
    );
    expect(
      ruleMatch(rule({ isEgress: true, ipProtocol: 'icmp', fromPort: 8, toPort: -1, cidrIpv4: '0.0.0.0/0' })),
    ).toBe('icmp type 8');
    expect(ruleMatch(rule({ ipProtocol: '47', cidrIpv4: '10.0.0.5/32' }))).toBe(
      'ip saddr 10.0.0.5 meta l4proto 47',
    );
    const { commands, objects } = nftSecurityGroups(
      {
        enis: [{ eniId: 'eni-0a', mark: 1, owned: ['10.0.0.5/32'], groups: ['sg-0a'] }],
        rules: new Map([['sg-0a', [rule({ referencedGroupId: 'sg-0a' })]]]),
      },
      { chains: ['sgi_old'], sets: [] },
    );
    expect(objects).toEqual({ chains: ['sgi_0a', 'sgo_0a'], sets: ['gm_0a'] });
    expect(commands).toContain('add element ip vcksg gm_0a { 10.0.0.5 }');
    expect(commands).toContain('add rule ip vcksg sgi_0a ip saddr @gm_0a return');
    expect(commands).toContain('add rule ip vcksg sgo_0a counter name sgdo_0a drop');
    expect(commands).toContain('delete chain ip vcksg sgi_old');
    expect(commands.at(-3)).toBe('add rule ip vcksg sg_check ct state established,related accept');
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
