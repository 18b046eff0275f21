/**
 * The ClientVersion check on every verb that reaches the daemon: aws-cni's ADD, DEL, GC and STATUS through the
 * real daemon client and gRPC server. The reference (v1.23.1) has only AddNetwork and DelNetwork and refuses
 * another version on both; this daemon's GC and STATUS extensions are held to the same rule, so a mismatched
 * plugin's GC releases nothing and its STATUS does not say ready for ADDs that would be refused.
 */
import { join } from 'node:path';
import { CniErrorCode, runPlugin } from '@vpc-cni-kit/cni-spec';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClientVersion, checkingClientVersion } from '../src/daemon/client-version.js';
import { daemonClient } from '../src/plugin/daemon-client.js';
import { awsCniHandlers } from '../src/plugin/handlers.js';
import { BRANCH_FAILURES } from '../src/rpc/branch-failures.js';
import { type RpcServer, startRpcServer } from '../src/rpc/grpc-server.js';

const dir = scratchDir('vck-client-version-');
const socket = join(dir.path, 'ipamd.sock');
let server: RpcServer;
const reached: string[] = [];

beforeAll(async () => {
  server = await startRpcServer({
    socketPath: socket,
    backend: checkingClientVersion('v1.23.1', {
      async addNetwork(req) {
        checkClientVersion('v1.23.1', req.ClientVersion); // as ipamBackend does
        reached.push('add');
        return { Success: false, FailureCode: 'PoolEmpty', FailureMessage: 'empty' };
      },
      async delNetwork(req) {
        checkClientVersion('v1.23.1', req.ClientVersion);
        reached.push('del');
        return { Success: true };
      },
      async gc() {
        reached.push('gc');
        return { Released: [] };
      },
      async status() {
        reached.push('status');
        return { Ready: true, Reason: '' };
      },
    }),
  });
});
afterAll(async () => {
  await server.close(100);
  dir.remove();
});

const env = {
  CNI_CONTAINERID: 'sandbox1',
  CNI_NETNS: '/run/netns/pod1',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
  CNI_ARGS:
    'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=sandbox1',
};
const conf = {
  cniVersion: '1.1.0',
  name: 'aws-cni',
  type: 'aws-cni',
  ipamdSocket: socket,
  'cni.dev/valid-attachments': [],
};

async function run(version: string, command: string) {
  let stdout = '';
  const handlers = awsCniHandlers({
    daemon: (s) => daemonClient(s, 2000),
    teardownWithoutDaemon: async () => {},
    verify: async () => {},
    version,
  });
  const code = await runPlugin(handlers, {
    env: { ...env, CNI_COMMAND: command },
    stdin: () => JSON.stringify(conf),
    stdout: (t) => {
      stdout += t;
    },
    stderr: () => {},
  });
  return { code, out: stdout === '' ? undefined : (JSON.parse(stdout) as Record<string, unknown>) };
}

describe('ClientVersion on every verb that calls aws-node', () => {
  it('the same version (or none) reaches the backend on ADD, DEL, GC and STATUS', async () => {
    reached.length = 0;
    for (const version of ['v1.23.1', '']) {
      expect((await run(version, 'ADD')).out).toMatchObject({ code: CniErrorCode.TryAgainLater });
      for (const verb of ['DEL', 'GC', 'STATUS']) expect((await run(version, verb)).code).toBe(0);
    }
    expect(reached).toEqual(['add', 'del', 'gc', 'status', 'add', 'del', 'gc', 'status']);
  });

  it('another version: ADD and GC are the version-mismatch error (120); STATUS is not available (50)', async () => {
    reached.length = 0;
    const mismatch = {
      code: BRANCH_FAILURES.VERSION_MISMATCH.cniCode,
      details: 'wrong client version "v1.22.0" (!= "v1.23.1")',
    };
    expect((await run('v1.22.0', 'ADD')).out).toMatchObject(mismatch);
    expect((await run('v1.22.0', 'GC')).out).toMatchObject({
      ...mismatch,
      msg: `gc: ${BRANCH_FAILURES.VERSION_MISMATCH.message}`,
    });
    expect((await run('v1.22.0', 'STATUS')).out).toEqual({
      cniVersion: '1.1.0',
      code: CniErrorCode.PluginNotAvailable,
      msg: `status: ${BRANCH_FAILURES.VERSION_MISMATCH.message}`,
      details: mismatch.details,
    });
    expect(reached).toEqual([]);
  });
});
