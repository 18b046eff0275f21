import { describe, expect, it } from 'vitest';
import {
  diffSnat,
  emptySnatPlan,
  interpretIptablesVersion,
  isSnatError,
  parseIptablesSave,
  parseNftTable,
  planSnat,
  renderIptables,
  renderNftTable,
  type SnatState,
} from '../src/index.js';

const options = { nodeIp: '10.0.0.9', primaryInterface: 'eth0', vpcCidrs: ['10.0.0.0/16'] };

/** The state a node has after the plan was applied: the plan rendered as iptables-save prints it. */
function stateOf(savedText: string, nftText?: string): SnatState {
  return {
    tables: parseIptablesSave(savedText),
    nft: nftText === undefined ? undefined : parseNftTable(nftText),
  };
}

const foreignNat = [
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':INPUT ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':POSTROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
  'COMMIT',
].join('\n');

describe('diffSnat', () => {
  it('installs everything on an empty node in one restore script and one nft file', () => {
    const plan = planSnat(options);
    const set = diffSnat(plan, { tables: [], nft: undefined });
    expect(set.iptablesScript).toBe(
      [
        '*mangle',
        ...renderIptables(plan)
          .split('\n')
          .filter((l) => l.startsWith('-A PREROUTING')),
        'COMMIT',
        '*nat',
        ':AWS-SNAT-CHAIN-0 - [0:0]',
        '-A AWS-SNAT-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
        '-A AWS-SNAT-CHAIN-0 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source 10.0.0.9 --random-fully',
        '-A POSTROUTING -m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-0',
        'COMMIT',
        '',
      ].join('\n'),
    );
    expect(set.nftScript).toBe(`table ip aws-cni {}\ndelete table ip aws-cni\n${renderNftTable(plan.nft!)}`);
  });

  it('changes nothing when the node already matches (with counters and foreign rules around)', () => {
    const plan = planSnat(options);
    const rendered = renderIptables(plan);
    const saved = rendered
      .replace('*nat\n', `${foreignNat.replace('COMMIT', '').trimEnd()}\n`)
      .replace('*mangle\n', '*mangle\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j MARK --set-xmark 0x1/0x1\n');
    const nft = renderNftTable(plan.nft!).replaceAll('counter', 'counter packets 12 bytes 3400');
    const set = diffSnat(plan, stateOf(saved, nft));
    expect(set.changes).toEqual([]);
    expect(set.iptablesScript).toBeUndefined();
    expect(set.nftScript).toBeUndefined();
  });

  it('rewrites a chain with a stale rule, deletes legacy chains and never touches foreign rules', () => {
    const plan = planSnat({ ...options, connmarkBackend: 'iptables' });
    const saved = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':POSTROUTING ACCEPT [0:0]',
      ':AWS-SNAT-CHAIN-0 - [0:0]',
      ':AWS-SNAT-CHAIN-1 - [0:0]',
      ':AWS-CONNMARK-CHAIN-0 - [0:0]',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A PREROUTING -i eni+ -m comment --comment "AWS, outbound connections" -m state --state NEW -j AWS-CONNMARK-CHAIN-0',
      '-A PREROUTING -m comment --comment "AWS, CONNMARK" -j CONNMARK --restore-mark --nfmask 0x80 --ctmask 0x80',
      '-A POSTROUTING -m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-0',
      '-A AWS-SNAT-CHAIN-0 ! -d 10.0.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-1',
      '-A AWS-SNAT-CHAIN-1 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source 10.0.0.9',
      '-A AWS-CONNMARK-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS CONNMARK CHAIN" -j RETURN',
      '-A AWS-CONNMARK-CHAIN-0 -m comment --comment "AWS, CONNMARK" -j CONNMARK --set-xmark 0x80/0x80',
      'COMMIT',
    ].join('\n');
    const set = diffSnat(plan, stateOf(saved, 'table ip aws-cni {\n\tchain snat-mark {\n\t}\n}\n'));
    const nat = set.iptablesScript!.slice(set.iptablesScript!.indexOf('*nat'));
    expect(nat).toBe(
      [
        '*nat',
        ':AWS-SNAT-CHAIN-0 - [0:0]',
        ':AWS-SNAT-CHAIN-1 - [0:0]',
        '-D PREROUTING -i eni+ -m comment --comment "AWS, outbound connections" -m state --state NEW -j AWS-CONNMARK-CHAIN-0',
        '-D PREROUTING -m comment --comment "AWS, CONNMARK" -j CONNMARK --restore-mark --nfmask 0x80 --ctmask 0x80',
        '-X AWS-SNAT-CHAIN-1',
        '-A AWS-SNAT-CHAIN-0 -d 10.0.0.0/16 -m comment --comment "AWS SNAT CHAIN" -j RETURN',
        '-A AWS-SNAT-CHAIN-0 ! -o vlan+ -m comment --comment "AWS, SNAT" -m addrtype ! --dst-type LOCAL -j SNAT --to-source 10.0.0.9 --random-fully',
        '-A PREROUTING -i eni+ -m comment --comment "AWS, outbound connections" -j AWS-CONNMARK-CHAIN-0',
        '-A PREROUTING -m comment --comment "AWS, CONNMARK" -j CONNMARK --restore-mark --nfmask 0x80 --ctmask 0x80',
        'COMMIT',
        '',
      ].join('\n'),
    );
    expect(set.nftScript).toBe('delete table ip aws-cni\n');
    expect(set.iptablesScript).not.toContain('KUBE');
  });

  it('teardown removes only what is ours', () => {
    const plan = planSnat({ ...options, connmarkBackend: 'iptables' });
    const saved = renderIptables(plan).replace('*nat\n', `${foreignNat.replace('COMMIT', '').trimEnd()}\n`);
    const set = diffSnat(emptySnatPlan(), stateOf(saved));
    const kinds = set.changes.map((c) => `${c.kind} ${'chain' in c ? c.chain : c.table}`);
    expect(kinds.sort()).toEqual(
      [
        'delete-chain AWS-CONNMARK-CHAIN-0',
        'delete-chain AWS-SNAT-CHAIN-0',
        'delete-rule POSTROUTING',
        'delete-rule PREROUTING',
        'delete-rule PREROUTING',
        'delete-rule PREROUTING',
        'delete-rule PREROUTING',
        'delete-rule PREROUTING',
      ].sort(),
    );
    expect(set.iptablesScript).not.toContain('KUBE');
  });
});

describe('parsers', () => {
  it('reject what they do not understand', () => {
    for (const text of ['-A FOO -j ACCEPT', '*nat\n-A X\n', '*nat\nbogus\nCOMMIT']) {
      let caught: unknown;
      try {
        parseIptablesSave(text);
      } catch (error) {
        caught = error;
      }
      expect(isSnatError(caught, 'PARSE_ERROR')).toBe(true);
    }
    expect(() => parseNftTable('table ip aws-cni {\n\tfoo\n}\n')).toThrow();
  });

  it('interprets iptables --version as the reference does', () => {
    expect(interpretIptablesVersion('iptables v1.8.9 (nf_tables)\n')).toEqual({
      connmarkBackend: 'nftables',
      randomFullySupported: true,
      versionText: 'iptables v1.8.9 (nf_tables)',
    });
    expect(interpretIptablesVersion('iptables v1.8.4 (legacy)').connmarkBackend).toBe('iptables');
    expect(interpretIptablesVersion('iptables v1.6.1').randomFullySupported).toBe(false);
    expect(interpretIptablesVersion('iptables v1.6.2').randomFullySupported).toBe(true);
  });
});
