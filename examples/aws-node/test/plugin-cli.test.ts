/**
 * aws-cni and egress-cni as the build ships them (the launchers, `*.cjs`, and the single executables), run as
 * an operator or a runtime runs them, with a deadline: by hand they say what they are (as plugins built on the
 * CNI project's Go skeleton do); a log path the filesystem refuses costs only the log lines, never a hang. Each request fails before anything on the host is touched (no daemon behind the
 * socket; no IPAM plugin on CNI_PATH), so this runs unprivileged.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_STDIN_BYTES } from '@vpc-cni-kit/cni-spec';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const binDir = fileURLToPath(new URL('../dist/bin', import.meta.url));
const dir = scratchDir('vck-plugincli-');
afterAll(() => dir.remove());

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Why writing stdin failed (`EPIPE`: the plugin exited without reading all of it), if it did. */
  stdinError: string | undefined;
}

/** Runs a plugin binary with `env` (plus PATH, for the launchers' node) and `stdin`, killed after 15 s. */
function runPlugin(
  bin: string,
  env: Record<string, string>,
  stdin: string | Buffer = '',
  args: string[] = [],
): Promise<Outcome> {
  let stdinError: string | undefined;
  return new Promise((resolve) => {
    const child = execFile(
      join(binDir, bin),
      args,
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, timeout: 15_000, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          stdout,
          stderr,
          stdinError,
        }),
    );
    child.stdin?.on('error', (e: NodeJS.ErrnoException) => {
      stdinError = e.code;
    });
    child.stdin?.end(stdin);
  });
}

const request = { CNI_NETNS: '/x', CNI_CONTAINERID: 'abc', CNI_IFNAME: 'eth0', CNI_PATH: '/x' };

beforeAll(() => {
  for (const bin of ['aws-cni', 'aws-cni.cjs', 'egress-cni', 'egress-cni.cjs'])
    if (!existsSync(join(binDir, bin))) throw new Error(`build first: ${join(binDir, bin)} is missing`);
});

describe('a pluginLogFile under /proc (where a recursive mkdir never returns)', () => {
  it('aws-cni answers ADD with its CNI error within the deadline, as for any unwritable log path', async () => {
    for (const bin of ['aws-cni.cjs', 'aws-cni']) {
      for (const pluginLogFile of ['/proc/vck-nope/plugin.log', '/sys/vck-nope/plugin.log']) {
        const conf = {
          cniVersion: '1.0.0',
          name: 'aws-cni',
          type: 'aws-cni',
          ipamdSocket: join(dir.path, 'no-daemon.sock'),
          pluginLogFile,
          pluginLogLevel: 'Debug',
        };
        const o = await runPlugin(bin, { ...request, CNI_COMMAND: 'ADD' }, JSON.stringify(conf));
        expect(o.signal, `${bin} ${pluginLogFile}: killed at the deadline`).toBeNull();
        expect(o.code).toBe(1);
        expect(JSON.parse(o.stdout)).toMatchObject({
          code: 11,
          msg: `add: aws-node is not reachable at ${conf.ipamdSocket}`,
        });
      }
    }
  });

  it('egress-cni answers ADD with its CNI error within the deadline', async () => {
    const conf = {
      cniVersion: '1.0.0',
      name: 'aws-cni',
      type: 'egress-cni',
      enabled: 'true',
      mtu: '9001',
      nodeIP: '10.0.0.1',
      ipam: { type: 'host-local', ranges: [[{ subnet: '169.254.172.0/22' }]] },
      pluginLogFile: '/proc/vck-nope/egress-plugin.log',
      pluginLogLevel: 'debug',
      prevResult: {
        cniVersion: '1.0.0',
        interfaces: [{ name: 'eth0', sandbox: '/x' }],
        ips: [{ address: '10.0.0.5/32', interface: 0 }],
      },
    };
    for (const bin of ['egress-cni.cjs', 'egress-cni']) {
      const o = await runPlugin(bin, { ...request, CNI_COMMAND: 'ADD' }, JSON.stringify(conf));
      expect(o.signal, `${bin}: killed at the deadline`).toBeNull();
      expect(o.code).toBe(1);
      expect(JSON.parse(o.stdout)).toMatchObject({ msg: 'failed to find plugin "host-local" in path [/x]' });
    }
  });
});

describe('a pluginLogFile that is no file', () => {
  const conf = (pluginLogFile: string) =>
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'aws-cni',
      type: 'aws-cni',
      ipamdSocket: join(dir.path, 'no-daemon.sock'),
      pluginLogFile,
      pluginLogLevel: 'debug',
    });

  it('a path of standard output logs to stderr: stdout holds only the CNI answer', async () => {
    for (const pluginLogFile of ['/dev/stdout', '/dev/fd/1', '/proc/self/fd/1']) {
      const o = await runPlugin('aws-cni.cjs', { ...request, CNI_COMMAND: 'ADD' }, conf(pluginLogFile));
      expect(o.code).toBe(1);
      expect(JSON.parse(o.stdout), pluginLogFile).toMatchObject({ code: 11 });
      expect(o.stderr).toContain('"msg":"Received CNI add request"');
    }
  });

  it('a FIFO nobody reads costs the log lines, never a hang', async () => {
    const fifo = join(dir.path, 'plugin.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const bin of ['aws-cni.cjs', 'aws-cni']) {
      const o = await runPlugin(bin, { ...request, CNI_COMMAND: 'ADD' }, conf(fifo));
      expect(o.signal, `${bin}: killed at the deadline`).toBeNull();
      expect(JSON.parse(o.stdout)).toMatchObject({ code: 11 });
    }
  });
});

describe('stdin larger than any runtime sends', () => {
  it('aws-cni stops reading at the limit and answers code 5, for ADD and DEL alike', async () => {
    // A valid request padded with spaces to 8 MiB past the limit: read whole, it would go on to the daemon (code 11).
    const config = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'aws-cni',
      type: 'aws-cni',
      ipamdSocket: join(dir.path, 'no-daemon.sock'),
    });
    const stdin = Buffer.alloc(MAX_STDIN_BYTES + 8 * 1024 * 1024, ' ');
    stdin.write(config);
    for (const bin of ['aws-cni.cjs', 'aws-cni']) {
      for (const command of ['ADD', 'DEL']) {
        const o = await runPlugin(bin, { ...request, CNI_COMMAND: command }, stdin);
        expect(o.signal, `${bin}: killed at the deadline`).toBeNull();
        expect(o.code).toBe(1);
        expect(JSON.parse(o.stdout)).toMatchObject({
          code: 5,
          msg: `stdin is larger than ${MAX_STDIN_BYTES} bytes`,
        });
        // It exited with megabytes still unread: the writer's pipe broke.
        expect(o.stdinError, `${bin} ${command}`).toBe('EPIPE');
      }
    }
  });
});

describe('CNI_ARGS', () => {
  const conf = (dir: string) =>
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'aws-cni',
      type: 'aws-cni',
      ipamdSocket: join(dir, 'no-daemon.sock'),
    });
  /** Runs `bin` with `CNI_ARGS` and expects it refused with code 4 and `msg`. */
  async function refused(bin: string, command: string, args: string, msg: string) {
    const o = await runPlugin(bin, { ...request, CNI_COMMAND: command, CNI_ARGS: args }, conf(dir.path));
    expect(o.code).toBe(1);
    expect(JSON.parse(o.stdout)).toEqual({ code: 4, msg });
  }

  it('aws-cni refuses a key it does not know (code 4) unless IgnoreUnknown is set, as the reference', async () => {
    for (const bin of ['aws-cni.cjs', 'aws-cni']) {
      await refused(
        bin,
        'ADD',
        'K8S_POD_NAME=p;K8S_POD_NAMSPACE=default',
        'CNI_ARGS: unknown key "K8S_POD_NAMSPACE"',
      );
      // What containerd sends goes on to the daemon (absent here: code 11).
      const sent = await runPlugin(
        bin,
        {
          ...request,
          CNI_COMMAND: 'ADD',
          CNI_ARGS:
            'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u;FOO=bar',
        },
        conf(dir.path),
      );
      expect(JSON.parse(sent.stdout)).toMatchObject({ code: 11 });
    }
  });

  it('a key given twice with different values is code 4 (which pod was meant cannot be told)', async () => {
    await refused(
      'aws-cni.cjs',
      'DEL',
      'IgnoreUnknown=1;K8S_POD_NAME=a;K8S_POD_NAME=b',
      'CNI_ARGS: "K8S_POD_NAME" given twice with different values',
    );
  });
});

describe('run by hand', () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const versions = 'CNI protocol versions supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0\n';
  const about: Record<string, string> = {
    'aws-cni': `aws-cni: AWS VPC CNI plugin (vpc-cni-kit) ${version}\n${versions}`,
    'egress-cni': `egress-cni: IPv4/IPv6 egress for AWS VPC CNI pods (vpc-cni-kit) ${version}\n${versions}`,
  };

  it('without CNI_COMMAND, or with --help/--version: the name, our version and the CNI versions on stderr, exit 0', async () => {
    for (const name of ['aws-cni', 'egress-cni']) {
      for (const bin of [`${name}.cjs`, name]) {
        for (const [env, args] of [
          [{}, []],
          [{}, ['--version']],
          [{}, ['--help']],
          [{ CNI_COMMAND: 'ADD' }, ['--version']],
          [{ CNI_COMMAND: 'DEL', ...request }, ['-h']],
        ] as const) {
          const o = await runPlugin(bin, env, '', [...args]);
          expect({ bin, args, ...o }).toEqual({
            bin,
            args,
            code: 0,
            signal: null,
            stdout: '',
            stderr: about[name],
          });
        }
      }
    }
  });
});
