/**
 * The health probe against real servers on unix sockets: the daemon's gRPC server (grpc-js), servers that
 * answer NOT_SERVING or lack the health service, one that accepts and never answers, and no server at all;
 * each gives grpc-health-probe's exit code. The bundled executable is run once as a kubelet would.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { parseGoDuration } from '@vpc-cni-kit/go-duration';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGoFlags } from '../src/probe/go-flags.js';
import { ProbeExit, runHealthProbe, unixSocketPath } from '../src/probe/health-probe.js';
import { type RpcServer, startRpcServer } from '../src/rpc/grpc-server.js';
import { decode, encode, Methods, ServingStatus } from '../src/rpc/messages.js';

const bin = fileURLToPath(new URL('../dist/bin/grpc-health-probe.cjs', import.meta.url));

async function probe(...argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runHealthProbe(argv, {
    stderr: (s) => {
      stderr += s;
    },
    now: () => performance.now(),
    version: '1.2.3',
  });
  return { code, stderr };
}

/** A grpc-js server on `socketPath` whose Check answers `status`, or without the health service. */
async function healthServer(socketPath: string, status: number | 'none'): Promise<grpc.Server> {
  const server = new grpc.Server();
  const service = {
    Check: {
      path: Methods.HealthCheck,
      requestStream: false,
      responseStream: false,
      requestSerialize: (v: object) => Buffer.from(encode('HealthCheckRequest', v)),
      requestDeserialize: (b: Buffer) => decode('HealthCheckRequest', b),
      responseSerialize: (v: object) => Buffer.from(encode('HealthCheckResponse', v)),
      responseDeserialize: (b: Buffer) => decode('HealthCheckResponse', b),
    },
  } satisfies grpc.ServiceDefinition;
  if (status !== 'none')
    server.addService(service, {
      Check: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { status }),
    });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (e) =>
      e ? reject(e) : resolve(),
    ),
  );
  return server;
}

describe('Go flag syntax', () => {
  it('reads flags as Go does: -a=b, -a b, --a=b, bare booleans, stop at -- or a non-flag', () => {
    const specs = {
      addr: { kind: 'string', usage: '' },
      v: { kind: 'bool', usage: '' },
      t: { kind: 'duration', usage: '' },
    } as const;
    expect(parseGoFlags(['-addr=x', '-v', '--t', '2s', '--', '-z'], specs, parseGoDuration)).toEqual({
      kind: 'ok',
      values: { addr: 'x', v: true, t: 2000 },
      rest: ['-z'],
    });
    expect(parseGoFlags(['-v=false', 'pos', '-addr=y'], specs, parseGoDuration)).toEqual({
      kind: 'ok',
      values: { v: false },
      rest: ['pos', '-addr=y'],
    });
    expect(parseGoFlags(['-h'], specs, parseGoDuration)).toEqual({ kind: 'help' });
    expect(parseGoFlags(['-nope'], specs, parseGoDuration)).toMatchObject({
      kind: 'invalid',
      problem: 'flag provided but not defined: -nope',
    });
    expect(parseGoFlags(['-addr'], specs, parseGoDuration)).toMatchObject({
      problem: 'flag needs an argument: -addr',
    });
    expect(parseGoFlags(['---addr=x'], specs, parseGoDuration)).toMatchObject({
      problem: 'bad flag syntax: ---addr=x',
    });
    expect(parseGoFlags(['-v=maybe'], specs, parseGoDuration)).toMatchObject({ kind: 'invalid' });
  });

  it('takes unix socket addresses only', () => {
    expect(unixSocketPath('unix:///var/run/aws-node/ipamd.sock')).toBe('/var/run/aws-node/ipamd.sock');
    expect(unixSocketPath('unix:rel/ipamd.sock')).toBe('rel/ipamd.sock');
    for (const bad of ['unix://', 'unix://rel', ':50051', 'localhost:50051', 'unix:'])
      expect(unixSocketPath(bad)).toBeUndefined();
  });
});

describe('health probe: grpc-health-probe exit codes', () => {
  const dir = scratchDir('vck-probe-');
  const daemonSocket = join(dir.path, 'ipamd.sock');
  let daemon: RpcServer;
  const others: grpc.Server[] = [];
  let silent: Server;
  const held: Socket[] = [];

  beforeAll(async () => {
    daemon = await startRpcServer({
      socketPath: daemonSocket,
      backend: {
        addNetwork: () => Promise.reject(new Error('unused')),
        delNetwork: () => Promise.reject(new Error('unused')),
      },
    });
    others.push(await healthServer(join(dir.path, 'not-serving.sock'), ServingStatus.NOT_SERVING));
    others.push(await healthServer(join(dir.path, 'no-health.sock'), 'none'));
    // Accepts connections and never says a word.
    silent = createServer((socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(join(dir.path, 'silent.sock'), resolve));
  });

  afterAll(async () => {
    await daemon?.close(100);
    for (const s of others) s.forceShutdown();
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
    dir.remove();
  });

  it('0 and "status: SERVING" from the daemon, for "" and the reference service name', async () => {
    expect(await probe(`-addr=unix://${daemonSocket}`)).toEqual({
      code: ProbeExit.SERVING,
      stderr: 'status: SERVING\n',
    });
    const named = await probe('-addr', `unix:${daemonSocket}`, '-service=grpc.health.v1.aws-node', '-v');
    expect(named.code).toBe(0);
    expect(named.stderr).toMatch(
      /^parsed options:\n> addr=unix:.* conn_timeout=1s rpc_timeout=1s\ntime elapsed: .*\nstatus: SERVING\n$/,
    );
  });

  it('1 on invalid arguments, with the problem and (for a bad flag) the usage', async () => {
    expect(await probe()).toEqual({ code: 1, stderr: 'error: -addr not specified\n' });
    const unknown = await probe('-addr=unix:/x', '-bogus');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^flag provided but not defined: -bogus\nUsage of grpc-health-probe:\n {2}-addr string/,
    );
    expect((await probe('-addr=unix:/x', '-connect-timeout=0s')).stderr).toBe(
      'error: -connect-timeout must be greater than zero (specified: 0s)\n',
    );
    expect((await probe('-addr=unix:/x', '-rpc-timeout=-1s')).code).toBe(1);
    expect((await probe('-addr=localhost:50051')).code).toBe(1);
    expect((await probe('-addr=unix:/x', '-tls')).code).toBe(1);
    expect((await probe('-addr=unix:/x', 'extra')).code).toBe(1);
    expect((await probe('-h')).code).toBe(1);
  });

  it('2 when nothing listens on the socket', async () => {
    const o = await probe(`-addr=unix://${join(dir.path, 'absent.sock')}`);
    expect(o.code).toBe(ProbeExit.CONNECTION_FAILURE);
    expect(o.stderr).toMatch(/^error: failed to connect service at "unix:\/\/.*absent\.sock": .*ENOENT/);
  });

  it('3 on an RPC failure: unknown service, no health service, or no answer within -rpc-timeout', async () => {
    const unknown = await probe(`-addr=unix://${daemonSocket}`, '-service=other');
    expect(unknown.code).toBe(ProbeExit.RPC_FAILURE);
    expect(unknown.stderr).toMatch(
      /^error: health rpc failed: .*unknown service "other".* \(gRPC status 5\)\n$/,
    );
    expect(await probe(`-addr=unix://${join(dir.path, 'no-health.sock')}`)).toEqual({
      code: 3,
      stderr: 'error: this server does not implement the grpc health protocol (grpc.health.v1.Health)\n',
    });
    const started = performance.now();
    expect(await probe(`-addr=unix://${join(dir.path, 'silent.sock')}`, '-rpc-timeout=300ms')).toEqual({
      code: 3,
      stderr: 'timeout: health rpc did not complete within 300ms\n',
    });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('4 when the server answers but not SERVING', async () => {
    expect(await probe(`-addr=unix://${join(dir.path, 'not-serving.sock')}`)).toEqual({
      code: ProbeExit.UNHEALTHY,
      stderr: 'service unhealthy (responded with "NOT_SERVING")\n',
    });
  });

  it('the bundled executable answers a kubelet the same way', async () => {
    if (!existsSync(bin)) throw new Error(`build first: ${bin} is missing`);
    const run = (...args: string[]) =>
      new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(process.execPath, [bin, ...args], { encoding: 'utf8' }, (e, _out, stderr) =>
          resolve({ code: e ? Number(e.code) : 0, stderr }),
        ),
      );
    expect(await run(`-addr=unix://${daemonSocket}`, '-connect-timeout=5s', '-rpc-timeout=5s')).toEqual({
      code: 0,
      stderr: 'status: SERVING\n',
    });
    expect((await run(`-addr=unix://${join(dir.path, 'absent.sock')}`)).code).toBe(2);
    expect((await run('-bogus')).code).toBe(1);
  });
});
