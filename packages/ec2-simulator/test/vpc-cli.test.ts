import { describe, expect, it } from 'vitest';
import { parseScenario } from '../src/scenario.js';
import { flagsScenario, isVpcError, parseVpcCliArgs, runVpcCli, VPC_USAGE } from '../src/vpc/index.js';

function usageError(argv: string[]): string | undefined {
  try {
    parseVpcCliArgs(argv);
  } catch (e) {
    return isVpcError(e) ? e.code : 'other';
  }
  return undefined;
}

describe('vpc-sim arguments', () => {
  it('parses up with flags and builds a valid scenario', () => {
    const a = parseVpcCliArgs([
      'up',
      '--nodes',
      '3',
      '--instance-type',
      't3.medium',
      '--vpc-cidr',
      '10.1.0.0/16',
      '--vpc-cidr',
      '100.64.0.0/16',
      '--subnet',
      '10.1.0.0/24',
      '--subnet',
      '100.64.0.0/24',
    ]);
    if (a.command !== 'up') throw new Error('expected up');
    const s = parseScenario(flagsScenario(a));
    expect(s.instances).toHaveLength(3);
    expect(s.vpcs[0]!.cidrBlocks).toEqual(['10.1.0.0/16', '100.64.0.0/16']);
    expect(s.subnets.map((x) => x.cidrBlock)).toEqual(['10.1.0.0/24', '100.64.0.0/24']);
  });

  it('defaults to two m5.large nodes in 10.0.0.0/20', () => {
    const a = parseVpcCliArgs(['up']);
    if (a.command !== 'up') throw new Error('expected up');
    expect([a.nodes, a.instanceType, a.subnets, a.scenarioFile]).toEqual([
      2,
      'm5.large',
      ['10.0.0.0/20'],
      undefined,
    ]);
  });

  it('parses down and list', () => {
    expect(parseVpcCliArgs(['down', '--run', '0a1b2c3d'])).toEqual({
      command: 'down',
      runId: '0a1b2c3d',
      allStale: false,
    });
    expect(parseVpcCliArgs(['down', '--all-stale'])).toEqual({
      command: 'down',
      runId: undefined,
      allStale: true,
    });
    expect(parseVpcCliArgs(['list'])).toEqual({ command: 'list' });
  });

  it('rejects bad input with VPC_INVALID_OPTIONS', () => {
    for (const argv of [
      [],
      ['sideways'],
      ['up', '--nodes', '0'],
      ['up', '--nodes'],
      ['up', '--instance-type', 'z9.huge'],
      ['up', '--scenario', 'x.json', '--nodes', '2'],
      ['up', '--run-id', '../etc'],
      ['down'],
      ['down', '--run', 'ABC'],
      ['down', '--run', '0a1b2c3d', '--all-stale'],
      ['list', 'extra'],
      ['list', '--all'],
      ['up', '--bogus'],
      ['up', '--nodes', '2', 'extra'],
      ['down', '--run', '--all-stale'],
    ]) {
      expect(usageError(argv), argv.join(' ')).toBe('VPC_INVALID_OPTIONS');
    }
  });

  it('answers --help and --version with exit 0', async () => {
    for (const argv of [['--help'], ['-h'], ['up', '--help'], ['down', '-h']]) {
      const out: string[] = [];
      const code = await runVpcCli(argv, { out: (l) => out.push(l), err: () => {}, onStop: () => {} });
      expect(code, argv.join(' ')).toBe(0);
      expect(out).toEqual([VPC_USAGE]);
    }
    const out: string[] = [];
    expect(
      await runVpcCli(['--version'], {
        out: (l) => out.push(l),
        err: () => {},
        onStop: () => {},
        version: '9.9.9',
      }),
    ).toBe(0);
    expect(out).toEqual(['9.9.9']);
  });

  it('prints a JSON error and exits 2 on a usage error, creating nothing', async () => {
    const err: string[] = [];
    const code = await runVpcCli(['up', '--nodes', 'x'], {
      out: () => {},
      err: (l) => err.push(l),
      onStop: () => {},
    });
    expect(code).toBe(2);
    expect(JSON.parse(err[0]!).error).toBe('VPC_INVALID_OPTIONS');
  });
});
