import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, type Ec2SimulatorEndpoints, parseServeArgs, runCli, USAGE } from '../src/index.js';
import { NODE, NODE_BIG, scenario } from './helpers.js';

const dir = scratchDir('vck-ec2sim-');
const scenarioFile = join(dir.path, 'scenario.json');
writeFileSync(scenarioFile, JSON.stringify(scenario));

afterAll(() => dir.remove());

function io() {
  const out: string[] = [];
  const err: string[] = [];
  let stop: (() => void) | undefined;
  const value: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    onStop: (h) => {
      stop = h;
    },
  };
  return { value, out, err, stop: () => stop?.() };
}

describe('ec2-simulator serve (in-process)', () => {
  it('prints one JSON line of endpoints and stops on the stop signal', async () => {
    const t = io();
    const done = runCli(['serve', '--scenario', scenarioFile, '--no-rate-limits'], t.value);
    for (let i = 0; i < 200 && t.out.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(t.out).toHaveLength(1);
    const eps = JSON.parse(t.out[0]!) as Ec2SimulatorEndpoints;
    expect(eps.region).toBe('us-west-2');
    expect(eps.admin).toBe(`${eps.ec2}/_sim`);
    expect(Object.keys(eps.imds).sort()).toEqual([NODE, NODE_BIG].sort());
    const ec2 = new EC2Client({
      endpoint: eps.ec2,
      region: eps.region,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    });
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [NODE] }));
    expect(out.Reservations![0]!.Instances![0]!.InstanceType).toBe('m5.large');
    ec2.destroy();
    t.stop();
    expect(await done).toBe(0);
    await expect(fetch(eps.ec2, { method: 'POST', body: 'Action=DescribeInstances' })).rejects.toThrow();
  });

  it('reports a bad scenario as one typed JSON error line and exit 2', async () => {
    const bad = join(dir.path, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ ...scenario, subnets: [{ ...scenario.subnets[0], cidrBlock: '192.168.0.0/24' }] }),
    );
    const t = io();
    expect(await runCli(['serve', '--scenario', bad], t.value)).toBe(2);
    expect(t.out).toEqual([]);
    const e = JSON.parse(t.err[0]!) as { error: string; message: string };
    expect(e.error).toBe('SCENARIO_CIDR_CONFLICT');
    expect(e.message).toContain('subnets[0].cidrBlock');
    const missing = io();
    expect(await runCli(['serve', '--scenario', join(dir.path, 'absent.json')], missing.value)).toBe(2);
    expect(JSON.parse(missing.err[0]!).error).toBe('SCENARIO_UNREADABLE');
    const notJson = join(dir.path, 'broken.json');
    writeFileSync(notJson, '{');
    const nj = io();
    expect(await runCli(['serve', '--scenario', notJson], nj.value)).toBe(2);
    expect(JSON.parse(nj.err[0]!).error).toBe('SCENARIO_NOT_JSON');
    const usage = io();
    expect(await runCli(['serve'], usage.value)).toBe(2);
    expect(JSON.parse(usage.err[0]!).error).toBe('CLI_USAGE');
  });

  it('parses its arguments strictly', () => {
    expect(
      parseServeArgs(['serve', '--scenario', 'f', '--port', '8080', '--seed', '7', '--random-addresses']),
    ).toEqual({
      scenario: 'f',
      host: '127.0.0.1',
      port: 8080,
      seed: 7,
      noRateLimits: false,
      randomAddresses: true,
    });
    expect(() => parseServeArgs(['run'])).toThrow(/usage/);
    expect(() => parseServeArgs(['serve', '--scenario', 'f', '--port', '70000'])).toThrow(/--port/);
    expect(() => parseServeArgs(['serve', '--scenario'])).toThrow(/argument missing/);
    expect(() => parseServeArgs(['serve', '--scenario', 'f', '--verbose'])).toThrow(
      /Unknown option '--verbose'/,
    );
    expect(() => parseServeArgs(['serve', 'extra', '--scenario', 'f'])).toThrow(/usage/);
  });

  it('answers --help and --version, and refuses an unknown option with the usage and exit 2', async () => {
    const help = io();
    expect(await runCli(['--help'], help.value)).toBe(0);
    expect(help.out).toEqual([USAGE]);
    const serveHelp = io();
    expect(await runCli(['serve', '-h'], serveHelp.value)).toBe(0);
    expect(serveHelp.out).toEqual([USAGE]);
    const version = io();
    expect(await runCli(['--version'], { ...version.value, version: '1.2.3' })).toBe(0);
    expect(version.out).toEqual(['1.2.3']);
    const unknown = io();
    expect(await runCli(['serve', '--scenario', scenarioFile, '--bogus'], unknown.value)).toBe(2);
    expect(unknown.out).toEqual([]);
    const e = JSON.parse(unknown.err[0]!) as { error: string; message: string };
    expect(e.error).toBe('CLI_USAGE');
    expect(e.message).toContain(USAGE);
  });
});

describe('ec2-simulator serve (real process)', () => {
  const out = join(dir.path, 'bin');
  beforeAll(async () => {
    await build({
      config: false,
      entry: { cli: new URL('../src/cli.ts', import.meta.url).pathname },
      outDir: out,
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      silent: true,
      dts: false,
    });
  }, 60_000);

  it('prints its endpoints when ready and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(out, 'cli.js'), 'serve', '--scenario', scenarioFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (c: string) => {
        buf += c;
        if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before printing`)));
    });
    const eps = JSON.parse(line) as Ec2SimulatorEndpoints;
    const state = (await (await fetch(`${eps.admin}/state`)).json()) as {
      state: { instances: { id: string }[] };
    };
    expect(state.state.instances.map((i) => i.id).sort()).toEqual([NODE, NODE_BIG].sort());
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
