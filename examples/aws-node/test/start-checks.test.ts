/**
 * What the daemon checks before it changes the node (ADR 0034, 0035): the checkpoint (read once, handed to the
 * restore), the gRPC socket (taken early, answering UNAVAILABLE until the daemon serves), the HTTP ports (taken
 * early, answering 503), and the CNI configuration directory.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { createGroupCommitFileCheckpointer } from '@vpc-cni-kit/datastore';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { describeStartFailure } from '../src/cli/start-failure.js';
import { branchLedgerFile } from '../src/daemon/branch-pod-sources.js';
import { checkConflistDir } from '../src/daemon/conflist.js';
import { listenEarlyRpc, STARTING_MESSAGE } from '../src/daemon/early-rpc.js';
import { listenEarly } from '../src/daemon/http-servers.js';
import { readSavedState } from '../src/daemon/saved-state.js';
import { checkSocketPath } from '../src/daemon/socket-path.js';
import { isStartError } from '../src/daemon/start-error.js';
import { daemonClient } from '../src/plugin/daemon-client.js';
import { GrpcStatus, isGrpcCallError } from '../src/rpc/grpc-client.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
const scratch = () => {
  const d = scratchDir('vck-start-');
  dirs.push(d);
  return d.path;
};
const failureOf = async (f: () => unknown): Promise<unknown> => {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error('did not fail');
};
const line = (e: unknown) => `aws-node: ${describeStartFailure(e, { imdsEndpoint: undefined })}`;
const entry = (id: string, ipv4: string) =>
  `{"networkName":"aws-cni","containerID":"${id}","ifName":"eth0","ipv4":"${ipv4}","allocationTimestamp":1,"metadata":{}}`;

describe('readSavedState', () => {
  it('a fresh node has no checkpoint; a good one is read and checked once', () => {
    const dir = scratch();
    const path = join(dir, 'ipam.json');
    expect(readSavedState(createGroupCommitFileCheckpointer(path), path).checkpoint).toBeNull();
    writeFileSync(path, `{"version":"vpc-cni-ipam/1","allocations":[${entry('a', '10.0.1.5')}]}`);
    const saved = readSavedState(createGroupCommitFileCheckpointer(path), path);
    expect(saved.checkpoint?.allocations.map((e) => e.ipv4)).toEqual(['10.0.1.5']);
    expect(saved.branchLedger).toBeUndefined();
  });

  it.each([
    ['not JSON', '{"version":"vpc-cni-ipam/1","allocations":[{', /\(checkpoint is not valid JSON: .+\)/],
    [
      'another version',
      '{"version":"vpc-cni-ipam/9","allocations":[]}',
      /\(checkpoint version "vpc-cni-ipam\/9"/,
    ],
    [
      'an address twice',
      `{"version":"vpc-cni-ipam/1","allocations":[${entry('a', '10.0.1.5')},${entry('b', '10.0.1.5')}]}`,
      /\(checkpoint assigns 10\.0\.1\.5 twice\)/,
    ],
  ])('a checkpoint with %s stops the start with one line naming the file and what to do', (_, text, why) => {
    const dir = scratch();
    const path = join(dir, 'ipam.json');
    writeFileSync(path, text);
    let error: unknown;
    try {
      readSavedState(createGroupCommitFileCheckpointer(path), path);
    } catch (e) {
      error = e;
    }
    expect(isStartError(error, 'CheckpointInvalid')).toBe(true);
    const l = line(error);
    expect(l.split('\n')).toHaveLength(1);
    expect(l).toMatch(new RegExp(`^aws-node: failed to start: checkpoint ${path} cannot be restored \\(`));
    expect(l).toMatch(why);
    expect(l).toContain('nothing on the node was changed; move the file aside');
    expect(l).toContain('keep their addresses only if it is restored');
  });

  const readFailure = (path: string) => {
    try {
      readSavedState(createGroupCommitFileCheckpointer(path), path);
    } catch (e) {
      return e;
    }
    throw new Error('did not fail');
  };

  it('a checkpoint path that cannot be read is named with the errno', () => {
    const dir = scratch();
    // A path below a file: no one can open it (root reads through any mode, so modes cannot show this).
    writeFileSync(join(dir, 'file'), '');
    expect(line(readFailure(join(dir, 'file', 'ipam.json')))).toMatch(
      /checkpoint .*file\/ipam\.json cannot be restored \(cannot read it: ENOTDIR\)/,
    );
  });

  it('a checkpoint path that is not a regular file stops the start at once, saying what it is', () => {
    const dir = scratch();
    const fifo = join(dir, 'ipam.json');
    execFileSync('mkfifo', [fifo]);
    const error = readFailure(fifo);
    expect(isStartError(error, 'CheckpointInvalid')).toBe(true);
    expect(line(error)).toBe(
      `aws-node: failed to start: checkpoint ${fifo} cannot be restored (it is a FIFO, not a regular file): ` +
        'nothing on the node was changed; move the file aside (or set AWS_VPC_K8S_CNI_BACKING_STORE elsewhere) to ' +
        'start with an empty pool, but the pods already on this node keep their addresses only if it is restored',
    );
    const directory = join(dir, 'directory.json');
    mkdirSync(directory);
    expect(line(readFailure(directory))).toContain(
      `checkpoint ${directory} cannot be restored (it is a directory, not a regular file)`,
    );
  });

  it('reads the branch-pod ledger beside it; an unreadable ledger never stops the start (ADR 0030)', () => {
    const dir = scratch();
    const path = join(dir, 'ipam.json');
    const ledger = branchLedgerFile(path);
    expect(readSavedState(createGroupCommitFileCheckpointer(path), path, ledger).branchLedger).toEqual({
      text: undefined,
    });
    writeFileSync(ledger.path, 'garbage');
    expect(readSavedState(createGroupCommitFileCheckpointer(path), path, ledger).branchLedger).toEqual({
      text: 'garbage',
    });
    mkdirSync(join(dir, 'other'));
    const unreadable = branchLedgerFile(join(dir, 'other', 'ipam.json'));
    mkdirSync(unreadable.path);
    const read = readSavedState(createGroupCommitFileCheckpointer(path), path, unreadable).branchLedger;
    expect(read && 'problem' in read).toBe(true);
  });

  it('a ledger that is a FIFO is a problem at once, not a start that waits for a writer (ADR 0030)', () => {
    const dir = scratch();
    const path = join(dir, 'ipam.json');
    const ledger = branchLedgerFile(path);
    execFileSync('mkfifo', [ledger.path]);
    // A writer after 3 s turns a read that waits into a failure of this test rather than a hung run.
    const writer = spawn('sh', ['-c', 'sleep 3; echo garbage > "$0"', ledger.path], { stdio: 'ignore' });
    try {
      const started = performance.now();
      expect(readSavedState(createGroupCommitFileCheckpointer(path), path, ledger).branchLedger).toEqual({
        problem: `cannot read checkpoint ${ledger.path}: it is a FIFO, not a regular file`,
      });
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      writer.kill('SIGKILL');
    }
  });
});

describe('checkSocketPath', () => {
  it('accepts a free path, a missing directory and a stale socket (its server was killed)', async () => {
    const dir = scratch();
    await checkSocketPath(join(dir, 'ipamd.sock'));
    await checkSocketPath(join(dir, 'a', 'b', 'ipamd.sock'));
    const stale = join(dir, 'stale.sock');
    leaveStaleSocket(stale);
    expect(statSync(stale).isSocket()).toBe(true);
    await checkSocketPath(stale);
  });

  it("refuses a socket a server listens on, and leaves that server's socket alone", async () => {
    const dir = scratch();
    const live = join(dir, 'ipamd.sock');
    // The probes close their connection at once: what this server writes them may meet a reset.
    const server = createNetServer((c) => c.on('error', () => undefined).end('still here\n'));
    await new Promise<void>((r) => server.listen(live, r));
    try {
      const e = await failureOf(() => checkSocketPath(live));
      expect(isStartError(e, 'ListenFailed')).toBe(true);
      expect(line(e)).toBe(
        `aws-node: failed to start: cannot serve on ${live}: a server is listening on it (another aws-node?); stop that one or set AWS_NODE_IPAMD_SOCKET to another path`,
      );
      // listenEarlyRpc refuses it too (the check and the bind are apart), with the same hint's setting.
      expect(line(await failureOf(() => listenEarlyRpc(live)))).toBe(
        `aws-node: failed to start: cannot serve on ${live}: EADDRINUSE, a server is listening on it; nothing on the node was changed; set AWS_NODE_IPAMD_SOCKET to another path`,
      );
      const reply = await new Promise<string>((resolve, reject) => {
        const c = connect(live);
        let got = '';
        c.on('data', (b: Buffer) => {
          got += b.toString();
        });
        c.on('end', () => resolve(got));
        c.on('error', reject);
      });
      expect(reply).toBe('still here\n');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses a regular file or a directory in the socket place, and a file in a directory place', async () => {
    const dir = scratch();
    const file = join(dir, 'ipamd.sock');
    writeFileSync(file, 'not a socket');
    const e = await failureOf(() => checkSocketPath(file));
    expect(isStartError(e, 'ListenFailed')).toBe(true);
    expect(line(e)).toBe(
      `aws-node: failed to start: cannot serve on ${file}: it exists and is not a socket (a file); remove it or set AWS_NODE_IPAMD_SOCKET to another path`,
    );
    mkdirSync(join(dir, 'd.sock'));
    expect(line(await failureOf(() => checkSocketPath(join(dir, 'd.sock'))))).toContain(
      'it exists and is not a socket (a directory)',
    );
    expect(line(await failureOf(() => checkSocketPath(join(file, 'x', 'ipamd.sock'))))).toContain(
      `${file} is not a directory`,
    );
  });
});

describe('checkSocketPath, directories', () => {
  it('a socket directory that cannot be created (under /proc) is refused before the node is changed', async () => {
    const e = await failureOf(() => checkSocketPath('/proc/vck-no-such-dir/ipamd.sock'));
    expect(isStartError(e, 'ListenFailed')).toBe(true);
    expect(line(e)).toBe(
      'aws-node: failed to start: cannot serve on /proc/vck-no-such-dir/ipamd.sock: cannot create the directory /proc/vck-no-such-dir (ENOENT); set AWS_NODE_IPAMD_SOCKET to a path in a writable directory',
    );
  });
});

describe('listenEarly', () => {
  const get = (port: number) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/v1/enis' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on('error', reject)
        .end();
    });

  it('takes the port at once, answers 503 until it serves, then answers with the real server', async () => {
    const endpoint = await listenEarly('127.0.0.1:0');
    try {
      const port = Number(endpoint.address.split(':').at(-1));
      expect(await get(port)).toEqual({ status: 503, body: 'aws-node is starting\n' });
      endpoint.serve(createServer((_req, res) => res.writeHead(200).end('ready\n')));
      expect(await get(port)).toEqual({ status: 200, body: 'ready\n' });
    } finally {
      await endpoint.close();
    }
  });

  it('a file at a unix bind address is refused and left in place (it used to be deleted)', async () => {
    const dir = scratch();
    const file = join(dir, 'metrics.sock');
    writeFileSync(file, 'an operator file');
    const e = await failureOf(() => listenEarly(`unix:${file}`, 'AWS_NODE_METRICS_BIND_ADDRESS'));
    expect(line(e)).toBe(
      `aws-node: failed to start: cannot serve on ${file}: it exists and is not a socket (a file); remove it or set AWS_NODE_METRICS_BIND_ADDRESS to another path`,
    );
    expect(readFileSync(file, 'utf8')).toBe('an operator file');
  });

  it('a port in use is a ListenFailed start error', async () => {
    const endpoint = await listenEarly('127.0.0.1:0');
    try {
      const e = await failureOf(() => listenEarly(endpoint.address));
      expect(line(e)).toBe(`aws-node: failed to start: cannot listen on ${endpoint.address}: EADDRINUSE`);
    } finally {
      await endpoint.close();
    }
  });
});

describe('listenEarlyRpc', () => {
  it('takes the socket at once and answers every call UNAVAILABLE with the starting message', async () => {
    const path = join(scratch(), 'run', 'ipamd.sock');
    const rpc = await listenEarlyRpc(path);
    try {
      const e = await daemonClient(path, 2000)
        .addNetwork({ K8S_POD_NAME: 'p' })
        .catch((x: unknown) => x);
      expect(isGrpcCallError(e) && [e.grpcStatus, e.message]).toEqual([
        GrpcStatus.UNAVAILABLE,
        STARTING_MESSAGE,
      ]);
    } finally {
      await rpc.close(10);
    }
  });
});

describe('checkConflistDir', () => {
  it('creates a missing directory; one that cannot be made or written stops the start in one line', async () => {
    const dir = scratch();
    checkConflistDir(join(dir, 'etc', 'cni', 'net.d'));
    expect(statSync(join(dir, 'etc', 'cni', 'net.d')).isDirectory()).toBe(true);
    const e = await failureOf(() => checkConflistDir('/proc/vck-no-such-dir/net.d'));
    expect(isStartError(e, 'CniConfDirUnusable')).toBe(true);
    expect(line(e)).toBe(
      'aws-node: failed to start: the CNI configuration directory cannot take the conflist: cannot create the directory /proc/vck-no-such-dir (ENOENT); nothing on the node was changed; set HOST_CNI_CONFDIR_PATH to a writable directory',
    );
    // A read-only directory (/proc/self is one, even for root): named with the errno.
    expect(line(await failureOf(() => checkConflistDir('/proc/self')))).toContain(
      'the CNI configuration directory cannot take the conflist: /proc/self cannot be written (',
    );
  });
});

/** Leaves a socket at `path` that nobody listens on: its server (another process) was killed before it closed. */
function leaveStaleSocket(path: string): void {
  spawnSync(process.execPath, [
    '-e',
    "require('node:net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))",
    path,
  ]);
}
