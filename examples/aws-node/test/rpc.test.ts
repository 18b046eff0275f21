import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcStatus, isGrpcCallError, unaryCall } from '../src/rpc/grpc-client.js';
import { listenRpc, type RpcServer, RpcStatusError, startRpcServer } from '../src/rpc/grpc-server.js';
import { type AddNetworkRequest, decode, encode, Methods, schemas } from '../src/rpc/messages.js';
import { decodeMessage, WireError } from '../src/rpc/wire.js';

describe('rpc codec', () => {
  it('encodes the proto3 wire format byte for byte', () => {
    // field 1 (K8S_POD_NAME) "p": key 0x0a, length 1; field 9 (bool) true: key 0x48, 1
    expect(
      Buffer.from(
        encode('AddNetworkRequest', { K8S_POD_NAME: 'p', RequiresMultiNICAttachment: true }),
      ).toString('hex'),
    ).toBe('0a01704801');
    // DeviceNumber -1 (int32) sign-extends to a 10-byte varint; RouteTableId 254 = fe 01
    const reply = encode('AddNetworkReply', {
      Success: true,
      IPAllocationMetadata: [{ IPv4Addr: '10.0.0.5', IPv6Addr: '', DeviceNumber: -1, RouteTableId: 254 }],
    });
    expect(Buffer.from(reply).toString('hex')).toBe(
      `0801${'12'}${'18'}0a0831302e302e302e35${'18'}ffffffffffffffffff01${'20'}fe01`,
    );
    expect(decode('AddNetworkReply', reply).IPAllocationMetadata[0]).toEqual({
      IPv4Addr: '10.0.0.5',
      IPv6Addr: '',
      DeviceNumber: -1,
      RouteTableId: 254,
    });
  });

  it("encodes the branch-ENI fields with the reference's numbers (rpc.proto: 7, 8, 9, 10; DelNetworkReply 4)", () => {
    // PodVlanId 5 (field 7 varint: 38 05), PodENIMAC (field 8: 42 len), PodENISubnetGW (field 9: 4a len),
    // ParentIfIndex 7 (field 10 varint: 50 07)
    const mac = Buffer.from('0a:00:00:00:00:b5').toString('hex');
    const gw = Buffer.from('10.0.0.1').toString('hex');
    const reply = encode('AddNetworkReply', {
      Success: true,
      PodVlanId: 5,
      PodENIMAC: '0a:00:00:00:00:b5',
      PodENISubnetGW: '10.0.0.1',
      ParentIfIndex: 7,
    });
    expect(Buffer.from(reply).toString('hex')).toBe(`0801${'38'}05${'42'}11${mac}${'4a'}08${gw}${'50'}07`);
    expect(decode('AddNetworkReply', reply)).toMatchObject({
      PodVlanId: 5,
      PodENIMAC: '0a:00:00:00:00:b5',
      PodENISubnetGW: '10.0.0.1',
      ParentIfIndex: 7,
    });
    const del = encode('DelNetworkReply', { Success: true, PodVlanId: 4094 });
    // 4094 = fe 1f as a varint
    expect(Buffer.from(del).toString('hex')).toBe('0801' + '20' + 'fe1f');
    expect(decode('DelNetworkReply', del).PodVlanId).toBe(4094);
  });

  it('fills proto3 defaults and skips unknown fields', () => {
    expect(decode('DelNetworkRequest', new Uint8Array())).toMatchObject({
      Reason: '',
      K8S_POD_UID: '',
      K8S_POD_NAME: '',
    });
    // unknown field 15 (varint 7), unknown field 14 (string "x"), then K8S_POD_NAME "q"
    expect(decode('AddNetworkRequest', Buffer.from('7807720178' + '0a0171', 'hex')).K8S_POD_NAME).toBe('q');
  });

  it('keeps extensions invisible to a reader that does not know them (the reference daemon)', () => {
    const withExt = encode('AddNetworkRequest', {
      K8S_POD_NAME: 'web',
      PodPlumbing: true,
      Mtu: 9001,
      VethPrefix: 'eni',
    });
    const reference = {
      ...schemas.AddNetworkRequest,
      fields: schemas.AddNetworkRequest.fields.filter((f) => f.no < 1000),
    };
    expect(decodeMessage(reference, withExt)).toEqual({
      ...decodeMessage(reference, new Uint8Array()),
      K8S_POD_NAME: 'web',
    });
  });

  it('round-trips arbitrary messages', () => {
    const req = fc.record({
      K8S_POD_NAME: fc.string(),
      K8S_POD_NAMESPACE: fc.string(),
      K8S_POD_INFRA_CONTAINER_ID: fc.string(),
      Netns: fc.string(),
      IfName: fc.string(),
      NetworkName: fc.string(),
      ContainerID: fc.string(),
      ClientVersion: fc.string(),
      RequiresMultiNICAttachment: fc.boolean(),
      PodPlumbing: fc.boolean(),
      Mtu: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      VethPrefix: fc.string(),
    });
    fc.assert(
      fc.property(req, (r: AddNetworkRequest) => {
        expect(decode('AddNetworkRequest', encode('AddNetworkRequest', r))).toEqual(r);
      }),
    );
  });

  it('rejects truncated input with a typed error and never crashes on garbage', () => {
    expect(() => decode('AddNetworkRequest', Buffer.from('0a05ab', 'hex'))).toThrow(WireError);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        try {
          decode('AddNetworkReply', b);
        } catch (e) {
          expect(e).toBeInstanceOf(WireError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('http2 client ↔ grpc-js server on a unix socket', () => {
  const dir = scratchDir('vck-rpc-');
  const socketPath = join(dir.path, 'run/ipamd.sock');
  let server: RpcServer;
  let slow: Promise<void> | undefined;

  beforeAll(async () => {
    server = await startRpcServer({
      socketPath,
      backend: {
        async addNetwork(req) {
          if (req.ClientVersion === 'wrong')
            throw new RpcStatusError(GrpcStatus.FAILED_PRECONDITION, `wrong client version "wrong" (!= "")`);
          if (req.K8S_POD_NAME === 'slow') await (slow = new Promise((r) => setTimeout(r, 500)));
          return {
            Success: true,
            IPAllocationMetadata: [{ IPv4Addr: '10.0.1.9', IPv6Addr: '', DeviceNumber: 1, RouteTableId: 2 }],
            UseExternalSNAT: false,
            VPCv4CIDRs: ['10.0.0.0/16'],
            PodVlanId: 0,
            PodENIMAC: '',
            PodENISubnetGW: '',
            ParentIfIndex: 0,
            VPCv6CIDRs: [],
            NetworkPolicyMode: '',
          };
        },
        async delNetwork() {
          throw new Error('datastore: unknown pod');
        },
      },
    });
  });
  afterAll(async () => {
    await slow;
    await server.close();
    dir.remove();
  });

  it('creates the socket with mode 0660', () => {
    expect(statSync(socketPath).mode & 0o777).toBe(0o660);
  });

  it('calls AddNetwork', async () => {
    const bytes = await unaryCall({
      socketPath,
      method: Methods.AddNetwork,
      request: encode('AddNetworkRequest', { K8S_POD_NAME: 'web' }),
      timeoutMs: 2000,
    });
    expect(decode('AddNetworkReply', bytes)).toMatchObject({
      Success: true,
      IPAllocationMetadata: [{ IPv4Addr: '10.0.1.9', DeviceNumber: 1, RouteTableId: 2 }],
      VPCv4CIDRs: ['10.0.0.0/16'],
    });
  });

  it('answers the health check for "" and grpc.health.v1.aws-node, NOT_FOUND otherwise', async () => {
    for (const service of ['', 'grpc.health.v1.aws-node']) {
      const bytes = await unaryCall({
        socketPath,
        method: Methods.HealthCheck,
        request: encode('HealthCheckRequest', { service }),
        timeoutMs: 2000,
      });
      expect(decode('HealthCheckResponse', bytes).status).toBe(1);
    }
    await expect(
      unaryCall({
        socketPath,
        method: Methods.HealthCheck,
        request: encode('HealthCheckRequest', { service: 'x' }),
        timeoutMs: 2000,
      }),
    ).rejects.toMatchObject({ grpcStatus: GrpcStatus.NOT_FOUND });
  });

  it('carries server status codes and messages', async () => {
    await expect(
      unaryCall({
        socketPath,
        method: Methods.AddNetwork,
        request: encode('AddNetworkRequest', { ClientVersion: 'wrong' }),
        timeoutMs: 2000,
      }),
    ).rejects.toMatchObject({
      grpcStatus: GrpcStatus.FAILED_PRECONDITION,
      message: 'wrong client version "wrong" (!= "")',
    });
    await expect(
      unaryCall({
        socketPath,
        method: Methods.DelNetwork,
        request: encode('DelNetworkRequest', {}),
        timeoutMs: 2000,
      }),
    ).rejects.toMatchObject({ grpcStatus: GrpcStatus.INTERNAL, message: 'datastore: unknown pod' });
    await expect(
      unaryCall({ socketPath, method: '/rpc.CNIBackend/Nope', request: new Uint8Array(), timeoutMs: 2000 }),
    ).rejects.toMatchObject({ grpcStatus: GrpcStatus.UNIMPLEMENTED });
  });

  it('times out', async () => {
    const e = await unaryCall({
      socketPath,
      method: Methods.AddNetwork,
      request: encode('AddNetworkRequest', { K8S_POD_NAME: 'slow' }),
      timeoutMs: 100,
    }).catch((x: unknown) => x);
    expect(isGrpcCallError(e) && e.grpcStatus).toBe(GrpcStatus.DEADLINE_EXCEEDED);
  });

  it('reports a daemon that is not there as UNAVAILABLE', async () => {
    const e = await unaryCall({
      socketPath: join(dir.path, 'none.sock'),
      method: Methods.AddNetwork,
      request: new Uint8Array(),
      timeoutMs: 2000,
    }).catch((x: unknown) => x);
    expect(isGrpcCallError(e) && e.grpcStatus).toBe(GrpcStatus.UNAVAILABLE);
  });

  it('refuses to replace a file that is not a socket', async () => {
    const file = join(dir.path, 'not-a-socket');
    writeFileSync(file, 'x');
    await expect(
      startRpcServer({
        socketPath: file,
        backend: { addNetwork: async () => ({}) as never, delNetwork: async () => ({}) as never },
      }),
    ).rejects.toThrow(/not a socket/);
  });

  it('a socket directory that cannot be made (under /proc) is a typed error at once, not a hang', async () => {
    const e = await startRpcServer({
      socketPath: '/proc/vck-nope/ipamd.sock',
      backend: { addNetwork: async () => ({}) as never, delNetwork: async () => ({}) as never },
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'DirectoryNotCreated', path: '/proc/vck-nope', errno: 'ENOENT' });
  });

  it('replaces a stale socket (its server was killed) and refuses a live one, which keeps serving', async () => {
    const path = join(dir.path, 'run/ipamd.sock.2');
    leaveStaleSocket(path);
    expect(statSync(path).isSocket()).toBe(true);
    const second = await startRpcServer({
      socketPath: path,
      backend: { addNetwork: async () => ({ Success: true }), delNetwork: async () => ({}) as never },
    });
    try {
      const e = await startRpcServer({
        socketPath: path,
        backend: { addNetwork: async () => ({}) as never, delNetwork: async () => ({}) as never },
      }).catch((x: unknown) => x);
      expect(e).toMatchObject({
        code: 'EADDRINUSE',
        message: expect.stringMatching(/a server listens on this socket/),
      });
      const reply = await unaryCall({
        socketPath: path,
        method: Methods.AddNetwork,
        request: encode('AddNetworkRequest', {}),
        timeoutMs: 2000,
      });
      expect(decode('AddNetworkReply', reply).Success).toBe(true);
    } finally {
      await second.close(10);
    }
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

describe('listenRpc: the socket taken before the daemon can answer (ADR 0035)', () => {
  const dir = scratchDir('vck-rpc-early-');
  afterAll(() => dir.remove());
  const call = async (socketPath: string, method: string, request: Uint8Array) =>
    unaryCall({ socketPath, method, request, timeoutMs: 2000 }).then(
      (bytes) => ({ ok: bytes }),
      (e: unknown) => {
        if (!isGrpcCallError(e)) throw e;
        return { grpcStatus: e.grpcStatus, message: e.message, connected: e.connected };
      },
    );

  it('answers every call UNAVAILABLE with its message until it serves, then serves', async () => {
    const socketPath = join(dir.path, 'a/ipamd.sock');
    const server = await listenRpc({ socketPath, starting: 'starting: wait' });
    try {
      expect(statSync(socketPath).mode & 0o777).toBe(0o660);
      const calls = [
        [Methods.AddNetwork, encode('AddNetworkRequest', { K8S_POD_NAME: 'p' })],
        [Methods.DelNetwork, encode('DelNetworkRequest', { K8S_POD_NAME: 'p' })],
        [Methods.Gc, encode('GcRequest', {})],
        [Methods.Status, encode('StatusRequest', {})],
        [Methods.HealthCheck, encode('HealthCheckRequest', { service: '' })],
      ] as const;
      for (const [method, request] of calls)
        expect(await call(socketPath, method, request), method).toEqual({
          grpcStatus: GrpcStatus.UNAVAILABLE,
          message: 'starting: wait',
          connected: true,
        });
      // An unknown health service is still NOT_FOUND: the name is wrong whatever the daemon is doing.
      expect(
        await call(socketPath, Methods.HealthCheck, encode('HealthCheckRequest', { service: 'nope' })),
      ).toMatchObject({ grpcStatus: GrpcStatus.NOT_FOUND });
      server.serve({
        addNetwork: async (req) => ({ Success: req.K8S_POD_NAME === 'p' }),
        delNetwork: async () => ({ Success: true }),
      });
      const add = await call(socketPath, Methods.AddNetwork, calls[0][1]);
      expect('ok' in add && decode('AddNetworkReply', add.ok).Success).toBe(true);
      const health = await call(socketPath, Methods.HealthCheck, calls[4][1]);
      expect('ok' in health && decode('HealthCheckResponse', health.ok).status).toBe(1);
      // A backend without GC still says so once serving.
      expect(await call(socketPath, Methods.Gc, calls[2][1])).toMatchObject({
        grpcStatus: GrpcStatus.UNIMPLEMENTED,
      });
    } finally {
      await server.close(10);
    }
  });

  it('a bind that fails is the errno error, and a directory at the path stays', async () => {
    const socketPath = join(dir.path, 'd.sock');
    mkdirSync(socketPath);
    await expect(listenRpc({ socketPath })).rejects.toThrow(/exists and is not a socket/);
    expect(statSync(socketPath).isDirectory()).toBe(true);
  });
});
