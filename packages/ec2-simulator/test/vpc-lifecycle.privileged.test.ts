import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { netnsAdd, openSync } from '@vpc-cni-kit/netlink';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { expect, it } from 'vitest';
import {
  downAllStale,
  downRun,
  flagsScenario,
  isVpcError,
  listRuns,
  parseVpcCliArgs,
  runNames,
  runVpcCli,
  startVirtualVpc,
  type VirtualVpcDescription,
} from '../src/vpc/index.js';
import { writeRunRecord } from '../src/vpc/run-state.js';
import { mountsWith, netnsNames, pings, rootLinks } from './vpc-support.js';

const oneNode = () => {
  const a = parseVpcCliArgs(['up', '--nodes', '1']);
  if (a.command !== 'up') throw new Error('expected up');
  return flagsScenario(a);
};

describePrivileged('virtual VPC lifecycle: runs, CLI, stale cleanup', () => {
  it('runs side by side with the same addresses, each in its own namespaces', async () => {
    const root = rootLinks();
    const a = await startVirtualVpc({ scenario: oneNode(), simulator: { rateLimits: false } });
    const b = await startVirtualVpc({ scenario: oneNode(), simulator: { rateLimits: false } });
    try {
      expect(a.runId).not.toBe(b.runId);
      const ia = a.describe().instances[0]!;
      const ib = b.describe().instances[0]!;
      expect(ia.privateIp).toBe(ib.privateIp);
      expect(ia.netns).not.toBe(ib.netns);
      await a.close();
      expect(netnsNames().some((n) => n.includes(a.runId))).toBe(false);
      expect(pings(ib.netnsPath, ib.gateway)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
    expect(netnsNames().some((n) => n.includes(b.runId))).toBe(false);
    expect(rootLinks()).toEqual(root);
  });

  it('vpc-sim up prints one complete JSON line, serves until stopped, then removes everything', async () => {
    const out: string[] = [];
    const err: string[] = [];
    let stop: (() => void) | undefined;
    const exit = runVpcCli(['up', '--nodes', '2', '--no-rate-limits'], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      onStop: (h) => {
        stop = h;
      },
    });
    for (let i = 0; i < 200 && out.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toEqual([]);
    expect(out).toHaveLength(1);
    const d = JSON.parse(out[0]!) as VirtualVpcDescription;
    expect(Object.keys(d).sort()).toEqual(
      [
        'adminEndpoint',
        'down',
        'ec2Endpoint',
        'ec2EndpointLocal',
        'imdsEndpoint',
        'instances',
        'internet',
        'pid',
        'region',
        'router',
        'runId',
        'simulatorAdminEndpoint',
        'stateFile',
        'subnets',
        'vpcs',
      ].sort(),
    );
    expect(d.instances).toHaveLength(2);
    for (const inst of d.instances) {
      expect(inst.enis[0]).toMatchObject({ ifname: 'eth0', deviceIndex: 0 });
      expect(inst.imdsEndpoint).toBe('http://169.254.169.254');
      expect(inst.ec2Endpoint).toBe('http://203.0.113.10');
    }
    expect(listRuns().find((r) => r.record.runId === d.runId)?.alive).toBe(true);
    expect(pings(d.instances[0]!.netnsPath, d.instances[1]!.privateIp)).toBe(true);
    stop!();
    expect(await exit).toBe(0);
    expect(netnsNames().some((n) => n.includes(d.runId))).toBe(false);
    expect(existsSync(d.stateFile)).toBe(false);
  });

  it('down --all-stale removes a crashed run (dead pid, namespaces left behind) and leaves live runs alone', async () => {
    const live = await startVirtualVpc({ scenario: oneNode(), simulator: { rateLimits: false } });
    const crashed = runNames('dead0000');
    try {
      // What a killed `vpc-sim up` leaves: a record naming a dead process, its namespaces, links inside them.
      const dead = spawnSync('true');
      writeRunRecord('/run/vck-vpc', {
        version: 1,
        runId: crashed.runId,
        pid: dead.pid!,
        pidStart: '1',
        stopsOnSigterm: true,
        namespaces: [crashed.router, crashed.internet],
      });
      const rtr = netnsAdd(crashed.router);
      const inet = netnsAdd(crashed.internet);
      const h = openSync({ netns: rtr });
      try {
        h.linkAdd({ kind: 'veth', name: 'inet0', peer: { name: 'eth0', netns: inet } });
      } finally {
        h.close();
      }
      expect(downAllStale()).toContain(crashed.runId);
      expect(netnsNames().filter((n) => n.includes(crashed.runId))).toEqual([]);
      expect(mountsWith(crashed.runId)).toEqual([]);
      expect(existsSync(`/run/vck-vpc/${crashed.runId}`)).toBe(false);
      // The live run is untouched.
      const inst = live.describe().instances[0]!;
      expect(pings(inst.netnsPath, inst.gateway)).toBe(true);
      let err: unknown;
      try {
        await downRun(crashed.runId);
      } catch (e) {
        err = e;
      }
      expect(isVpcError(err) && err.code).toBe('VPC_RUN_NOT_FOUND');
      // A live run owned by a program (not vpc-sim) is not signalled or touched.
      let busy: unknown;
      try {
        await downRun(live.runId);
      } catch (e) {
        busy = e;
      }
      expect(isVpcError(busy) && busy.code).toBe('VPC_RUN_BUSY');
      expect(pings(inst.netnsPath, inst.gateway)).toBe(true);
    } finally {
      await live.close();
      for (const n of [crashed.router, crashed.internet]) spawnSync('ip', ['netns', 'del', n]);
    }
  });

  it('refuses a bad scenario or a VPC CIDR that clashes with the ranges a run uses, creating nothing', async () => {
    const before = netnsNames();
    const runsBefore = listRuns().length;
    for (const [scenario, code] of [
      [{ vpcs: 'nope', subnets: [] }, 'SCENARIO_INVALID'],
      [
        { vpcs: [{ id: 'vpc-0a000000000000001', cidrBlocks: ['203.0.113.0/24'] }], subnets: [] },
        'VPC_INVALID_OPTIONS',
      ],
      [
        {
          vpcs: [
            { id: 'vpc-0a000000000000001', cidrBlocks: ['10.0.0.0/16'] },
            { id: 'vpc-0b000000000000002', cidrBlocks: ['10.1.0.0/16'] },
          ],
          subnets: [],
        },
        'VPC_INVALID_OPTIONS',
      ],
    ] as const) {
      let err: unknown;
      try {
        await startVirtualVpc({ scenario });
      } catch (e) {
        err = e;
      }
      expect((err as { code?: string }).code).toBe(code);
    }
    let bad: unknown;
    try {
      await startVirtualVpc({ scenario: oneNode(), runId: 'NOT-HEX' });
    } catch (e) {
      bad = e;
    }
    expect(isVpcError(bad) && bad.code).toBe('VPC_INVALID_OPTIONS');
    expect(netnsNames()).toEqual(before);
    expect(listRuns()).toHaveLength(runsBefore);
  });

  it('closes idempotently and refuses use after close', async () => {
    const vpc = await startVirtualVpc({ scenario: oneNode(), simulator: { rateLimits: false } });
    await Promise.all([vpc.close(), vpc.close()]);
    await vpc.close();
    let err: unknown;
    try {
      vpc.describe();
    } catch (e) {
      err = e;
    }
    expect(isVpcError(err) && err.code).toBe('VPC_CLOSED');
    expect(netnsNames().some((n) => n.includes(vpc.runId))).toBe(false);
  });
});
