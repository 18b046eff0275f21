import { describe, expect, it } from 'vitest';
import {
  isSnatError,
  planSnat,
  type RandomizeSnat,
  renderIptables,
  renderNftTable,
  resolveSnatOptions,
  type SnatOptions,
} from '../src/index.js';

const base: SnatOptions = {
  nodeIp: '10.0.0.9',
  primaryInterface: 'eth0',
  vpcCidrs: ['10.0.0.0/16'],
};

describe('planSnat: the reference defaults', () => {
  it('renders the exact rule shapes of the reference (nftables connmark backend)', () => {
    const plan = planSnat(base);
    expect(renderIptables(plan)).toBe(
      [
        '*mangle',
        '-A PREROUTING -i eth0 -m comment --comment "AWS, primary ENI" -m addrtype --dst-type LOCAL --limit-iface-in -j CONNMARK --set-xmark 0x80/0x80',
        '-A PREROUTING -i eni+ -m comment --comment "AWS, primary ENI" -j CONNMARK --restore-mark --nfmask 0x80 --ctmask 0x80',
        '-A PREROUTING -i vlan+ -m comment --comment "AWS, primary ENI" -j CONNMARK --restore-mark --nfmask 0x80 --ctmask 0x80',
        'COMMIT',
        '*nat',
        ':AWS-SNAT-CHAIN-0 - [0:0]',
        '-A POSTROUTING -m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-0',
        '-A AWS-SNAT-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
        '-A AWS-SNAT-CHAIN-0 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source 10.0.0.9 --random-fully',
        'COMMIT',
        '',
      ].join('\n'),
    );
    expect(plan.nft).toBeDefined();
    expect(renderNftTable(plan.nft!)).toBe(
      [
        'table ip aws-cni {',
        '\tchain nat-prerouting {',
        '\t\ttype nat hook prerouting priority dstnat + 10; policy accept;',
        '\t\tfib daddr type local return',
        '\t\tiifname "eni*" counter jump snat-mark',
        '\t\tcounter meta mark set ct mark & 0x00000080',
        '\t}',
        '',
        '\tchain snat-mark {',
        '\t\tip daddr 10.0.0.0/16 return',
        '\t\tct mark set ct mark | 0x00000080',
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('uses AWS-CONNMARK-CHAIN-0 and the nat PREROUTING jump for the iptables backend', () => {
    const plan = planSnat({
      ...base,
      connmarkBackend: 'iptables',
      excludeSnatCidrs: ['192.168.7.1/24', '0.0.0.0/0'],
      connmark: 0x4000,
    });
    expect(plan.nft).toBeUndefined();
    const text = renderIptables(plan);
    expect(text).toContain(':AWS-CONNMARK-CHAIN-0 - [0:0]');
    expect(text.split('\n').filter((l) => l.startsWith('-A PREROUTING') || l.startsWith('-A AWS-'))).toEqual([
      '-A PREROUTING -i eth0 -m comment --comment "AWS, primary ENI" -m addrtype --dst-type LOCAL --limit-iface-in -j CONNMARK --set-xmark 0x4000/0x4000',
      '-A PREROUTING -i eni+ -m comment --comment "AWS, primary ENI" -j CONNMARK --restore-mark --nfmask 0x4000 --ctmask 0x4000',
      '-A PREROUTING -i vlan+ -m comment --comment "AWS, primary ENI" -j CONNMARK --restore-mark --nfmask 0x4000 --ctmask 0x4000',
      '-A PREROUTING -i eni+ -m comment --comment "AWS, outbound connections" -j AWS-CONNMARK-CHAIN-0',
      '-A PREROUTING -m comment --comment "AWS, CONNMARK" -j CONNMARK --restore-mark --nfmask 0x4000 --ctmask 0x4000',
      '-A AWS-SNAT-CHAIN-0 -m comment --comment "AWS SNAT CHAIN EXCLUSION" -j RETURN',
      '-A AWS-SNAT-CHAIN-0 -d 192.168.7.0/24 -m comment --comment "AWS SNAT CHAIN EXCLUSION" -j RETURN',
      '-A AWS-SNAT-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
      '-A AWS-SNAT-CHAIN-0 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source 10.0.0.9 --random-fully',
      '-A AWS-CONNMARK-CHAIN-0 -m comment --comment "AWS CONNMARK CHAIN" -j RETURN',
      '-A AWS-CONNMARK-CHAIN-0 -d 192.168.7.0/24 -m comment --comment "AWS CONNMARK CHAIN" -j RETURN',
      '-A AWS-CONNMARK-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS CONNMARK CHAIN" -j RETURN',
      '-A AWS-CONNMARK-CHAIN-0 -m comment --comment "AWS, CONNMARK" -j CONNMARK --set-xmark 0x4000/0x4000',
    ]);
  });

  it('plans nothing in nat and no nft table with external SNAT', () => {
    const plan = planSnat({ ...base, externalSnat: true, nodePortSupport: false });
    expect(plan.chains).toEqual([]);
    expect(plan.nft).toBeUndefined();
    expect(renderIptables(plan)).toBe('');
  });
});

describe('planSnat: every combination of the reference env table', () => {
  const randomize: RandomizeSnat[] = ['prng', 'hashrandom', 'none'];
  const combos: { name: string; options: SnatOptions }[] = [];
  for (const externalSnat of [false, true])
    for (const randomizeSnat of randomize)
      for (const randomFullySupported of [true, false])
        for (const nodePortSupport of [true, false])
          for (const connmarkBackend of ['iptables', 'nftables'] as const)
            for (const exclude of [[], ['172.16.0.0/12', '0.0.0.0/0']])
              for (const vethPrefix of ['eni', 'veth'])
                combos.push({
                  name: `EXTERNALSNAT=${externalSnat} RANDOMIZESNAT=${randomizeSnat} random-fully=${randomFullySupported} NODE_PORT_SUPPORT=${nodePortSupport} backend=${connmarkBackend} EXCLUDE_SNAT_CIDRS=${exclude.join(',')} VETHPREFIX=${vethPrefix}`,
                  options: {
                    ...base,
                    vpcCidrs: ['10.0.0.0/16', '100.64.0.0/10'],
                    externalSnat,
                    randomizeSnat,
                    randomFullySupported,
                    nodePortSupport,
                    connmarkBackend,
                    excludeSnatCidrs: exclude,
                    vethPrefix,
                  },
                });

  it.each(combos)('$name', ({ options }) => {
    const plan = planSnat(options);
    const text = renderIptables(plan);
    const o = resolveSnatOptions(options);
    const snatRule = text.split('\n').find((l) => l.includes('-j SNAT'));
    // SNAT and its jump exist iff not external SNAT.
    expect(snatRule !== undefined).toBe(!o.externalSnat);
    expect(text.includes('-A POSTROUTING -m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-0')).toBe(
      !o.externalSnat,
    );
    if (snatRule) {
      const flag = snatRule.endsWith('--random-fully')
        ? 'fully'
        : snatRule.endsWith('--random')
          ? 'random'
          : 'none';
      const expected =
        o.randomizeSnat === 'none'
          ? 'none'
          : o.randomizeSnat === 'prng' && o.randomFullySupported
            ? 'fully'
            : 'random';
      expect(flag).toBe(expected);
      // RETURN rules precede the SNAT rule: one per VPC CIDR and one per exclusion.
      const chain = text.split('\n').filter((l) => l.startsWith('-A AWS-SNAT-CHAIN-0'));
      expect(chain.at(-1)).toBe(snatRule);
      expect(chain.length).toBe(2 + o.excludeSnatCidrs.length + 1);
    }
    // Connmark lives in exactly one backend, and only without external SNAT.
    expect(text.includes('AWS-CONNMARK-CHAIN-0')).toBe(!o.externalSnat && o.connmarkBackend === 'iptables');
    expect(plan.nft !== undefined).toBe(!o.externalSnat && o.connmarkBackend === 'nftables');
    // mangle rules follow node-port support (the veth restore also without external SNAT).
    const mangle = text.split('\n').filter((l) => l.includes('"AWS, primary ENI"'));
    expect(mangle.some((l) => l.includes('--limit-iface-in'))).toBe(o.nodePortSupport);
    expect(mangle.some((l) => l.startsWith(`-A PREROUTING -i ${o.vethPrefix}+ `))).toBe(
      o.nodePortSupport || !o.externalSnat,
    );
    expect(mangle.some((l) => l.startsWith('-A PREROUTING -i vlan+ '))).toBe(o.nodePortSupport);
  });

  it('matches the golden rendering of the whole matrix', async () => {
    const text = combos
      .map(({ name, options }) => {
        const plan = planSnat(options);
        return `### ${name}\n${renderIptables(plan)}${plan.nft ? renderNftTable(plan.nft) : ''}`;
      })
      .join('\n');
    await expect(text).toMatchFileSnapshot('./golden/snat-matrix.txt');
  });
});

describe('resolveSnatOptions: bad input is a typed error', () => {
  const cases: [string, Partial<SnatOptions>, string][] = [
    ['node IP', { nodeIp: '10.0.0.300' }, 'nodeIp'],
    ['node IP with shell text', { nodeIp: '10.0.0.1; rm -rf /' }, 'nodeIp'],
    ['IPv6 VPC CIDR', { vpcCidrs: ['fd00::/8'] }, 'vpcCidrs[0]'],
    ['prefix length', { vpcCidrs: ['10.0.0.0/33'] }, 'vpcCidrs[0]'],
    ['prefix length with a leading zero', { vpcCidrs: ['10.0.0.0/08'] }, 'vpcCidrs[0]'],
    ['octet with a leading zero', { vpcCidrs: ['010.0.0.0/8'] }, 'vpcCidrs[0]'],
    ['three octets', { nodeIp: '10.0.1' }, 'nodeIp'],
    ['two slashes', { excludeSnatCidrs: ['10.0.0.0/8/8'] }, 'excludeSnatCidrs[0]'],
    ['exclusion', { excludeSnatCidrs: ['10.0.0.0/8', 'x'] }, 'excludeSnatCidrs[1]'],
    ['interface with a space', { primaryInterface: 'eth0 -j ACCEPT' }, 'primaryInterface'],
    ['interface too long', { primaryInterface: 'a234567890123456' }, 'primaryInterface'],
    ['veth prefix reserved', { vethPrefix: 'eth' }, 'vethPrefix'],
    ['veth prefix too long', { vethPrefix: 'abcde' }, 'vethPrefix'],
    ['veth prefix quote', { vethPrefix: 'a"b' }, 'vethPrefix'],
    ['mark zero', { connmark: 0 }, 'connmark'],
    ['mark too big', { connmark: 2 ** 32 }, 'connmark'],
    ['randomize', { randomizeSnat: 'fully' as RandomizeSnat }, 'randomizeSnat'],
  ];
  it.each(cases)('%s', (_name, patch, subject) => {
    let caught: unknown;
    try {
      planSnat({ ...base, ...patch });
    } catch (error) {
      caught = error;
    }
    expect(isSnatError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { subject: string }).subject).toBe(subject);
  });

  it('normalises CIDRs to network form and drops duplicates', () => {
    const o = resolveSnatOptions({ ...base, vpcCidrs: ['10.0.3.7/16', '10.0.0.0/16', ' 10.1.2.3 '] });
    expect(o.vpcCidrs).toEqual(['10.0.0.0/16', '10.1.2.3/32']);
  });
});
