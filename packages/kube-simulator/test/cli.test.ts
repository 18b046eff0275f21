import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../src/index.js';

const dir = scratchDir('vck-kubesim-cli-');
afterAll(() => dir.remove());

function io() {
  const out: string[] = [];
  const err: string[] = [];
  let stop: (() => void) | undefined;
  const value: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    onStop: (h) => (stop = h),
    version: '9.9.9',
  };
  return { value, out, err, stop: () => stop?.() };
}

describe('kube-sim CLI', () => {
  it('prints help and version', async () => {
    const a = io();
    expect(await runCli(['--help'], a.value)).toBe(0);
    expect(a.out[0]).toMatch(/^usage: kube-sim serve --kubeconfig FILE/);
    const b = io();
    expect(await runCli(['--version'], b.value)).toBe(0);
    expect(b.out).toEqual(['9.9.9']);
  });

  it('refuses unknown arguments and missing options with exit 2 and one line', async () => {
    for (const argv of [
      ['serve', '--bogus'],
      ['serve'],
      ['run', '--kubeconfig', 'x'],
      ['serve', '--kubeconfig', 'x', '--port', '70000'],
      ['serve', '--kubeconfig', 'x', '--tls', '--plain-http'],
      ['serve', '--kubeconfig', 'x', '--webhook-service', 'hooks=127.0.0.1:9443'],
      ['serve', '--kubeconfig', 'x', '--webhook-service', 'webhooks/hooks=127.0.0.1:99999'],
    ]) {
      const c = io();
      expect(await runCli(argv, c.value), argv.join(' ')).toBe(2);
      expect(c.err).toHaveLength(1);
      expect(c.err[0]).toMatch(/^kube-sim: /);
    }
  });

  it('says what is wrong with a negative port, however it is written', async () => {
    for (const argv of [
      ['serve', '--kubeconfig', 'x', '--port', '-1'],
      ['serve', '--kubeconfig', 'x', '--port=-1'],
    ]) {
      const c = io();
      expect(await runCli(argv, c.value), argv.join(' ')).toBe(2);
      expect(c.err).toEqual(['kube-sim: --port -1 is not a port number (0-65535)']);
    }
  });

  it('--webhook-service maps an admission webhook Service to an address', async () => {
    const file = join(dir.path, 'kc-webhook.yaml');
    const c = io();
    const done = runCli(
      ['serve', '--kubeconfig', file, '--webhook-service', 'webhooks/mapped=127.0.0.1:1'],
      c.value,
    );
    while (c.out.length === 0) await new Promise((r) => setTimeout(r, 10));
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const hook = (name: string) => ({
      name: `${name}.test.io`,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      clientConfig: { service: { namespace: 'webhooks', name, path: '/m' } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    });
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const message = async (name: string) => {
      await admission.createMutatingWebhookConfiguration({
        body: { metadata: { name }, webhooks: [hook(name)] },
      });
      try {
        await core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: `cm-${name}` } },
        });
        return 'created';
      } catch (e) {
        return String((JSON.parse((e as { body: string }).body) as { message: string }).message);
      } finally {
        await admission.deleteMutatingWebhookConfiguration({ name });
      }
    };
    // Mapped: dialled at the address given (nothing listens there); not mapped: unreachable.
    expect(await message('mapped')).toContain('connect: connection refused');
    expect(await message('unmapped')).toContain('has no endpoint the simulator can reach');
    c.stop();
    expect(await done).toBe(0);
  });

  it('serves until stopped and writes a kubeconfig', async () => {
    const file = join(dir.path, 'kc.yaml');
    const c = io();
    const done = runCli(['serve', '--kubeconfig', file], c.value);
    while (c.out.length === 0) await new Promise((r) => setTimeout(r, 10));
    const { url } = JSON.parse(c.out[0]!) as { url: string };
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(readFileSync(file, 'utf8')).toContain(`server: "${url}"`);
    c.stop();
    expect(await done).toBe(0);
  });

  beforeAll(async () => {
    mkdirSync(join(dir.path, 'pkg', 'dist'), { recursive: true });
    copyFileSync(join(import.meta.dirname, '..', 'package.json'), join(dir.path, 'pkg', 'package.json'));
    await build({
      config: false,
      entry: { cli: join(import.meta.dirname, '..', 'src', 'cli.ts') },
      outDir: join(dir.path, 'pkg', 'dist'),
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      silent: true,
      dts: false,
    });
  }, 60_000);

  it('runs as a process and exits cleanly on SIGTERM', async () => {
    const file = join(dir.path, 'proc.yaml');
    const child = spawn(
      process.execPath,
      [join(dir.path, 'pkg', 'dist', 'cli.js'), 'serve', '--plain-http', '--kubeconfig', file],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(d.toString()));
      child.once('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    expect(JSON.parse(line).url).toMatch(/^http:\/\//);
    expect(existsSync(file)).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(0);
  });
});
