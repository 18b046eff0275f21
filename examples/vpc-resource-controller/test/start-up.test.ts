/**
 * What `vpc-resource-controller` says at start when it has no usable Kubernetes configuration: one line naming
 * the missing piece (no cluster, no ServiceAccount mount, an unreadable kubeconfig and where its path came from),
 * and the in-cluster configuration it loads when the pieces are there (against kube-simulator).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KubeSimulator, startKubeSimulator } from '@vpc-cni-kit/kube-simulator';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from '../src/index.js';
import { KubeConfigError, kubeApis } from '../src/kube/apis.js';

const ARGS = ['--cluster-name', 'c', '--region', 'us-west-2', '--metrics-bind-address', '0'];
const dir = scratchDir('vpc-rc-start-up');
let sim: KubeSimulator;

beforeAll(async () => {
  sim = await startKubeSimulator();
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

async function start(env: Record<string, string>, argv: string[] = [], serviceAccountDir?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runProgram({
    argv: [...ARGS, ...argv],
    env,
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    onSignal: () => undefined,
    serviceAccountDir,
  });
  expect(stdout).toBe('');
  expect(stderr.trim().split('\n')).toHaveLength(1);
  return { code, line: stderr.trim() };
}

describe('vpc-resource-controller at start', () => {
  it('outside a pod and without a kubeconfig, says it is not in a cluster', async () => {
    expect(await start({})).toEqual({
      code: 1,
      line: 'vpc-resource-controller: not in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set) (hint: pass --kubeconfig or set KUBECONFIG)',
    });
  });

  it('in a pod without its ServiceAccount mounted, names what is missing and where', async () => {
    const sa = join(dir.path, 'sa-empty');
    mkdirSync(sa);
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1' };
    expect(await start(env, [], sa)).toEqual({
      code: 1,
      line: `vpc-resource-controller: ServiceAccount token and ca.crt missing in ${sa} (hint: mount the ServiceAccount token (automountServiceAccountToken: true), or pass --kubeconfig)`,
    });
    writeFileSync(join(sa, 'token'), 'x');
    expect((await start(env, [], sa)).line).toMatch(
      /^vpc-resource-controller: ServiceAccount ca\.crt missing in /,
    );
  });

  it('names the KUBECONFIG variable, or the --kubeconfig flag, whichever gave the unreadable file', async () => {
    const bad = join(dir.path, 'bad.yaml');
    const fromEnv = await start({ KUBECONFIG: bad });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.line).toBe(
      `vpc-resource-controller: cannot load the Kubernetes configuration from ${bad}: ENOENT (hint: check the file the KUBECONFIG environment variable names)`,
    );
    const fromFlag = await start({ KUBECONFIG: 'ignored' }, ['--kubeconfig', bad]);
    expect(fromFlag.line).toMatch(/\(hint: check the --kubeconfig path\)$/);
    const empty = join(dir.path, 'empty.yaml');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
    expect((await start({ KUBECONFIG: empty })).line).toMatch(
      /from .*empty\.yaml: its current context names no cluster with a server \(hint: check the file the KUBECONFIG/,
    );
  });

  it('loads the in-cluster configuration from the environment and the ServiceAccount mount', async () => {
    const sa = join(dir.path, 'sa');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), sim.adminToken);
    writeFileSync(join(sa, 'ca.crt'), sim.caPem!);
    const api = kubeApis(undefined, {
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(sim.port) },
      serviceAccountDir: sa,
    });
    expect(api.config.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${sim.port}`);
    expect((await api.core.listNamespace()).items.map((n) => n.metadata?.name)).toContain('default');
    expect(() => kubeApis(undefined, { env: {} })).toThrow(KubeConfigError);
  });
});
