import { describe, expect, it } from 'vitest';
import { jsonLogger, LOG_LEVELS, parseDuration, readCommandLine, USAGE } from '../src/index.js';

const base = ['--cluster-name', 'c'];
const env = { AWS_REGION: 'us-west-2' };

describe('the command line', () => {
  it('reads durations as seconds or with ms/s/m units, and nothing else', () => {
    expect(parseDuration('60')).toBe(60_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2m')).toBe(120_000);
    for (const bad of ['', '-1s', '1h', 's', '1 s', 'NaN']) expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('reads the probe address as HOST:PORT or :PORT', () => {
    const at = (a: string) => {
      const line = readCommandLine([...base, '--health-probe-bind-address', a], env);
      return line.kind === 'run' ? line.settings.healthProbes : undefined;
    };
    expect(at(':61779')).toEqual({ host: '', port: 61779 });
    expect(at('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(at('[::1]:8081')).toEqual({ host: '::1', port: 8081 });
  });

  it('serves metrics on :8080 unless told another address, or none with 0 (the reference flag and default)', () => {
    const metrics = (args: string[]) => {
      const line = readCommandLine([...base, ...args], env);
      return line.kind === 'run' ? line.settings.metrics : line;
    };
    expect(metrics([])).toEqual({ host: '', port: 8080 });
    expect(metrics(['--metrics-bind-address', '127.0.0.1:9090'])).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(metrics(['--metrics-bind-address', '0'])).toBeUndefined();
    for (const bad of ['8080', ':', 'host:99999', ''])
      expect(metrics(['--metrics-bind-address', bad])).toEqual({
        kind: 'invalid',
        problem: `bad --metrics-bind-address ${JSON.stringify(bad)}: HOST:PORT or :PORT`,
      });
  });

  it('serves the webhook only when asked, with the certificate files where the Secret is mounted by default', () => {
    const run = (args: string[]) => readCommandLine([...base, ...args], env);
    expect(run([])).toMatchObject({ kind: 'run', settings: { webhook: undefined } });
    expect(run(['--webhook-bind-address', ':9443'])).toMatchObject({
      kind: 'run',
      settings: {
        webhook: {
          host: '',
          port: 9443,
          certFile: '/tmp/k8s-webhook-server/serving-certs/tls.crt',
          keyFile: '/tmp/k8s-webhook-server/serving-certs/tls.key',
        },
      },
    });
    expect(
      run(['--webhook-bind-address', '127.0.0.1:0', '--webhook-cert-file', '/c', '--webhook-key-file', '/k']),
    ).toMatchObject({ settings: { webhook: { host: '127.0.0.1', port: 0, certFile: '/c', keyFile: '/k' } } });
    expect(run(['--webhook-bind-address', '9443'])).toEqual({
      kind: 'invalid',
      problem: 'bad --webhook-bind-address "9443": HOST:PORT or :PORT',
    });
    expect(run(['--webhook-cert-file', '/c'])).toEqual({
      kind: 'invalid',
      problem: '--webhook-cert-file, --webhook-key-file and --annotation-writers need --webhook-bind-address',
    });
  });

  it('lets only the controller write the pod-eni annotation: its ServiceAccount by default, or the users given', () => {
    const run = (args: string[]) =>
      readCommandLine([...base, '--webhook-bind-address', ':9443', ...args], env);
    expect(run([])).toMatchObject({
      settings: {
        webhook: { annotationWriters: ['system:serviceaccount:kube-system:vpc-resource-controller'] },
      },
    });
    expect(
      run(['--annotation-writers', 'system:serviceaccount:ops:rc, eks:vpc-resource-controller']),
    ).toMatchObject({
      settings: {
        webhook: { annotationWriters: ['system:serviceaccount:ops:rc', 'eks:vpc-resource-controller'] },
      },
    });
    expect(run(['--annotation-writers', 'a,,b'])).toEqual({
      kind: 'invalid',
      problem: 'bad --annotation-writers "a,,b": comma-separated user names, none empty',
    });
  });

  it('refuses a leader-election flag given without --leader-elect (it would act without a lease)', () => {
    const run = (args: string[]) => readCommandLine([...base, ...args], env);
    for (const flag of ['--leader-election-namespace', '--leader-election-id', '--lease-duration']) {
      const value = flag === '--lease-duration' ? '15s' : 'x';
      expect(run([flag, value])).toEqual({ kind: 'invalid', problem: `${flag} needs --leader-elect` });
    }
    expect(run(['--leader-elect', '--lease-duration', '15s'])).toMatchObject({ kind: 'run' });
  });

  it('has the reference defaults: 60 s cooldown, no election, 8 at once; region from the environment', () => {
    const line = readCommandLine(base, env);
    expect(line).toMatchObject({
      kind: 'run',
      settings: {
        clusterName: 'c',
        region: 'us-west-2',
        cooldownMs: 60_000,
        concurrency: 8,
        leaderElection: undefined,
      },
    });
    const elect = readCommandLine([...base, '--leader-elect'], env);
    expect(elect.kind === 'run' && elect.settings.leaderElection).toMatchObject({
      namespace: 'kube-system',
      name: 'cp-vpc-resource-controller',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
  });

  it('refuses, with one line naming the flag: bad values, a missing region, election timings out of order', () => {
    const problem = (argv: string[], e: Record<string, string> = env) => {
      const line = readCommandLine(argv, e);
      return line.kind === 'invalid' ? line.problem : undefined;
    };
    expect(problem([...base, '--branch-eni-cooldown', 'soon'])).toMatch(/^bad --branch-eni-cooldown "soon"/);
    expect(problem([...base, '--branch-concurrency', '0'])).toMatch(/^bad --branch-concurrency "0"/);
    expect(problem([...base, '--log-level', 'loud'])).toBe(
      'bad --log-level "loud": debug, info, warn or error',
    );
    expect(problem([...base, '--log-level', 'INFO'])).toMatch(/^bad --log-level "INFO"/);
    expect(problem(base, {})).toBe('no region: pass --region or set AWS_REGION');
    expect(problem([...base, '--region', 'mars'])).toMatch(/^not an AWS region/);
    expect(problem([...base, '--ec2-endpoint', 'ftp://x'])).toMatch(
      /^--ec2-endpoint is not an http\(s\) URL/,
    );
    expect(problem([...base, '--leader-elect', '--renew-deadline', '20s'])).toBe(
      'leader election needs --retry-period < --renew-deadline < --lease-duration',
    );
    expect(problem(['--cluster-name', 'bad name'])).toMatch(/^bad --cluster-name/);
    expect(problem([...base, '--health-probe-bind-address', '61779'])).toMatch(
      /^bad --health-probe-bind-address/,
    );
    expect(problem([...base, '--health-probe-bind-address', ':70000'])).toMatch(
      /^bad --health-probe-bind-address/,
    );
    expect(problem([...base, 'extra'])).toMatch(/positional/i);
    // A negative value is about the value, however it is written (parseArgs alone calls `--flag -5s` ambiguous).
    for (const argv of [['--branch-eni-cooldown', '-5s'], ['--branch-eni-cooldown=-5s']])
      expect(problem([...base, ...argv])).toBe('bad --branch-eni-cooldown "-5s": must not be negative');
    expect(problem([...base, '--leader-elect', '--lease-duration', '-1'])).toBe(
      'bad --lease-duration "-1": must not be negative',
    );
    expect(problem([...base, '--branch-concurrency', '-2'])).toMatch(/^bad --branch-concurrency "-2"/);
    // Only a value that is a negative number is taken for one: a missing value is still refused as such.
    expect(problem([...base, '--region', '--leader-elect'])).toMatch(/ambiguous|argument missing/);
  });

  it('reads --log-level from the one list of levels, least severe first, and the logger keeps that order', () => {
    expect(LOG_LEVELS).toEqual(['debug', 'info', 'warn', 'error']);
    expect(USAGE).toContain('--log-level LEVEL              debug, info, warn or error (default info)\n');
    for (const level of LOG_LEVELS) {
      const line = readCommandLine([...base, '--log-level', level], env);
      expect(line.kind === 'run' ? line.settings.logLevel : line).toBe(level);
      const written: string[] = [];
      const log = jsonLogger(
        (l) => written.push(JSON.parse(l).level),
        level,
        () => 0,
      );
      for (const at of LOG_LEVELS) log.log(at, 'm');
      expect(written).toEqual(LOG_LEVELS.slice(LOG_LEVELS.indexOf(level)));
    }
  });
});
