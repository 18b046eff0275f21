import {
  askPeer,
  createNamespaces,
  describePrivileged,
  inNs,
  startPeerReporter,
  uniqueName,
} from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type ConnmarkBackend,
  detectBackend,
  planSnat,
  processRunner,
  reconcileSnat,
  renderIptables,
  renderNftTable,
  type SnatOptions,
  type SnatTools,
  teardownSnat,
} from '../src/index.js';

/** Our lines in `iptables-save` (declarations of our chains and rules with our comments or jumps). */
function ourSavedLines(ns: string): string[] {
  const text = inNs(ns, 'iptables-save', '-t', 'mangle') + inNs(ns, 'iptables-save', '-t', 'nat');
  return text
    .split('\n')
    .filter((l) => /AWS-(SNAT|CONNMARK)-CHAIN|"AWS[ ,]/.test(l))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ' [0:0]'))
    .sort();
}

function plannedLines(options: SnatOptions): string[] {
  return renderIptables(planSnat(options))
    .split('\n')
    .filter((l) => l.startsWith('-A') || l.startsWith(':'))
    .sort();
}

function nftTable(ns: string): string | undefined {
  const tables = inNs(ns, 'nft', 'list', 'tables', 'ip');
  if (!tables.includes('table ip aws-cni')) return undefined;
  return inNs(ns, 'nft', 'list', 'table', 'ip', 'aws-cni').replace(/ packets \d+ bytes \d+/g, '');
}

describePrivileged('iptables-snat in a real network namespace', () => {
  const ns = uniqueName('vcks');
  let cleanup = () => {};
  let tools: SnatTools;
  const base: SnatOptions = {
    nodeIp: '10.0.0.9',
    primaryInterface: 'eth0',
    vpcCidrs: ['10.0.0.0/16'],
    excludeSnatCidrs: ['172.16.0.0/12'],
  };

  beforeAll(() => {
    cleanup = createNamespaces([ns]);
    tools = { runner: processRunner({ netnsPath: `/var/run/netns/${ns}` }) };
  });
  afterAll(() => cleanup());

  it('detects the backend of this iptables', async () => {
    const info = await detectBackend(tools.runner);
    expect(info.versionText).toMatch(/^iptables v/);
    expect(info.connmarkBackend).toBe(info.versionText.includes('legacy') ? 'iptables' : 'nftables');
  });

  for (const backend of ['nftables', 'iptables'] as ConnmarkBackend[]) {
    it(`applies exactly the plan, then changes nothing (${backend} connmark backend)`, async () => {
      const options = { ...base, connmarkBackend: backend };
      const plan = planSnat(options);
      const first = await reconcileSnat(tools, plan);
      expect(first.changeSet.changes.length).toBeGreaterThan(0);
      expect(ourSavedLines(ns)).toEqual(plannedLines(options));
      expect(nftTable(ns)).toBe(plan.nft ? renderNftTable(plan.nft) : undefined);

      const second = await reconcileSnat(tools, plan);
      expect(second.changeSet.changes).toEqual([]);
      expect(second.changeSet.iptablesScript).toBeUndefined();
      expect(second.changeSet.nftScript).toBeUndefined();
      expect(ourSavedLines(ns)).toEqual(plannedLines(options));
    });
  }

  it('every combination of the env table applies exactly and converges from the previous one', async () => {
    for (const externalSnat of [false, true])
      for (const randomizeSnat of ['prng', 'hashrandom', 'none'] as const)
        for (const nodePortSupport of [true, false])
          for (const connmarkBackend of ['nftables', 'iptables'] as const) {
            const options = {
              ...base,
              externalSnat,
              randomizeSnat,
              nodePortSupport,
              connmarkBackend,
              vethPrefix: 'veth',
            };
            const plan = planSnat(options);
            await reconcileSnat(tools, plan);
            expect(ourSavedLines(ns), JSON.stringify(options)).toEqual(plannedLines(options));
            expect(nftTable(ns)).toBe(plan.nft ? renderNftTable(plan.nft) : undefined);
            expect((await reconcileSnat(tools, plan)).changeSet.changes, JSON.stringify(options)).toEqual([]);
          }
    await teardownSnat(tools);
  });

  it('removes injected stale rules and keeps foreign ones', async () => {
    const options = { ...base, connmarkBackend: 'nftables' as const };
    const plan = planSnat(options);
    await reconcileSnat(tools, plan);
    inNs(ns, 'iptables', '-t', 'nat', '-I', 'AWS-SNAT-CHAIN-0', '1', '-d', '1.2.3.0/24', '-j', 'RETURN');
    inNs(ns, 'iptables', '-t', 'nat', '-N', 'AWS-SNAT-CHAIN-1');
    inNs(
      ns,
      'iptables',
      '-t',
      'mangle',
      '-A',
      'PREROUTING',
      '-i',
      'old+',
      '-m',
      'comment',
      '--comment',
      'AWS, primary ENI',
      '-j',
      'ACCEPT',
    );
    inNs(
      ns,
      'iptables',
      '-t',
      'nat',
      '-A',
      'POSTROUTING',
      '-m',
      'comment',
      '--comment',
      'someone else',
      '-j',
      'ACCEPT',
    );
    inNs(ns, 'nft', 'add', 'rule', 'ip', 'aws-cni', 'snat-mark', 'ip', 'daddr', '9.9.9.9', 'return');

    const result = await reconcileSnat(tools, plan);
    expect(result.changeSet.changes.map((c) => c.kind)).toContain('delete-chain');
    expect(result.changeSet.changes.map((c) => c.kind)).toContain('replace-nft-table');
    expect(ourSavedLines(ns)).toEqual(plannedLines(options));
    expect(nftTable(ns)).toBe(renderNftTable(plan.nft!));
    expect(inNs(ns, 'iptables-save', '-t', 'nat')).toContain('--comment "someone else" -j ACCEPT');
    expect((await reconcileSnat(tools, plan)).changeSet.changes).toEqual([]);
  });

  it('switching the connmark backend moves the connmark rules', async () => {
    await reconcileSnat(tools, planSnat({ ...base, connmarkBackend: 'iptables' }));
    expect(nftTable(ns)).toBeUndefined();
    expect(ourSavedLines(ns).some((l) => l.includes('AWS-CONNMARK-CHAIN-0'))).toBe(true);
    await reconcileSnat(tools, planSnat({ ...base, connmarkBackend: 'nftables' }));
    expect(nftTable(ns)).toBeDefined();
    expect(ourSavedLines(ns).some((l) => l.includes('AWS-CONNMARK-CHAIN-0'))).toBe(false);
  });

  it('external SNAT removes SNAT and connmark; teardown leaves nothing', async () => {
    const options = { ...base, externalSnat: true };
    await reconcileSnat(tools, planSnat(options));
    expect(ourSavedLines(ns)).toEqual(plannedLines(options));
    expect(ourSavedLines(ns).some((l) => l.includes('SNAT'))).toBe(false);
    expect(nftTable(ns)).toBeUndefined();

    await reconcileSnat(tools, planSnat(base));
    await teardownSnat(tools);
    expect(ourSavedLines(ns)).toEqual([]);
    expect(nftTable(ns)).toBeUndefined();
    expect(inNs(ns, 'iptables-save', '-t', 'nat')).toContain('--comment "someone else"');
    expect((await teardownSnat(tools)).changeSet.changes).toEqual([]);
  });
});

describePrivileged('iptables-snat: packets across pod, node and outside namespaces', () => {
  const pod = uniqueName('vckp');
  const node = uniqueName('vckn');
  const out = uniqueName('vcko');
  let cleanup = () => {};
  let stopReporter = () => {};
  const port = 18080;

  beforeAll(async () => {
    cleanup = createNamespaces([pod, node, out]);
    // node <-> outside: the "VPC" link. Outside holds a VPC address and a non-VPC (internet) address.
    inNs(node, 'ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', out);
    inNs(node, 'ip', 'addr', 'add', '10.0.0.9/24', 'dev', 'eth0');
    inNs(node, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(out, 'ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'eth0');
    inNs(out, 'ip', 'addr', 'add', '198.51.100.1/32', 'dev', 'lo');
    inNs(out, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(out, 'ip', 'route', 'add', '10.0.5.0/24', 'via', '10.0.0.9');
    inNs(node, 'ip', 'route', 'add', 'default', 'via', '10.0.0.1');
    inNs(node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    // pod <-> node: a routed veth as the CNI plugin makes it.
    inNs(
      node,
      'ip',
      'link',
      'add',
      'eni0a1b2c3d4e5',
      'address',
      '02:aa:bb:cc:dd:01',
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      pod,
    );
    inNs(node, 'ip', 'link', 'set', 'eni0a1b2c3d4e5', 'up');
    inNs(node, 'ip', 'route', 'add', '10.0.5.7/32', 'dev', 'eni0a1b2c3d4e5', 'scope', 'link');
    inNs(pod, 'ip', 'addr', 'add', '10.0.5.7/32', 'dev', 'eth0');
    inNs(pod, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(pod, 'ip', 'route', 'add', '169.254.1.1', 'dev', 'eth0', 'scope', 'link');
    inNs(pod, 'ip', 'route', 'add', 'default', 'via', '169.254.1.1', 'dev', 'eth0');
    inNs(
      pod,
      'ip',
      'neigh',
      'add',
      '169.254.1.1',
      'lladdr',
      '02:aa:bb:cc:dd:01',
      'dev',
      'eth0',
      'nud',
      'permanent',
    );
    stopReporter = await startPeerReporter(out, port);
  });
  afterAll(() => {
    stopReporter();
    cleanup();
  });

  it('SNATs to the node address off the VPC, keeps the pod address inside it, and replies come back', async () => {
    const tools = { runner: processRunner({ netnsPath: `/var/run/netns/${node}` }) };
    const options: SnatOptions = { nodeIp: '10.0.0.9', primaryInterface: 'eth0', vpcCidrs: ['10.0.0.0/16'] };
    // Without rules the internet sees the pod address.
    expect(askPeer(pod, '198.51.100.1', port)).toBe('10.0.5.7');
    await reconcileSnat(tools, planSnat(options));
    expect(askPeer(pod, '198.51.100.1', port)).toBe('10.0.0.9');
    expect(askPeer(pod, '10.0.0.1', port)).toBe('10.0.5.7');
    // An exclusion keeps the pod address for that destination.
    await reconcileSnat(tools, planSnat({ ...options, excludeSnatCidrs: ['198.51.100.0/24'] }));
    expect(askPeer(pod, '198.51.100.1', port)).toBe('10.0.5.7');
    // External SNAT: no SNAT on the node.
    await reconcileSnat(tools, planSnat({ ...options, externalSnat: true }));
    expect(askPeer(pod, '198.51.100.1', port)).toBe('10.0.5.7');
    await teardownSnat(tools);
  });
});
