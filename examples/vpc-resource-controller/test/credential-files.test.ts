/**
 * The Kubernetes credential files after start (ADR 0041): the controller, not the client, re-reads the
 * ServiceAccount token and CA (and a kubeconfig's CA and token file), only as regular files. A FIFO swapped in
 * after the client was built neither freezes the process nor breaks its requests: the content read before stays,
 * the re-read is reported, and a rotated regular file is used from the next re-read. Against kube-simulator.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { selfSignedCertificate } from '@vpc-cni-kit/kube-simulator';
import { fifoWithLateWriter } from '@vpc-cni-kit/testkit';
import { describe, expect, it } from 'vitest';
import { reportCredentialFiles } from '../src/controller/credential-report.js';
import { ControllerMetrics, jsonLogger } from '../src/index.js';
import { httpStatus, type KubeApis, KubeConfigError, kubeApis } from '../src/kube/apis.js';
import type { CredentialFileEvent } from '../src/kube/credential-file.js';
import { simulatorForFile } from './support/simulator-file.js';

const fixture = simulatorForFile('vpc-rc-credentials');
const { dir } = fixture;

/** Writes `text` at `path` as the kubelet does: a new file renamed over whatever is there (a FIFO too). */
function replace(path: string, text: string): void {
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
}

/** A ServiceAccount mount holding the simulator's admin token and CA. */
function serviceAccount(name: string): string {
  const sa = join(dir.path, name);
  mkdirSync(sa);
  writeFileSync(join(sa, 'token'), fixture.sim.adminToken);
  writeFileSync(join(sa, 'ca.crt'), fixture.sim.caPem!);
  return sa;
}

/** A clock the test moves, and the client built on it with the default one-minute re-read period. */
function inCluster(sa: string) {
  const clock = { ms: 1_000_000 };
  const events: CredentialFileEvent[] = [];
  const api = kubeApis(
    undefined,
    {
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(fixture.sim.port) },
      serviceAccountDir: sa,
    },
    { now: () => clock.ms, onEvent: (e) => events.push(e) },
  );
  return { api, events, nextPeriod: () => (clock.ms += 60_000) };
}

/** One API request; its namespaces, or the HTTP status (0: no answer, a TLS failure for one). */
async function request(api: KubeApis): Promise<string[] | number> {
  try {
    return (await api.core.listNamespace()).items.map((n) => n.metadata?.name ?? '');
  } catch (e) {
    return httpStatus(e);
  }
}

/** Runs `during` with a FIFO in place of the file at `path` (its writer would come after 5 s), left there. */
async function whileFifo<T>(path: string, during: () => Promise<T>): Promise<T> {
  rmSync(path);
  const fifo = fifoWithLateWriter(path, 5000);
  try {
    return await during();
  } finally {
    fifo.stop();
  }
}

/** `run` takes less than `ms`: nothing waited on a FIFO (its writer comes after 5 s). */
async function quickly<T>(run: () => Promise<T>, ms = 2000): Promise<T> {
  const started = performance.now();
  const out = await run();
  expect(performance.now() - started).toBeLessThan(ms);
  return out;
}

describe('Kubernetes credential files after start', () => {
  it('a FIFO in place of the token: requests go on with the token read before, reported once; a rotated token is used', async () => {
    const sa = serviceAccount('token-fifo');
    const { api, events, nextPeriod } = inCluster(sa);
    expect(await request(api)).toContain('default');
    const token = join(sa, 'token');
    await whileFifo(token, async () => {
      // The client re-read the token every 60 s with readFileSync, which waited here for a writer.
      nextPeriod();
      expect(await quickly(() => request(api))).toContain('default');
      nextPeriod();
      expect(await quickly(() => request(api))).toContain('default');
      const problem = `${token} is a FIFO, not a regular file`;
      expect(events).toEqual([
        { kind: 'kept', role: 'token', path: token, problem, first: true },
        { kind: 'kept', role: 'token', path: token, problem, first: false },
      ]);
      // Within a period nothing is read again.
      expect(await request(api)).toContain('default');
      expect(events).toHaveLength(2);
    });
    // The kubelet writes a new token: used from the next re-read (this one has no rights: 403).
    fixture.sim.objects.create('v1', 'serviceaccounts', {
      metadata: { name: 'nobody', namespace: 'default' },
    } as never);
    replace(token, fixture.sim.mintServiceAccountToken('default', 'nobody'));
    expect(await request(api)).toContain('default');
    nextPeriod();
    expect(await request(api)).toBe(403);
    expect(events.at(-1)).toEqual({ kind: 'recovered', role: 'token', path: token });
  });

  it('a FIFO in place of ca.crt: requests go on with the CA read before; a rotated CA is used', async () => {
    const sa = serviceAccount('ca-fifo');
    const { api, events, nextPeriod } = inCluster(sa);
    expect(await request(api)).toContain('default');
    const ca = join(sa, 'ca.crt');
    await whileFifo(ca, async () => {
      // The client read the CA at every request with readFileSync.
      expect(await quickly(() => request(api))).toContain('default');
      nextPeriod();
      expect(await quickly(() => request(api))).toContain('default');
      expect(events).toEqual([
        {
          kind: 'kept',
          role: 'certificate-authority',
          path: ca,
          problem: `${ca} is a FIFO, not a regular file`,
          first: true,
        },
      ]);
    });
    // A rotated CA (here one that did not sign the server: the next request fails its TLS) is read at the next
    // period, and the right one again after that.
    replace(ca, (await selfSignedCertificate()).cert);
    nextPeriod();
    expect(await request(api)).toBe(0);
    expect(events.at(-1)).toEqual({ kind: 'recovered', role: 'certificate-authority', path: ca });
    replace(ca, fixture.sim.caPem!);
    nextPeriod();
    expect(await request(api)).toContain('default');
  });

  it("a kubeconfig's certificate-authority and token-file: read by the controller, a FIFO refused at load", async () => {
    const base = join(dir.path, 'kubeconfig-files');
    mkdirSync(base);
    writeFileSync(join(base, 'ca.pem'), fixture.sim.caPem!);
    writeFileSync(join(base, 'token'), fixture.sim.adminToken);
    const token = join(base, 'token');
    const yaml = (ca: string, token: string) =>
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: sim',
        'contexts: [{name: sim, context: {cluster: sim, user: sim}}]',
        `clusters: [{name: sim, cluster: {server: "${fixture.sim.url}", certificate-authority: ${ca}}}]`,
        `users: [{name: sim, user: {token-file: ${token}}}]`,
        '',
      ].join('\n');
    // A relative path, against the kubeconfig's directory (as kubectl reads it).
    const kubeconfig = join(base, 'config');
    writeFileSync(kubeconfig, yaml('ca.pem', token));
    const api = kubeApis(kubeconfig);
    expect(api.config.getCurrentUser()?.token).toBe(fixture.sim.adminToken);
    expect(await request(api)).toContain('default');
    const ca = join(base, 'ca.pem');
    await whileFifo(ca, async () => {
      expect(await quickly(() => request(api))).toContain('default');
      // At load, a FIFO as the CA or as the token file is one error naming it, at once.
      expect(() => kubeApis(kubeconfig)).toThrow(
        new KubeConfigError(
          'KubeconfigUnreadable',
          `${kubeconfig}: certificate-authority ${ca} is a FIFO, not a regular file`,
        ),
      );
    });
    replace(ca, fixture.sim.caPem!);
    await whileFifo(token, async () =>
      expect(() => kubeApis(kubeconfig)).toThrow(
        new KubeConfigError(
          'KubeconfigUnreadable',
          `${kubeconfig}: token-file ${token} is a FIFO, not a regular file`,
        ),
      ),
    );
    // A token file's surrounding white space is not part of the token (client-go trims it too).
    replace(token, `${fixture.sim.adminToken}\n`);
    expect(kubeApis(kubeconfig).config.getCurrentUser()?.token).toBe(fixture.sim.adminToken);
  });

  it('the program reports a kept re-read once as a warning with a hint, counts each, and says when it recovers', async () => {
    const lines: string[] = [];
    const metrics = new ControllerMetrics();
    const report = reportCredentialFiles(
      jsonLogger(
        (l) => lines.push(l),
        'info',
        () => 0,
      ),
      metrics,
    );
    const kept = {
      kind: 'kept',
      role: 'token',
      path: '/sa/token',
      problem: '/sa/token is a FIFO, not a regular file',
    } as const;
    report({ ...kept, first: true });
    report({ ...kept, first: false });
    report({ kind: 'recovered', role: 'token', path: '/sa/token' });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        level: 'warn',
        ts: '1970-01-01T00:00:00.000Z',
        msg: 'Kubernetes credential file not re-read; using the one read before',
        file: 'token',
        path: '/sa/token',
        problem: '/sa/token is a FIFO, not a regular file',
        hint: expect.stringMatching(/^the kubelet writes the ServiceAccount token as a regular file: /),
      },
      {
        level: 'info',
        ts: '1970-01-01T00:00:00.000Z',
        msg: 'Kubernetes credential file readable again',
        file: 'token',
        path: '/sa/token',
      },
    ]);
    expect(await metrics.registry.metrics()).toContain(
      'kube_credential_file_reread_refused_total{file="token"} 2',
    );
  });
});
