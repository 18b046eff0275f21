import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CniErrorCode,
  getVersionInfo,
  invokePlugin,
  isCniError,
  parsePluginConfig,
  type Result,
  runPlugin,
} from '@vpc-cni-kit/cni-spec';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { build } from 'esbuild';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundlePluginProgram } from '../build/plugin-program.js';
import { STARTING_MESSAGE } from '../src/daemon/early-rpc.js';
import { daemonClient } from '../src/plugin/daemon-client.js';
import { awsCniHandlers } from '../src/plugin/handlers.js';
import { readAwsCniConf } from '../src/plugin/net-conf.js';
import type { PrevResultPod } from '../src/plugin/result.js';
import { listenRpc, type RpcServer, startRpcServer } from '../src/rpc/grpc-server.js';
import type {
  AddNetworkReply,
  AddNetworkRequest,
  DelNetworkRequest,
  GcRequest,
  StatusReply,
} from '../src/rpc/messages.js';

const dir = scratchDir('vck-plugin-');
const socket = join(dir.path, 'ipamd.sock');
let server: RpcServer;
const calls: { add: AddNetworkRequest[]; del: DelNetworkRequest[] } = { add: [], del: [] };
let nextAdd: Partial<AddNetworkReply> = {};
let nextStatus: StatusReply = { Ready: true, Reason: '' };
const gcs: GcRequest[] = [];

const plumbed: Partial<AddNetworkReply> = {
  Success: true,
  IPAllocationMetadata: [{ IPv4Addr: '10.0.1.23', IPv6Addr: '', DeviceNumber: 1, RouteTableId: 2 }],
  PodPlumbed: true,
  HostVethName: 'eni1a2b3c4d5e6',
  HostVethMac: '2a:00:00:00:00:01',
};

beforeAll(async () => {
  server = await startRpcServer({
    socketPath: socket,
    backend: {
      async addNetwork(req) {
        calls.add.push(req);
        return nextAdd;
      },
      async delNetwork(req) {
        calls.del.push(req);
        return { Success: true };
      },
      async status() {
        return nextStatus;
      },
      async gc(req) {
        gcs.push(req);
        return { Released: [] };
      },
    },
  });
});
afterAll(async () => {
  await server.close(100);
  dir.remove();
});
beforeEach(() => {
  calls.add.length = 0;
  calls.del.length = 0;
  nextAdd = plumbed;
});

const torn: PrevResultPod[] = [];
const handlers = awsCniHandlers({
  daemon: (s) => daemonClient(s, 2000),
  teardownWithoutDaemon: async (pod) => {
    torn.push(pod);
  },
  verify: async () => {},
  version: 'test',
});

const conf = (extra: object = {}) => ({
  cniVersion: '1.0.0',
  name: 'aws-cni',
  type: 'aws-cni',
  vethPrefix: 'eni',
  mtu: '1500',
  ipamdSocket: socket,
  ...extra,
});
const env = {
  CNI_CONTAINERID: 'sandbox1',
  CNI_NETNS: '/run/netns/pod1',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
  CNI_ARGS:
    'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=sandbox1;K8S_POD_UID=u1',
};

async function run(command: string, stdin: object, extraEnv: Record<string, string> = {}) {
  let stdout = '';
  const code = await runPlugin(handlers, {
    env: { ...env, ...extraEnv, CNI_COMMAND: command },
    stdin: () => JSON.stringify(stdin),
    stdout: (t) => {
      stdout += t;
    },
    stderr: () => {},
  });
  return { code, out: stdout === '' ? undefined : JSON.parse(stdout) };
}

const expectedResult = {
  cniVersion: '1.0.0',
  interfaces: [
    { name: 'eni1a2b3c4d5e6', mac: '2a:00:00:00:00:01' },
    { name: 'eth0', sandbox: '/run/netns/pod1', mac: '2' },
    { name: 'dummy1a2b3c4d5e6', mac: '0', sandbox: '1' },
  ],
  ips: [{ address: '10.0.1.23/32', interface: 1 }],
};

describe('aws-cni handlers against a gRPC daemon', () => {
  it('ADD asks the daemon to plumb and prints the reference-shaped result', async () => {
    const { code, out } = await run('ADD', conf());
    expect(code).toBe(0);
    expect(out).toEqual(expectedResult);
    expect(calls.add[0]).toMatchObject({
      K8S_POD_NAME: 'web-0',
      K8S_POD_NAMESPACE: 'default',
      K8S_POD_INFRA_CONTAINER_ID: 'sandbox1',
      Netns: '/run/netns/pod1',
      IfName: 'eth0',
      NetworkName: 'aws-cni',
      ContainerID: 'sandbox1',
      ClientVersion: 'test',
      PodPlumbing: true,
      Mtu: 1500,
      VethPrefix: 'eni',
    });
  });

  it.each([
    ['PoolEmpty', /no free IP address in the warm pool/],
    ['SubnetExhausted', /subnet has no free IP addresses/],
    ['EniLimitReached', /no room for another ENI/],
  ])('ADD failure %s is code 11 with a message naming the cause', async (failure, msg) => {
    nextAdd = { Success: false, FailureCode: failure, FailureMessage: 'details from the daemon' };
    const { code, out } = await run('ADD', conf());
    expect(code).toBe(1);
    expect(out).toMatchObject({
      code: CniErrorCode.TryAgainLater,
      msg: expect.stringMatching(msg),
      details: 'details from the daemon',
    });
  });

  it('rolls back when the daemon allocated but did not plumb (the reference ipamd)', async () => {
    nextAdd = { ...plumbed, PodPlumbed: false };
    const { code, out } = await run('ADD', conf());
    expect(code).toBe(1);
    expect(out.msg).toBe('aws-node did not set up the pod network');
    expect(calls.del).toMatchObject([{ Reason: 'SetupNSFailed', ContainerID: 'sandbox1', IfName: 'eth0' }]);
  });

  it('ADD with the daemon down is code 11', async () => {
    const { out } = await run('ADD', conf({ ipamdSocket: join(dir.path, 'nobody.sock') }));
    expect(out).toMatchObject({ code: 11, msg: expect.stringMatching(/not reachable/) });
  });

  it('refuses an ipamdSocket longer than a unix socket path can be (code 7), not "try again later" for ever', async () => {
    const ipamdSocket = `/run/${'s'.repeat(103)}`;
    for (const command of ['ADD', 'DEL']) {
      const { code, out } = await run(command, conf({ ipamdSocket }));
      expect(code).toBe(1);
      expect(out).toMatchObject({
        code: 7,
        msg: "invalid network config: ipamdSocket: is 108 bytes long; a unix socket's path has at most 107",
      });
    }
    expect(calls.add).toHaveLength(0);
  });

  it('rejects a veth prefix longer than 4 characters with the reference message', async () => {
    const { out } = await run('ADD', conf({ vethPrefix: 'abcde' }));
    expect(out).toMatchObject({ code: 7, msg: 'conf.VethPrefix can be at most 4 characters long' });
    expect(calls.add).toHaveLength(0);
  });

  it('refuses a pluginLogLevel the daemon would not accept, before calling the daemon', async () => {
    for (const pluginLogLevel of ['verbose', 'trace', 'Debugg', 'in fo']) {
      for (const command of ['ADD', 'DEL']) {
        const { code, out } = await run(command, conf({ pluginLogLevel }));
        expect(code).toBe(1);
        expect(out).toEqual({
          cniVersion: '1.0.0',
          code: 7,
          msg: 'invalid network config: pluginLogLevel: must be one of debug, info, warn, warning, error, fatal',
          details: pluginLogLevel,
        });
      }
    }
    expect(calls.add).toHaveLength(0);
    expect(calls.del).toHaveLength(0);
  });

  it('reads pluginLogLevel in any case, warning as warn and fatal as error (the most severe the plugin has)', () => {
    const level = (pluginLogLevel?: unknown) =>
      readAwsCniConf(parsePluginConfig(JSON.stringify(conf({ pluginLogLevel })))).pluginLogLevel;
    expect(level()).toBe('debug');
    expect(level('')).toBe('debug');
    for (const [name, parsed] of [
      ['DEBUG', 'debug'],
      ['Info', 'info'],
      ['warn', 'warn'],
      ['WARNING', 'warn'],
      ['error', 'error'],
      ['Fatal', 'error'],
    ] as const)
      expect(level(name), name).toBe(parsed);
  });

  it('DEL calls the daemon, twice and without a netns too', async () => {
    expect((await run('DEL', { ...conf(), prevResult: expectedResult })).code).toBe(0);
    expect((await run('DEL', conf(), { CNI_NETNS: '' })).code).toBe(0);
    expect(calls.del).toMatchObject([
      { Reason: 'PodDeleted', K8S_POD_UID: 'u1', PodPlumbing: true },
      { Reason: 'PodDeleted', PodPlumbing: true },
    ]);
  });

  it('DEL with the daemon down succeeds and tears down from prevResult', async () => {
    torn.length = 0;
    const { code } = await run('DEL', {
      ...conf({ ipamdSocket: join(dir.path, 'nobody.sock') }),
      prevResult: expectedResult,
    });
    expect(code).toBe(0);
    expect(torn).toEqual([{ address: '10.0.1.23', routeTableId: 2, hostVethName: 'eni1a2b3c4d5e6' }]);
  });

  it('a starting daemon (UNAVAILABLE until restored, ADR 0035): ADD is code 11 naming it, DEL tears down as when down', async () => {
    const startingSocket = join(dir.path, 'starting.sock');
    const starting = await listenRpc({ socketPath: startingSocket, starting: STARTING_MESSAGE });
    try {
      const add = await run('ADD', conf({ ipamdSocket: startingSocket }));
      expect(add.code).toBe(1);
      expect(add.out).toEqual({
        cniVersion: '1.0.0',
        code: CniErrorCode.TryAgainLater,
        msg: `add: ${STARTING_MESSAGE}`,
        details: `UNAVAILABLE from ${startingSocket}`,
      });
      torn.length = 0;
      const del = await run('DEL', { ...conf({ ipamdSocket: startingSocket }), prevResult: expectedResult });
      expect(del.code).toBe(0);
      expect(torn).toEqual([{ address: '10.0.1.23', routeTableId: 2, hostVethName: 'eni1a2b3c4d5e6' }]);
      const status = await run('STATUS', { ...conf({ ipamdSocket: startingSocket }), cniVersion: '1.1.0' });
      expect(status.out).toMatchObject({ code: CniErrorCode.PluginNotAvailable, details: STARTING_MESSAGE });
      const check = await run('CHECK', {
        ...conf({ ipamdSocket: startingSocket }),
        prevResult: expectedResult,
      });
      expect(check.out).toMatchObject({
        code: CniErrorCode.TryAgainLater,
        msg: `check: ${STARTING_MESSAGE}`,
      });
      expect(calls.add).toHaveLength(0);
      expect(calls.del).toHaveLength(0);
    } finally {
      await starting.close(10);
    }
  });

  it('STATUS reports the daemon health (50 when down)', async () => {
    expect((await run('STATUS', { ...conf(), cniVersion: '1.1.0' })).code).toBe(0);
    const { out } = await run('STATUS', {
      ...conf({ ipamdSocket: join(dir.path, 'nobody.sock') }),
      cniVersion: '1.1.0',
    });
    expect(out).toMatchObject({ code: CniErrorCode.PluginNotAvailable });
    nextStatus = { Ready: false, Reason: 'no free address, and no room for another ENI' };
    try {
      const notReady = await run('STATUS', { ...conf(), cniVersion: '1.1.0' });
      expect(notReady.out).toMatchObject({
        code: CniErrorCode.PluginNotAvailable,
        msg: 'aws-node: no free address, and no room for another ENI',
      });
    } finally {
      nextStatus = { Ready: true, Reason: '' };
    }
  });

  it('GC hands the valid attachments to the daemon', async () => {
    gcs.length = 0;
    const { code } = await run('GC', {
      ...conf(),
      cniVersion: '1.1.0',
      'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }],
    });
    expect(code).toBe(0);
    expect(gcs).toHaveLength(1);
    expect(gcs[0]).toMatchObject({
      NetworkName: 'aws-cni',
      ValidAttachments: [{ ContainerID: 'c1', IfName: 'eth0' }],
    });
    expect(Number(gcs[0]!.RequestedAtMs)).toBeGreaterThan(0);
  });
});

describe('the bundled aws-cni binary', () => {
  let plugin = '';
  beforeAll(async () => {
    plugin = join(dir.path, 'aws-cni');
    await build({
      entryPoints: [fileURLToPath(new URL('../src/plugin/main.ts', import.meta.url))],
      outfile: plugin,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      conditions: ['@vpc-cni-kit/source'],
      external: ['koffi'],
      define: { __AWS_CNI_VERSION__: '"test"' },
      banner: { js: '#!/usr/bin/env node' },
      logLevel: 'silent',
    });
    chmodSync(plugin, 0o755);
  });

  it.each(['0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const)(
    'ADD at %s through a real process',
    async (cniVersion) => {
      const { result } = await invokePlugin({
        pluginPath: plugin,
        command: 'ADD',
        config: conf({ cniVersion }),
        containerId: 'sandbox1',
        netns: '/run/netns/pod1',
        ifname: 'eth0',
        args: env.CNI_ARGS,
        cniPath: ['/opt/cni/bin'],
      });
      expect(result).toEqual({ ...expectedResult, cniVersion } satisfies Result);
    },
  );

  it('logs to pluginLogFile at pluginLogLevel, or to stderr when the file is empty', async () => {
    const logFile = join(dir.path, 'log', 'plugin.log');
    const run = (extra: object, containerId: string) =>
      invokePlugin({
        pluginPath: plugin,
        command: 'ADD',
        config: conf(extra),
        containerId,
        netns: '/run/netns/pod1',
        ifname: 'eth0',
        args: env.CNI_ARGS,
        cniPath: ['/opt/cni/bin'],
      });
    await run({ pluginLogFile: logFile, pluginLogLevel: 'Debug' }, 'logged1');
    nextAdd = { Success: false, FailureCode: 'PoolEmpty' };
    await run({ pluginLogFile: logFile, pluginLogLevel: 'Debug' }, 'logged2').catch(() => undefined);
    const entries = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.map((e) => `${e['level']} ${e['msg']}`)).toEqual([
      'info Received CNI add request',
      'debug AddNetwork reply',
      'info add done',
      'info Received CNI add request',
      'debug AddNetwork reply',
      'error add failed',
    ]);
    expect(entries[0]).toMatchObject({ containerID: 'logged1', pod: 'default/web-0', ifName: 'eth0' });
    expect(entries[2]).toMatchObject({ address: '10.0.1.23/32', hostVeth: 'eni1a2b3c4d5e6' });
    expect(typeof entries[2]?.['durationMs']).toBe('number');
    expect(entries[5]).toMatchObject({ containerID: 'logged2', code: CniErrorCode.TryAgainLater });

    nextAdd = plumbed;
    const quiet = await run({ pluginLogFile: '', pluginLogLevel: 'Info' }, 'logged3');
    const stderrLines = quiet.stderr.trim().split('\n');
    expect(stderrLines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([
      'Received CNI add request',
      'add done',
    ]);
  });

  it('reports daemon-side failure codes through a real process', async () => {
    nextAdd = { Success: false, FailureCode: 'PoolEmpty' };
    const e = await invokePlugin({
      pluginPath: plugin,
      command: 'ADD',
      config: conf(),
      containerId: 'c',
      netns: '/run/netns/p',
      ifname: 'eth0',
      cniPath: ['/x'],
    }).catch((x: unknown) => x);
    expect(isCniError(e) && e.code).toBe(CniErrorCode.TryAgainLater);
  });
});

describe('the aws-cni executable: launcher with a V8 code cache', () => {
  const binDir = join(dir.path, 'launcher-bin');
  const exe = join(binDir, 'aws-cni');
  const cache = `${exe}.v8cache`;
  let header = '';
  beforeAll(async () => {
    const program = await bundlePluginProgram({ version: 'test', conditions: ['@vpc-cni-kit/source'] });
    header = `aws-cni code cache ${JSON.parse(program.defines['__AWS_CNI_PROGRAM_ID__'] ?? '""')}\n`;
    await build({
      entryPoints: [fileURLToPath(new URL('../src/plugin/launcher.ts', import.meta.url))],
      outfile: exe,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      define: program.defines,
      banner: { js: '#!/usr/bin/env node' },
      logLevel: 'silent',
    });
    chmodSync(exe, 0o755);
  });

  const add = (processEnv?: Record<string, string | undefined>, timeoutMs?: number) =>
    invokePlugin({
      ...(processEnv ? { env: processEnv } : {}),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      pluginPath: exe,
      command: 'ADD',
      config: conf(),
      containerId: 'sandbox1',
      netns: '/run/netns/pod1',
      ifname: 'eth0',
      args: env.CNI_ARGS,
      cniPath: [binDir],
    });

  it('answers VERSION without writing a cache (it would not hold what an ADD runs)', async () => {
    expect((await getVersionInfo(exe)).supportedVersions).toContain('1.1.0');
    expect(existsSync(cache)).toBe(false);
  });

  it('writes the cache after the first ADD, then runs from it unchanged', async () => {
    expect((await add()).result).toEqual(expectedResult);
    const written = readFileSync(cache);
    expect(written.subarray(0, header.length).toString('latin1')).toBe(header);
    expect(written.length).toBeGreaterThan(header.length + 1000);
    expect((await add()).result).toEqual(expectedResult);
    expect(readFileSync(cache).equals(written)).toBe(true);
    expect(readdirSync(binDir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('loads neither node:net, node:v8 nor the stream module they bring (ADR 0004): only vm beyond bootstrap', async () => {
    const hook = join(dir.path, 'modules-hook.cjs');
    const report = join(dir.path, 'modules.json');
    writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));`,
    );
    const r = await add({ ...process.env, NODE_OPTIONS: `--require ${hook}` });
    expect(r.result).toEqual(expectedResult);
    const loaded = JSON.parse(readFileSync(report, 'utf8')) as string[];
    expect(loaded).toContain('NativeModule vm');
    for (const m of ['stream', 'net', 'v8', 'http2', 'internal/streams/duplex']) {
      expect(loaded).not.toContain(`NativeModule ${m}`);
    }
  });

  it('ignores and replaces a damaged cache (V8 would abort on it), and one made for another build', async () => {
    const good = readFileSync(cache);
    const damaged = Buffer.from(good);
    for (let i = header.length + 80; i < damaged.length; i += 97) damaged[i] = (damaged[i] ?? 0) ^ 0xff;
    writeFileSync(cache, damaged);
    expect((await add()).result).toEqual(expectedResult);
    expect(readFileSync(cache).equals(damaged)).toBe(false);

    const foreign = Buffer.from(good);
    foreign.write('0000', header.length - 5, 'latin1');
    expect(foreign.subarray(0, header.length).toString('latin1')).not.toBe(header);
    writeFileSync(cache, foreign);
    expect((await add()).result).toEqual(expectedResult);
    expect(readFileSync(cache).subarray(0, header.length).toString('latin1')).toBe(header);

    writeFileSync(cache, 'aws-cni code cache');
    expect((await add()).result).toEqual(expectedResult);
    expect(readFileSync(cache).length).toBeGreaterThan(1000);
  });

  it('replaces a cache V8 rejects (made under other V8 flags)', async () => {
    const before = readFileSync(cache);
    // V8 keys a cache by a hash of its flags: a heap limit makes this cache foreign to the process.
    const other = await add({ ...process.env, NODE_OPTIONS: '--max-old-space-size=300' });
    expect(other.result).toEqual(expectedResult);
    const after = readFileSync(cache);
    expect(after.equals(before)).toBe(false);
    expect(after.subarray(0, header.length).toString('latin1')).toBe(header);
  });

  it('takes a FIFO or a device where the cache goes for no cache, never waiting on it, and replaces it', async () => {
    for (const make of [
      () => execFileSync('mkfifo', [cache]),
      // /dev/zero never ends: read whole, it would fill the memory.
      () => symlinkSync('/dev/zero', cache),
    ]) {
      rmSync(cache, { force: true });
      make();
      try {
        // A plain open of the FIFO waits for a writer: the ADD would hang until this deadline.
        expect((await add(undefined, 10_000)).result).toEqual(expectedResult);
        expect(lstatSync(cache).isFile()).toBe(true);
        expect(readFileSync(cache).subarray(0, header.length).toString('latin1')).toBe(header);
      } finally {
        // Never left for a later read in this process to block on.
        if (!lstatSync(cache).isFile()) rmSync(cache);
      }
    }
  });
});
