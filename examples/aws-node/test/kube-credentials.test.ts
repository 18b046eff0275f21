/**
 * The ServiceAccount's files at start: a CA file that is not PEM certificates is a reason not to use the API
 * (found at start, not at every TLS handshake), and a setting that needs the API names that reason.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { fifoWithLateWriter, scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { describeStartFailure } from '../src/cli/start-failure.js';
import { loadConfig } from '../src/config/config.js';
import type { KubeSettings } from '../src/config/kube-settings.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { silentLogger } from '../src/daemon/logger.js';
import { isStartError } from '../src/daemon/start-error.js';
import { resolveInCluster } from '../src/kube/in-cluster.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
const serviceAccount = (files: Record<string, string>) => {
  const d = scratchDir('vck-sa-');
  dirs.push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d.path, name), text);
  return d.path;
};
const settings = (serviceAccountDir: string): KubeSettings => ({
  apiServer: 'https://127.0.0.1:6443',
  serviceAccountDir,
  nodeName: 'n',
  podName: '',
  podNamespace: 'kube-system',
  annotatePodIp: false,
});

describe('resolveInCluster: ca.crt', () => {
  it('takes one certificate or a bundle of them', async () => {
    const a = await selfSignedCertificate();
    const b = await selfSignedCertificate();
    for (const ca of [a.cert, `${a.cert}\n${b.cert}`]) {
      const t = await resolveInCluster(settings(serviceAccount({ token: 't', 'ca.crt': ca })));
      expect(t).toMatchObject({ server: 'https://127.0.0.1:6443', caPem: ca });
    }
  });

  it.each([
    ['garbage', 'not a certificate at all', /ca\.crt in .* holds no PEM certificate/],
    ['an empty file', '', /ca\.crt in .* holds no PEM certificate/],
    [
      'a broken certificate',
      '-----BEGIN CERTIFICATE-----\nTUlJQm9u\n-----END CERTIFICATE-----\n',
      /ca\.crt in .* holds a certificate that does not parse \(number 1: .+\)/,
    ],
  ])('refuses %s with the reason', async (_, ca, why) => {
    const t = await resolveInCluster(settings(serviceAccount({ token: 't', 'ca.crt': ca })));
    expect(t).toEqual({ reason: expect.stringMatching(why) });
  });
});

describe('resolveInCluster: only regular files', () => {
  it.each(['token', 'ca.crt'])('a FIFO as %s is the reason, named at once, never waited on', async (name) => {
    const ca = (await selfSignedCertificate()).cert;
    const dir = serviceAccount(name === 'token' ? { 'ca.crt': ca } : { token: 't' });
    // A plain read waited for a writer: here one comes after 3 s, so such a read ends (and fails the test).
    const fifo = fifoWithLateWriter(join(dir, name));
    try {
      const started = performance.now();
      expect(await resolveInCluster(settings(dir))).toEqual({
        reason: `ServiceAccount ${fifo.path} is a FIFO, not a regular file`,
      });
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      fifo.stop();
    }
  });
});

describe('a setting that needs the API names why the API cannot be used', () => {
  const env = (dir: string, extra: Record<string, string>) => ({
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    MY_NODE_NAME: 'n',
    AWS_NODE_SERVICE_ACCOUNT_DIR: dir,
    AWS_VPC_K8S_CNI_BACKING_STORE: join(dir, 'ipam.json'),
    ...extra,
  });

  it.each([
    [{ ENABLE_POD_ENI: 'true' }, "ENABLE_POD_ENI=true needs the Kubernetes API (each pod's"],
    [
      { AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: 'true' },
      'AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG=true needs the Kubernetes API (ENIConfigs)',
    ],
  ])('%j without ServiceAccount files: the ENOENT, not "not in a cluster"', async (extra, setting) => {
    const dir = serviceAccount({});
    const error = await startDaemon(loadConfig(env(dir, extra)), {
      log: silentLogger,
      version: 'test',
    }).catch((e: unknown) => e);
    expect(isStartError(error, 'KubeRequired')).toBe(true);
    const line = `aws-node: ${describeStartFailure(error, { imdsEndpoint: undefined })}`;
    expect(line.startsWith(`aws-node: failed to start: ${setting}`)).toBe(true);
    expect(
      line.endsWith(
        `), which cannot be used: ServiceAccount credentials unreadable in ${dir}: ENOENT; mount the ServiceAccount token and ca.crt there (automountServiceAccountToken) or set AWS_NODE_SERVICE_ACCOUNT_DIR`,
      ),
    ).toBe(true);
    expect(line).not.toContain('run in a cluster');
  });

  it('with a FIFO as the token: one line naming it, within seconds, not a start that hangs', async () => {
    const dir = serviceAccount({ 'ca.crt': (await selfSignedCertificate()).cert });
    const fifo = fifoWithLateWriter(join(dir, 'token'));
    try {
      const started = performance.now();
      const error = await startDaemon(loadConfig(env(dir, { ENABLE_POD_ENI: 'true' })), {
        log: silentLogger,
        version: 'test',
      }).catch((e: unknown) => e);
      expect(describeStartFailure(error, { imdsEndpoint: undefined })).toBe(
        `failed to start: ENABLE_POD_ENI=true needs the Kubernetes API (each pod's vpc.amazonaws.com/pod-eni annotation), which cannot be used: ServiceAccount ${fifo.path} is a FIFO, not a regular file; mount the ServiceAccount token and ca.crt there (automountServiceAccountToken) or set AWS_NODE_SERVICE_ACCOUNT_DIR`,
      );
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      fifo.stop();
    }
  });

  it('with a garbage ca.crt: the CA named', async () => {
    const dir = serviceAccount({ token: 't', 'ca.crt': 'garbage' });
    const error = await startDaemon(loadConfig(env(dir, { ENABLE_POD_ENI: 'true' })), {
      log: silentLogger,
      version: 'test',
    }).catch((e: unknown) => e);
    expect(describeStartFailure(error, { imdsEndpoint: undefined })).toContain(
      `which cannot be used: ServiceAccount ca.crt in ${dir} holds no PEM certificate`,
    );
  });
});
