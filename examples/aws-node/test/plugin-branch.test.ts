/**
 * The aws-cni plugin and branch-ENI pods (security groups for pods), against a gRPC daemon: the reference's
 * result shape (VLAN id in the dummy interface), DEL from prevResult when the daemon cannot or did not tear the
 * branch down, and one CNI code per cause.
 */
import { join } from 'node:path';
import { runPlugin } from '@vpc-cni-kit/cni-spec';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { daemonClient } from '../src/plugin/daemon-client.js';
import { awsCniHandlers } from '../src/plugin/handlers.js';
import type { PrevResultBranchPod } from '../src/plugin/result.js';
import { BRANCH_FAILURES, type BranchCause } from '../src/rpc/branch-failures.js';
import { type RpcServer, RpcStatusError, startRpcServer } from '../src/rpc/grpc-server.js';
import type { AddNetworkReply, DelNetworkReply } from '../src/rpc/messages.js';

const dir = scratchDir('vck-plugin-branch-');
const socket = join(dir.path, 'ipamd.sock');
let server: RpcServer;
let nextAdd: Partial<AddNetworkReply> | Error = {};
let nextDel: Partial<DelNetworkReply> = {};
const torn: PrevResultBranchPod[] = [];

const branchReply: Partial<AddNetworkReply> = {
  Success: true,
  IPAllocationMetadata: [{ IPv4Addr: '10.0.7.9', IPv6Addr: '', DeviceNumber: -1, RouteTableId: 0 }],
  PodVlanId: 5,
  PodENIMAC: '0a:00:00:00:00:b5',
  PodENISubnetGW: '10.0.0.1',
  ParentIfIndex: 7,
  PodPlumbed: true,
  HostVethName: 'vlan1a2b3c4d5e6',
  HostVethMac: '2a:00:00:00:00:01',
};

beforeAll(async () => {
  server = await startRpcServer({
    socketPath: socket,
    backend: {
      async addNetwork() {
        if (nextAdd instanceof Error) throw nextAdd;
        return nextAdd;
      },
      async delNetwork() {
        return nextDel;
      },
      async status() {
        return { Ready: true, Reason: '' };
      },
      async gc() {
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
  nextAdd = branchReply;
  nextDel = { Success: true, PodVlanId: 5 };
  torn.length = 0;
});

const handlers = (socketPath: string) =>
  awsCniHandlers({
    daemon: () => daemonClient(socketPath, 2000),
    teardownWithoutDaemon: async () => {
      throw new Error('an ordinary teardown for a branch pod');
    },
    teardownBranchWithoutDaemon: async (pod) => {
      torn.push(pod);
    },
    verify: async () => {},
    version: 'test',
  });

const conf = { cniVersion: '1.0.0', name: 'aws-cni', type: 'aws-cni', vethPrefix: 'eni', mtu: '1500' };
const env = {
  CNI_CONTAINERID: 'sandbox1',
  CNI_NETNS: '/run/netns/pod1',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
  CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=db-client-0',
};

async function run(command: string, stdin: object, options: { netns?: string; socket?: string } = {}) {
  let stdout = '';
  const code = await runPlugin(handlers(options.socket ?? socket), {
    env: { ...env, CNI_NETNS: options.netns ?? env.CNI_NETNS, CNI_COMMAND: command },
    stdin: () => JSON.stringify({ ...stdin, ipamdSocket: options.socket ?? socket }),
    stdout: (t) => {
      stdout += t;
    },
    stderr: () => {},
  });
  return { code, out: stdout === '' ? undefined : JSON.parse(stdout) };
}

const branchResult = {
  cniVersion: '1.0.0',
  interfaces: [
    { name: 'vlan1a2b3c4d5e6', mac: '2a:00:00:00:00:01' },
    { name: 'eth0', sandbox: '/run/netns/pod1', mac: '0' },
    { name: 'dummy1a2b3c4d5e6', mac: '5' },
  ],
  ips: [{ address: '10.0.7.9/32', interface: 1, gateway: '10.0.0.1' }],
};

describe('aws-cni and branch-ENI pods', () => {
  it("ADD prints the reference's branch result: VLAN id in the dummy, the subnet gateway on the address", async () => {
    const { code, out } = await run('ADD', conf);
    expect(code).toBe(0);
    expect(out).toEqual(branchResult);
  });

  it('DEL leaves the teardown to the daemon that plumbed the pod', async () => {
    const { code } = await run('DEL', { ...conf, prevResult: branchResult });
    expect(code).toBe(0);
    expect(torn).toEqual([]);
  });

  it('DEL tears down from prevResult when the daemon does not know the pod (it restarted)', async () => {
    nextDel = { Success: true, IPAllocationMetadata: [] };
    const { code } = await run('DEL', { ...conf, prevResult: branchResult });
    expect(code).toBe(0);
    expect(torn).toEqual([{ vlanId: 5, address: '10.0.7.9', hostVethName: 'vlan1a2b3c4d5e6' }]);
  });

  it('DEL tears down from prevResult without the daemon, and does nothing more once the netns is gone', async () => {
    const gone = join(dir.path, 'no-daemon.sock');
    expect((await run('DEL', { ...conf, prevResult: branchResult }, { socket: gone })).code).toBe(0);
    expect(torn).toHaveLength(1);
    expect((await run('DEL', { ...conf, prevResult: branchResult }, { socket: gone, netns: '' })).code).toBe(
      0,
    );
    expect(torn).toHaveLength(1);
  });

  it('DEL refuses a malformed VLAN marker in prevResult', async () => {
    const bad = {
      ...branchResult,
      interfaces: [
        branchResult.interfaces[0],
        branchResult.interfaces[1],
        { name: 'dummy1a2b3c4d5e6', mac: 'x5' },
      ],
    };
    const { code, out } = await run('DEL', { ...conf, prevResult: bad });
    expect(code).not.toBe(0);
    expect(out.msg).toContain('malformed vlanID in prevResult: x5');
  });

  const causes = Object.entries(BRANCH_FAILURES).filter(([, row]) => row.failure !== undefined) as [
    BranchCause,
    (typeof BRANCH_FAILURES)[BranchCause],
  ][];
  for (const [cause, row] of causes) {
    it(`ADD reports ${cause} as CNI code ${row.cniCode}`, async () => {
      nextAdd = { Success: false, FailureCode: row.failure!, FailureMessage: `AddNetwork: ${cause} detail` };
      const { code, out } = await run('ADD', conf);
      expect(code).not.toBe(0);
      expect(out).toMatchObject({
        code: row.cniCode,
        msg: row.message,
        details: `AddNetwork: ${cause} detail`,
      });
    });
  }

  it('ADD reports a plugin/daemon version mismatch as CNI code 120', async () => {
    nextAdd = new RpcStatusError(9, 'wrong client version "test" (!= "v2")');
    const { out } = await run('ADD', conf);
    expect(out).toMatchObject({ code: 120, details: expect.stringContaining('wrong client version') });
    expect(out.msg).toContain(BRANCH_FAILURES.VERSION_MISMATCH.message);
  });
});
