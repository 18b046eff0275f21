import { describe, expect, it } from 'vitest';
import {
  detectBackend,
  isSnatError,
  planSnat,
  reconcileSnat,
  renderNftTable,
  teardownSnat,
} from '../src/index.js';
import { FakeNetfilter } from '../src/testing/index.js';

const options = { nodeIp: '10.0.0.9', primaryInterface: 'eth0', vpcCidrs: ['10.0.0.0/16'] };

describe('reconcileSnat against FakeNetfilter', () => {
  it('applies with one restore and one nft file, then a no-op runs only the reads', async () => {
    const fake = new FakeNetfilter();
    const plan = planSnat(options);
    const first = await reconcileSnat({ runner: fake }, plan);
    expect(fake.calls.filter((c) => c.file === 'iptables-restore')).toHaveLength(1);
    expect(fake.calls.filter((c) => c.file === 'nft' && c.args[0] === '-f')).toHaveLength(1);
    expect(fake.calls.find((c) => c.file === 'iptables-restore')?.args).toEqual(['-w', '5', '--noflush']);
    expect(first.processes).toBe(4);
    expect(fake.rules('nat', 'POSTROUTING')).toEqual([
      '-m comment --comment "AWS SNAT CHAIN" -j AWS-SNAT-CHAIN-0',
    ]);
    expect(fake.rules('nat', 'AWS-SNAT-CHAIN-0')).toEqual(plan.chains[0]!.rules);
    expect(renderNftTable(fake.nftTables.get('aws-cni')!)).toBe(renderNftTable(plan.nft!));

    const before = fake.calls.length;
    const again = await reconcileSnat({ runner: fake }, plan);
    expect(again.changeSet.changes).toEqual([]);
    expect(fake.calls.slice(before).map((c) => `${c.file} ${c.args.join(' ')}`)).toEqual([
      'iptables-save ',
      'nft list table ip aws-cni',
    ]);
    expect(again.processes).toBe(2);
  });

  it('keeps foreign rules, removes ours on teardown, and leaves state unchanged when a restore fails', async () => {
    const fake = new FakeNetfilter();
    fake.restore(
      '*nat\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\nCOMMIT\n',
    );
    await reconcileSnat({ runner: fake }, planSnat({ ...options, connmarkBackend: 'iptables' }));
    expect(fake.rules('nat', 'PREROUTING')[0]).toContain('KUBE-SERVICES');
    expect(fake.rules('nat', 'PREROUTING')).toHaveLength(3);

    const snapshot = JSON.stringify([...fake.tables].map(([t, c]) => [t, [...c]]));
    fake.failNext('iptables-restore', 4, 'Another app is currently holding the xtables lock');
    let caught: unknown;
    try {
      await teardownSnat({ runner: fake });
    } catch (error) {
      caught = error;
    }
    expect(isSnatError(caught, 'COMMAND_FAILED')).toBe(true);
    expect((caught as { exitCode: number }).exitCode).toBe(4);
    expect(JSON.stringify([...fake.tables].map(([t, c]) => [t, [...c]]))).toBe(snapshot);

    await teardownSnat({ runner: fake });
    expect(fake.rules('nat', 'PREROUTING')).toEqual([
      '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    ]);
    expect(fake.tables.get('nat')!.has('AWS-SNAT-CHAIN-0')).toBe(false);
    expect(fake.tables.get('nat')!.has('AWS-CONNMARK-CHAIN-0')).toBe(false);
    expect(fake.rules('mangle', 'PREROUTING')).toEqual([]);
  });

  it('a legacy iptables selects the iptables connmark backend; a missing nft is tolerated when not needed', async () => {
    const fake = new FakeNetfilter('iptables v1.8.4 (legacy)');
    const info = await detectBackend(fake);
    expect(info.connmarkBackend).toBe('iptables');
    const result = await reconcileSnat(
      { runner: fake, commands: { nft: 'nft-not-installed' } },
      planSnat({ ...options, connmarkBackend: info.connmarkBackend }),
    );
    expect(result.changeSet.nftScript).toBeUndefined();
    expect(fake.tables.get('nat')!.has('AWS-CONNMARK-CHAIN-0')).toBe(true);
  });

  it('reads with two processes in the planned state for either backend, and reports a failed listing', async () => {
    const fake = new FakeNetfilter();
    const plan = planSnat({ ...options, connmarkBackend: 'iptables' });
    await reconcileSnat({ runner: fake }, plan);
    const before = fake.calls.length;
    const again = await reconcileSnat({ runner: fake }, plan);
    expect(again.processes).toBe(2);
    expect(fake.calls.slice(before).map((c) => `${c.file} ${c.args.join(' ')}`)).toEqual([
      'iptables-save ',
      'nft list tables ip',
    ]);

    // With the table expected, a failed listing counts as absent: the table is replaced (atomic either way),
    // and an error that also breaks writing surfaces from `nft -f`.
    const nftPlan = planSnat(options);
    await reconcileSnat({ runner: fake }, nftPlan);
    fake.failNext('nft', 1, 'Error: Could not process rule: Operation not permitted');
    const replaced = await reconcileSnat({ runner: fake }, nftPlan);
    expect(replaced.changeSet.changes).toEqual([{ kind: 'replace-nft-table', table: 'ip aws-cni' }]);
    expect(renderNftTable(fake.nftTables.get('aws-cni')!)).toBe(renderNftTable(nftPlan.nft!));
    fake.failNext('nft', 1, 'Error: Could not process rule: Operation not permitted');
    fake.failNext('nft', 1, 'Error: Could not process rule: Operation not permitted');
    let caught: unknown;
    try {
      await reconcileSnat({ runner: fake }, nftPlan);
    } catch (error) {
      caught = error;
    }
    expect(isSnatError(caught, 'COMMAND_FAILED')).toBe(true);
  });
});
