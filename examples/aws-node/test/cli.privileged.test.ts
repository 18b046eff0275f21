/**
 * The daemon's and the init step's command lines and start-up failures, as an operator meets them off a
 * real node: each is a clear line on stderr and a non-zero exit within seconds, and the node (a namespace
 * this test creates) is exactly as it was: links, addresses, routes, rules, iptables, nftables, sysctls, and
 * no checkpoint, socket, conflist or plugin written.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createNamespaces,
  describePrivileged,
  inNs,
  run,
  scratchDir,
  uniqueName,
} from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';

const binDir = fileURLToPath(new URL('../dist/bin', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `node <bin> ...args` inside `ns` with only `env` (plus PATH). */
function runIn(ns: string, bin: string, args: string[], env: Record<string, string>): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      'nsenter',
      [`--net=/var/run/netns/${ns}`, '--', process.execPath, join(binDir, bin), ...args],
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr, ms: performance.now() - started });
      },
    );
  });
}

/** Everything a start could change in a namespace. */
function nodeState(ns: string): string {
  const sysctls = ['net/ipv4/ip_forward', 'net/ipv4/conf/all/rp_filter', 'net/ipv4/tcp_early_demux'].map(
    (k) => `${k}=${inNs(ns, 'cat', `/proc/sys/${k}`).trim()}`,
  );
  return [
    inNs(ns, 'ip', '-d', 'link', 'show'),
    inNs(ns, 'ip', 'addr', 'show'),
    inNs(ns, 'ip', 'route', 'show', 'table', 'all'),
    inNs(ns, 'ip', 'rule', 'show'),
    inNs(ns, 'iptables-save')
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n'),
    inNs(ns, 'nft', 'list', 'ruleset'),
    ...sysctls,
  ].join('\n');
}

/** A "node" for the daemon: its files in a scratch directory, reached through the environment. */
function nodeEnv(dir: string): Record<string, string> {
  return {
    AWS_VPC_K8S_CNI_LOG_FILE: join(dir, 'log', 'ipamd.log'),
    AWS_VPC_K8S_CNI_BACKING_STORE: join(dir, 'run', 'ipam.json'),
    AWS_NODE_IPAMD_SOCKET: join(dir, 'run', 'ipamd.sock'),
    HOST_CNI_BIN_PATH: join(dir, 'bin'),
    HOST_CNI_CONFDIR_PATH: join(dir, 'net.d'),
    AWS_NODE_METRICS_BIND_ADDRESS: '127.0.0.1:0',
    INTROSPECTION_BIND_ADDRESS: '127.0.0.1:0',
  };
}

describePrivileged('aws-node and aws-vpc-cni-init: hostile command lines and start-up', () => {
  // `bare`: loopback only, no route to IMDS. `dropping`: a default route to a peer namespace that silently
  // drops everything not addressed to it (forwarding off), as a network that blackholes 169.254.169.254.
  const bare = uniqueName('i19cb');
  const dropping = uniqueName('i19cd');
  const peer = uniqueName('i19cp');
  let removeNamespaces: () => void = () => {};
  const scratch = scratchDir('vck-cli-');

  beforeAll(() => {
    if (!existsSync(join(binDir, 'aws-node.cjs')))
      throw new Error(`build first: ${binDir}/aws-node.cjs is missing (npm run build)`);
    removeNamespaces = createNamespaces([bare, dropping, peer]);
    // No IPv6 on the veth: its address's duplicate detection would change the state under the test.
    for (const ns of [dropping, peer]) inNs(ns, 'sysctl', '-qw', 'net.ipv6.conf.default.disable_ipv6=1');
    const a = uniqueName('i19va');
    const b = uniqueName('i19vb');
    run('ip', 'link', 'add', a, 'netns', dropping, 'type', 'veth', 'peer', 'name', b, 'netns', peer);
    inNs(dropping, 'ip', 'addr', 'add', '10.255.0.1/30', 'dev', a);
    inNs(peer, 'ip', 'addr', 'add', '10.255.0.2/30', 'dev', b);
    inNs(dropping, 'ip', 'link', 'set', a, 'up');
    inNs(peer, 'ip', 'link', 'set', b, 'up');
    inNs(dropping, 'ip', 'route', 'add', 'default', 'via', '10.255.0.2');
    inNs(peer, 'sysctl', '-qw', 'net.ipv4.ip_forward=0');
  });

  afterAll(() => {
    removeNamespaces();
    scratch.remove();
  });

  /** Runs `bin` in `ns` with a fresh node directory; asserts the namespace and directory stayed untouched. */
  async function untouched(ns: string, bin: string, args: string[], extra: Record<string, string> = {}) {
    const dir = join(scratch.path, uniqueName('n'));
    const before = nodeState(ns);
    const outcome = await runIn(ns, bin, args, { ...nodeEnv(dir), ...extra });
    expect(nodeState(ns)).toBe(before);
    // The socket's and the conflist's directories may be created by the checks before the node is changed
    // (ADR 0034, 0035); nothing is written into them.
    for (const p of ['run/ipam.json', 'run/ipamd.sock', 'bin', 'net.d/10-aws.conflist'])
      expect(existsSync(join(dir, p)), `${p} written`).toBe(false);
    // Never a stack trace.
    expect(outcome.stderr).not.toMatch(/^\s+at /m);
    return { ...outcome, dir };
  }

  it('--help and --version print and exit 0, starting nothing', async () => {
    for (const bin of ['aws-node.cjs', 'aws-vpc-cni-init.cjs']) {
      const help = await untouched(bare, bin, ['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: aws-(node|vpc-cni-init) \[--help\] \[--version\]/);
      expect(existsSync(join(help.dir, 'log')), 'log directory created').toBe(false);
      const version = await untouched(bare, bin, ['-v']);
      expect(version.code).toBe(0);
      expect(version.stdout).toMatch(/^aws-(node|vpc-cni-init) \d+\.\d+\.\d+/);
    }
  });

  it('refuses an unknown flag or a stray argument with the usage and exit 2', async () => {
    for (const [bin, args, problem] of [
      ['aws-node.cjs', ['--bogus'], "Unknown option '--bogus'"],
      ['aws-node.cjs', ['start'], "Unexpected argument 'start'"],
      ['aws-vpc-cni-init.cjs', ['-x'], "Unknown option '-x'"],
    ] as const) {
      const o = await untouched(bare, bin, [...args]);
      expect(o.code).toBe(2);
      expect(o.stderr.split('\n')[0]).toContain(problem);
      expect(o.stderr).toContain('Usage: ');
      expect(o.stdout).toBe('');
    }
  });

  it('without a route to IMDS: one line with the hint, exit 1, the first log line names version and configuration', async () => {
    for (const bin of ['aws-node.cjs', 'aws-vpc-cni-init.cjs']) {
      const o = await untouched(bare, bin, []);
      expect(o.code).toBe(1);
      const lines = o.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/cannot reach IMDS at http:\/\/169\.254\.169\.254 \(connect ENETUNREACH/);
      expect(lines[0]).toContain('not on EC2, or IMDS blocked? set AWS_EC2_METADATA_SERVICE_ENDPOINT');
      if (bin === 'aws-node.cjs') {
        const log = readFileSync(join(o.dir, 'log', 'ipamd.log'), 'utf8')
          .trim()
          .split('\n');
        const first = JSON.parse(log[0] ?? '{}') as Record<string, unknown>;
        expect(first).toMatchObject({ level: 'info', msg: 'aws-node starting', version: expect.any(String) });
        expect(first['config']).toMatchObject({ warmEniTarget: 1, socketPath: expect.any(String) });
        expect(JSON.parse(log.at(-1) ?? '{}')).toMatchObject({
          level: 'error',
          msg: 'aws-node cannot start',
        });
      }
    }
  });

  it('when IMDS silently drops packets: fails after 3 attempts of 2 s, not minutes', async () => {
    const o = await untouched(dropping, 'aws-node.cjs', []);
    expect(o.code).toBe(1);
    expect(o.stderr.trim().split('\n')).toHaveLength(1);
    expect(o.stderr).toContain(
      '(IMDS request timed out after 2000 ms, 3 attempts): not on EC2, or IMDS blocked?',
    );
    // The documented deadline: 3 × 2 s plus backoff (~0.2 s) and start-up; before this fix it was ~400 s.
    expect(o.ms).toBeLessThan(15_000);
  });

  it('an unwritable log path: one line naming the path and the variable, exit 1', async () => {
    const blocker = join(scratch.path, 'not-a-directory');
    writeFileSync(blocker, '');
    const o = await untouched(bare, 'aws-node.cjs', [], {
      AWS_VPC_K8S_CNI_LOG_FILE: join(blocker, 'ipamd.log'),
    });
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(
      `aws-node: cannot create the log directory ${blocker} (EEXIST): set AWS_VPC_K8S_CNI_LOG_FILE to a writable path, or to stderr or stdout\n`,
    );
    // A directory that exists but where the file cannot be opened (a directory in the file's place).
    const taken = await untouched(bare, 'aws-node.cjs', [], { AWS_VPC_K8S_CNI_LOG_FILE: scratch.path });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(
      `aws-node: cannot open the log file ${scratch.path} for appending (EISDIR): set AWS_VPC_K8S_CNI_LOG_FILE to a writable path, or to stderr or stdout\n`,
    );
  });

  it('a log path that is a FIFO nobody reads: the same line at once, not a start that hangs', async () => {
    const fifo = join(scratch.path, 'ipamd.fifo');
    run('mkfifo', fifo);
    const o = await untouched(bare, 'aws-node.cjs', [], { AWS_VPC_K8S_CNI_LOG_FILE: fifo });
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(
      `aws-node: cannot open the log file ${fifo} for appending (ENXIO): set AWS_VPC_K8S_CNI_LOG_FILE to a writable path, or to stderr or stdout\n`,
    );
    expect(o.ms).toBeLessThan(10_000);
  });

  it('a checkpoint path that is a FIFO nobody writes: one line saying what it is, within seconds, not a start that hangs', async () => {
    const fifo = join(scratch.path, 'ipam.fifo');
    run('mkfifo', fifo);
    const o = await untouched(bare, 'aws-node.cjs', [], { AWS_VPC_K8S_CNI_BACKING_STORE: fifo });
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(
      `aws-node: failed to start: checkpoint ${fifo} cannot be restored (it is a FIFO, not a regular file): ` +
        'nothing on the node was changed; move the file aside (or set AWS_VPC_K8S_CNI_BACKING_STORE elsewhere) ' +
        'to start with an empty pool, but the pods already on this node keep their addresses only if it is restored\n',
    );
    // Refused before IMDS is asked (this namespace has no route to it) and before the node is changed.
    expect(o.ms).toBeLessThan(10_000);
    // Before the fix the open waited for a writer: runIn's 60 s deadline killed it with nothing on stderr.
  });

  it('a log path under /proc (where a recursive mkdir never returns): the same line within seconds', async () => {
    const o = await untouched(bare, 'aws-node.cjs', [], {
      AWS_VPC_K8S_CNI_LOG_FILE: '/proc/vck-nope/ipamd.log',
    });
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(
      'aws-node: cannot create the log directory /proc/vck-nope (ENOENT): set AWS_VPC_K8S_CNI_LOG_FILE to a writable path, or to stderr or stdout\n',
    );
    // Before the fix the process never returned: runIn's 60 s deadline killed it with nothing on stderr.
  });

  it('an invalid environment variable: every problem named, exit 1', async () => {
    const o = await untouched(bare, 'aws-node.cjs', [], { WARM_IP_TARGET: 'lots' });
    expect(o.code).toBe(1);
    expect(o.stderr).toContain('WARM_IP_TARGET');
    expect(existsSync(join(o.dir, 'log')), 'log directory created').toBe(false);
  });

  it('aws-vpc-cni-init refuses relative paths as the daemon does, before asking IMDS', async () => {
    const o = await untouched(bare, 'aws-vpc-cni-init.cjs', [], {
      HOST_CNI_BIN_PATH: 'opt/cni/bin',
      AWS_NODE_CORE_PLUGINS_DIR: 'plugins',
    });
    expect(o.code).toBe(1);
    expect(o.stderr.trim().split('\n')).toHaveLength(1);
    expect(o.stderr).toContain('HOST_CNI_BIN_PATH="opt/cni/bin": must be an absolute path');
    expect(o.stderr).toContain('AWS_NODE_CORE_PLUGINS_DIR="plugins": must be an absolute path');
    expect(o.stderr).not.toContain('IMDS');
    expect(o.ms).toBeLessThan(5000);
  });

  it('aws-vpc-cni-init refuses a malformed DISABLE_TCP_EARLY_DEMUX before installing or setting anything', async () => {
    const o = await untouched(bare, 'aws-vpc-cni-init.cjs', [], { DISABLE_TCP_EARLY_DEMUX: 'yes' });
    expect(o.code).toBe(1);
    expect(o.stderr.trim().split('\n')).toHaveLength(1);
    expect(o.stderr).toContain('DISABLE_TCP_EARLY_DEMUX');
  });
});
