import { createNamespaces, describePrivileged, inNs, uniqueName } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CommandRunner, ensureEgressRangeBlock, isSnatError, processRunner } from '../src/index.js';

describePrivileged('egress-range FORWARD block in a real network namespace', () => {
  const ns = uniqueName('vckb');
  let cleanup = () => {};
  let runner: CommandRunner;

  beforeAll(() => {
    cleanup = createNamespaces([ns]);
    runner = processRunner({ netnsPath: `/var/run/netns/${ns}` });
  });
  afterAll(() => cleanup());

  it('inserts the reference rule once for each family; a second call changes nothing', async () => {
    expect(await ensureEgressRangeBlock(runner, 4)).toBe(true);
    expect(await ensureEgressRangeBlock(runner, 4)).toBe(false);
    expect(await ensureEgressRangeBlock(runner, 6)).toBe(true);
    expect(await ensureEgressRangeBlock(runner, 6)).toBe(false);
    const v4 = inNs(ns, 'iptables', '-S', 'FORWARD').split('\n');
    expect(v4[1]).toBe(
      '-A FORWARD -d 169.254.172.0/22 -m conntrack --ctstate NEW -m comment --comment "Block Node Local Pod access via IPv4" -j REJECT --reject-with icmp-port-unreachable',
    );
    expect(v4.filter((l) => l.includes('169.254.172.0/22'))).toHaveLength(1);
    const v6 = inNs(ns, 'ip6tables', '-S', 'FORWARD');
    expect(v6).toContain('-A FORWARD -d fd00::ac:0/118 -m conntrack --ctstate NEW');
    expect(v6).toContain('"Block Node Local Pod access via IPv6" -j REJECT');
  });

  it('reports a failed insert as COMMAND_FAILED', async () => {
    const failing: CommandRunner = { run: async () => ({ exitCode: 4, stdout: '', stderr: 'no table' }) };
    const e = await ensureEgressRangeBlock(failing, 4).catch((x: unknown) => x);
    expect(isSnatError(e) && e.code).toBe('COMMAND_FAILED');
  });

  it('inserts only when the check says "no such rule" (exit 1): a check that fails otherwise inserts nothing', async () => {
    const calls: string[][] = [];
    const lockBusy: CommandRunner = {
      run: async ({ args }) => {
        calls.push([...args]);
        return { exitCode: 4, stdout: '', stderr: 'Another app is currently holding the xtables lock' };
      },
    };
    const e = await ensureEgressRangeBlock(lockBusy, 4).catch((x: unknown) => x);
    expect(isSnatError(e) && e.code).toBe('COMMAND_FAILED');
    expect(calls.map((a) => a[3])).toEqual(['-C']);
  });
});
