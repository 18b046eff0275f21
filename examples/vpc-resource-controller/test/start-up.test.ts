/**
 * What `vpc-resource-controller` says at start when it has no usable Kubernetes configuration: one line naming
 * the missing piece (no cluster, no ServiceAccount mount, an unreadable kubeconfig and where its path came from),
 * and the in-cluster configuration it loads when the pieces are there (against kube-simulator).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fifoWithLateWriter } from '@vpc-cni-kit/testkit';
import { describe, expect, it } from 'vitest';
import { jsonLogger, runProgram, startController } from '../src/index.js';
import { KubeConfigError, kubeApis } from '../src/kube/apis.js';
import { kubeconfigList } from '../src/kube/kubeconfig.js';
import { simulatorForFile } from './support/simulator-file.js';

const ARGS = ['--cluster-name', 'c', '--region', 'us-west-2', '--metrics-bind-address', '0'];
const fixture = simulatorForFile('vpc-rc-start-up');
const { dir } = fixture;

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

  it('a FIFO in place of the token, the ca.crt or a kubeconfig: one line naming it, at once, not a start that hangs', async () => {
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(fixture.sim.port) };
    const hint =
      "(hint: the ServiceAccount's projected volume must hold the token and ca.crt as files the controller can read; check what is mounted over it, or pass --kubeconfig)";
    // The client read them with readFileSync on the event loop: a FIFO there held the process, its probe deadline
    // included, until a writer came (here after 3 s, so that a read that waits ends and fails the test).
    for (const [name, other, otherText] of [
      ['token', 'ca.crt', fixture.sim.caPem!],
      ['ca.crt', 'token', fixture.sim.adminToken],
    ] as const) {
      const sa = join(dir.path, `sa-fifo-${name}`);
      mkdirSync(sa);
      writeFileSync(join(sa, other), otherText);
      const fifo = fifoWithLateWriter(join(sa, name));
      try {
        const started = performance.now();
        expect(await start(env, [], sa)).toEqual({
          code: 1,
          line: `vpc-resource-controller: ServiceAccount ${name} ${fifo.path} is a FIFO, not a regular file ${hint}`,
        });
        expect(performance.now() - started).toBeLessThan(2000);
      } finally {
        fifo.stop();
      }
    }
    const kubeconfig = fifoWithLateWriter(join(dir.path, 'kubeconfig.fifo'));
    try {
      expect((await start({}, ['--kubeconfig', kubeconfig.path])).line).toBe(
        `vpc-resource-controller: cannot load the Kubernetes configuration from ${kubeconfig.path}: a FIFO, not a regular file (hint: check the --kubeconfig path)`,
      );
    } finally {
      kubeconfig.stop();
    }
    // A kubeconfig naming a FIFO as its CA: the client read that at the start's first request.
    const ca = fifoWithLateWriter(join(dir.path, 'ca.fifo'));
    const naming = join(dir.path, 'kubeconfig-ca-fifo.yaml');
    writeFileSync(
      naming,
      fixture.sim
        .kubeconfig()
        .replace(/certificate-authority-data: \S+/, `certificate-authority: ${ca.path}`),
    );
    try {
      expect((await start({}, ['--kubeconfig', naming])).line).toBe(
        `vpc-resource-controller: cannot load the Kubernetes configuration from ${naming}: certificate-authority ${ca.path} is a FIFO, not a regular file (hint: check the --kubeconfig path)`,
      );
    } finally {
      ca.stop();
    }
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
    writeFileSync(join(sa, 'token'), fixture.sim.adminToken);
    writeFileSync(join(sa, 'ca.crt'), fixture.sim.caPem!);
    const api = kubeApis(undefined, {
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(fixture.sim.port) },
      serviceAccountDir: sa,
    });
    expect(api.config.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${fixture.sim.port}`);
    expect((await api.core.listNamespace()).items.map((n) => n.metadata?.name)).toContain('default');
    expect(() => kubeApis(undefined, { env: {} })).toThrow(KubeConfigError);
  });

  describe('a KUBECONFIG list (kubectl: split at the path delimiter, merged, the first file wins per key)', () => {
    /** A file of the list: `yaml` under a unique name. */
    const file = (name: string, yaml: string) => {
      const path = join(dir.path, name);
      writeFileSync(path, yaml);
      return path;
    };
    /** The simulator's admin kubeconfig, its cluster, user and context all named `sim`. */
    const simConfig = () => fixture.sim.kubeconfig({ name: 'sim' });

    it('splits at the delimiter and drops empty entries', () => {
      expect(kubeconfigList(['', 'a', '', 'b', ''].join(delimiter))).toEqual(['a', 'b']);
      expect(kubeconfigList('a;b', ';')).toEqual(['a', 'b']);
      expect(kubeconfigList(delimiter)).toEqual([]);
      expect(kubeconfigList(undefined)).toEqual([]);
    });

    it('merges the files: a context from one, its cluster and user from another, and reaches the server', async () => {
      // The first file names only the current context; the second holds it all. kubectl merges them.
      const ctx = file('ctx-only.yaml', 'apiVersion: v1\nkind: Config\ncurrent-context: sim\n');
      const full = file('fixture.sim.yaml', simConfig());
      const api = kubeApis(kubeconfigList(['', ctx, '', full].join(delimiter)));
      expect(api.config.getCurrentCluster()?.server).toBe(fixture.sim.url);
      expect((await api.core.listNamespace()).items.map((n) => n.metadata?.name)).toContain('default');
    });

    it('keeps the first file that names a cluster, user or context, and the first current-context', async () => {
      // A later file with the same names but a dead server and a wrong token changes nothing.
      const wrong = simConfig()
        .replace(fixture.sim.url, 'https://127.0.0.1:1')
        .replace(fixture.sim.adminToken, 'not-the-token')
        .replace('current-context: sim', 'current-context: other');
      const good = file('first.yaml', simConfig());
      const later = file('later.yaml', wrong);
      const api = kubeApis([good, later]);
      expect(api.config.currentContext).toBe('sim');
      expect(api.config.getCurrentCluster()?.server).toBe(fixture.sim.url);
      expect(api.config.getCurrentUser()?.token).toBe(fixture.sim.adminToken);
      expect((await api.core.listNamespace()).items.length).toBeGreaterThan(0);
      // The other order: the dead server is the one kept.
      expect(kubeApis([later, good]).config.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
    });

    it('startController takes the list too, and refuses a bad one before it starts anything', async () => {
      const ctx = file('ctx-only-2.yaml', 'apiVersion: v1\nkind: Config\ncurrent-context: sim\n');
      const full = file('sim-2.yaml', simConfig());
      const options = {
        clusterName: 'c',
        region: 'us-west-2',
        ec2Endpoint: 'http://127.0.0.1:1',
        ec2Credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
        cooldownMs: 0,
        log: jsonLogger(() => undefined),
      };
      const missing = join(dir.path, 'no-such-2.yaml');
      await expect(startController({ ...options, kubeconfig: [full, missing] })).rejects.toThrow(
        new KubeConfigError('KubeconfigUnreadable', `${missing}: ENOENT`),
      );
      const controller = await startController({ ...options, kubeconfig: [ctx, full] });
      try {
        expect(controller.active()).toBe(true);
      } finally {
        await controller.stop();
      }
    });

    it('a missing file in the list is one line naming it, with the KUBECONFIG hint', async () => {
      const good = file('good.yaml', simConfig());
      const missing = join(dir.path, 'no-such.yaml');
      expect(await start({ KUBECONFIG: [good, missing].join(delimiter) })).toEqual({
        code: 1,
        line: `vpc-resource-controller: cannot load the Kubernetes configuration from ${missing}: ENOENT (hint: check the file the KUBECONFIG environment variable names)`,
      });
    });

    it('a malformed file in the list is one line naming it and what is wrong', async () => {
      const good = file('good2.yaml', simConfig());
      const broken = file('broken.yaml', 'clusters: [\n');
      const scalar = file('scalar.yaml', 'just words\n');
      const noName = file('no-name.yaml', 'clusters:\n- cluster: {server: "https://x:1"}\n');
      const env = (bad: string) => ({ KUBECONFIG: [good, bad].join(delimiter) });
      const broke = await start(env(broken));
      expect(broke.code).toBe(1);
      expect(broke.line).toMatch(
        new RegExp(
          `^vpc-resource-controller: cannot load the Kubernetes configuration from ${broken}: \\S.* \\(hint: check the file the KUBECONFIG environment variable names\\)$`,
        ),
      );
      expect((await start(env(scalar))).line).toContain(
        `from ${scalar}: not a kubeconfig (no YAML mapping with clusters, users and contexts) (hint: `,
      );
      expect((await start(env(noName))).line).toContain(
        `from ${noName}: clusters[0].name is missing (hint: `,
      );
      expect(() => kubeApis([good, broken])).toThrow(KubeConfigError);
    });

    it('files that together name no cluster with a server are named as the list', async () => {
      const a = file('empty-a.yaml', 'apiVersion: v1\nkind: Config\n');
      const b = file('empty-b.yaml', 'apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n');
      expect((await start({ KUBECONFIG: [a, b].join(delimiter) })).line).toBe(
        `vpc-resource-controller: cannot load the Kubernetes configuration from ${a}${delimiter}${b}: its current context names no cluster with a server (hint: check the file the KUBECONFIG environment variable names)`,
      );
    });

    it('a KUBECONFIG of only delimiters is no kubeconfig: in-cluster', async () => {
      expect((await start({ KUBECONFIG: `${delimiter}${delimiter}` })).line).toMatch(/: not in a cluster /);
    });

    it('--kubeconfig is one path, not a list', async () => {
      const good = file('good3.yaml', simConfig());
      const both = `${good}${delimiter}${good}`;
      expect((await start({}, ['--kubeconfig', both])).line).toBe(
        `vpc-resource-controller: cannot load the Kubernetes configuration from ${both}: ENOENT (hint: check the --kubeconfig path)`,
      );
    });
  });
});
