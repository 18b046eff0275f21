/**
 * egress-cni's handlers in-process, with hand-written fakes for IPAM and the kernel side: what happens before
 * anything is touched (validation, the disabled pass-through) and the rollback of a failed ADD. The kernel
 * work itself runs in egress.privileged.test.ts.
 */
import {
  CniError,
  CniErrorCode,
  type PluginConfig,
  parsePluginConfig,
  type Result,
  readCniEnv,
} from '@vpc-cni-kit/cni-spec';
import { addEgressSnat, egressSnatInPlace, planEgressSnat, readEgressNat } from '@vpc-cni-kit/iptables-snat';
import { FakeNetfilter } from '@vpc-cni-kit/iptables-snat/testing';
import type { NetlinkHandleSync } from '@vpc-cni-kit/netlink';
import { describe, expect, it } from 'vitest';
import { type EgressIpam, type EgressKernel, egressHandlers } from '../src/egress/handlers.js';

const prevResult: Result = {
  cniVersion: '1.0.0',
  interfaces: [
    { name: 'eni1234', mac: '' },
    { name: 'eth0', sandbox: '/run/netns/pod' },
  ],
  ips: [{ address: '2600:1f14::7/128', interface: 1 }],
};

function config(extra: Record<string, unknown> = {}, chained = true): PluginConfig {
  return parsePluginConfig({
    cniVersion: '1.0.0',
    name: 'aws-cni',
    type: 'egress-cni',
    mtu: '9001',
    enabled: 'true',
    randomizeSNAT: 'prng',
    nodeIP: '10.0.1.5',
    ipam: { type: 'host-local', ranges: [[{ subnet: '169.254.172.0/22' }]], routes: [{ dst: '0.0.0.0/0' }] },
    ...(chained ? { prevResult } : {}),
    ...extra,
  });
}

const env = readCniEnv({
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'ctr1',
  CNI_NETNS: '/run/netns/pod',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
});

/** Records every call; `ipamResult` is what IPAM ADD gives; `ipamMissing` makes `find` fail as findPlugin does. */
function fakes(ipamResult: Result, ipamMissing = false) {
  const calls: string[] = [];
  const ipam: EgressIpam = {
    async find(_ctx, type) {
      calls.push(`ipam.find ${type}`);
      if (ipamMissing)
        throw new CniError(CniErrorCode.InvalidNetworkConfig, `failed to find plugin "${type}"`);
      return `/opt/cni/bin/${type}`;
    },
    async add() {
      calls.push('ipam.add');
      return ipamResult;
    },
    async del() {
      calls.push('ipam.del');
    },
    async check() {
      calls.push('ipam.check');
    },
  };
  const record =
    (name: string) =>
    (..._args: unknown[]): never => {
      calls.push(name);
      throw new Error(`${name} not expected here`);
    };
  const kernel: EgressKernel = {
    open: (podNetns) => {
      calls.push('kernel.open');
      // The plumbing fakes below never touch the handles; only close() is called.
      const handle = {} as NetlinkHandleSync;
      return { host: handle, pod: handle, podNetns, close: () => calls.push('close') };
    },
    plumbing: {
      enableIpv4Forwarding: record('enableIpv4Forwarding'),
      plumbV4: record('plumbV4'),
      plumbV6: record('plumbV6'),
      removeEgressLink: (_pod, ifname) => {
        calls.push(`removeEgressLink ${ifname}`);
      },
      egressAddressOf: record('egressAddressOf'),
      verifyEgress: record('verifyEgress'),
    },
    snat: {
      addEgressSnat: record('addEgressSnat'),
      deleteEgressSnat: async (_t, chain) => {
        calls.push(`deleteEgressSnat ${chain}`);
        return 1;
      },
      egressChainName: (n, id, f) => `CNI-E${f}-${n}-${id}`,
      egressSnatInPlace: record('egressSnatInPlace'),
      planEgressSnat,
      readEgressNat: async (_t, family) => {
        calls.push('readEgressNat');
        return { family, nat: undefined, header: undefined };
      },
    },
    tools: { runner: { run: record('runner') } },
  };
  const handlers = egressHandlers({
    ipam,
    kernel: async () => {
      calls.push('kernel');
      return kernel;
    },
    hostVethName: () => 'veth00000000',
  });
  return { calls, handlers, kernel };
}

async function cniError(p: Promise<unknown>): Promise<CniError> {
  try {
    await p;
  } catch (e) {
    return e as CniError;
  }
  throw new Error('expected a CniError');
}

describe('egress-cni handlers', () => {
  it('enabled "false": ADD returns the previous result as it came; DEL and CHECK do nothing', async () => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    const ctx = { env, config: config({ enabled: 'false' }), log: () => {} };
    expect(await handlers.add(ctx)).toBe(ctx.config.prevResult);
    await handlers.del({ ...ctx, env: { ...env, command: 'DEL' } });
    await handlers.check?.({ ...ctx, env: { ...env, command: 'CHECK' } });
    expect(calls).toEqual([]);
  });

  it.each([
    [{ mtu: 9001 }, 'invalid network config: mtu: must be a string'],
    [{ mtu: 'jumbo' }, 'invalid network config: mtu: must be a decimal string'],
    [{ mtu: '70000' }, 'invalid network config: mtu: must be from 576 to 9001'],
    [{ mtu: '100' }, 'invalid network config: mtu: must be from 576 to 9001'],
    [{ randomizeSNAT: 'fully' }, 'invalid network config: randomizeSNAT: must be prng, hashrandom or none'],
    [{ nodeIP: '10.0.1' }, 'invalid network config: nodeIP: not an IP address'],
    [
      { nodeIP: '' },
      'global unicast IPv6 not found in host primary interface which is mandatory to support IPv6 egress',
    ],
    [
      { nodeIP: 'ff02::1' },
      'global unicast IPv6 not found in host primary interface which is mandatory to support IPv6 egress',
    ],
    [{ ipam: undefined }, 'invalid network config: ipam: must name the IPAM plugin (host-local)'],
  ])('%j: code 7 before IPAM or the kernel is touched', async (bad, msg) => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    const e = await cniError(
      Promise.resolve().then(() => handlers.add({ env, config: config(bad), log: () => {} })),
    );
    expect({ code: e.code, msg: e.message }).toEqual({ code: 7, msg });
    expect(calls).toEqual([]);
  });

  it('not chained: "must be called as a chained plugin", code 7', async () => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    const e = await cniError(
      Promise.resolve().then(() => handlers.add({ env, config: config({}, false), log: () => {} })),
    );
    expect({ code: e.code, msg: e.message }).toEqual({ code: 7, msg: 'must be called as a chained plugin' });
    expect(calls).toEqual([]);
  });

  it.each([
    [[], 'IPAM plugin returned zero IPs'],
    [
      [{ address: '169.254.172.2/22' }, { address: '169.254.172.3/22' }],
      'IPAM plugin is expected to return 1 IP address, but returned 2 IPs',
    ],
    [[{ address: 'fd00::ac:2/118' }], 'IPAM gave fd00::ac:2/118 for IPv4 egress'],
  ])('IPAM giving %j: code 999 and the allocation released', async (ips, msg) => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0', ips });
    const e = await cniError(
      Promise.resolve().then(() => handlers.add({ env, config: config(), log: () => {} })),
    );
    expect({ code: e.code, msg: e.message }).toEqual({ code: 999, msg });
    expect(calls).toEqual([
      'ipam.find host-local',
      'ipam.add',
      'kernel',
      'readEgressNat',
      'kernel.open',
      'removeEgressLink v4if0',
      'deleteEgressSnat CNI-E4-aws-cni-ctr1',
      'ipam.del',
      'close',
    ]);
  });

  const bad = [
    { mtu: 'jumbo' },
    { mtu: 9001 },
    { randomizeSNAT: 'fully' },
    { nodeIP: '10.0.1' },
    { pluginLogFile: 7 },
  ];

  it.each(bad)(
    'enabled "false" with %j: ADD passes through, CHECK and DEL do nothing, all succeed',
    async (b) => {
      const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
      const ctx = { env, config: config({ enabled: 'false', ...b }), log: () => {} };
      expect(await handlers.add(ctx)).toBe(ctx.config.prevResult);
      await handlers.check?.({ ...ctx, env: { ...env, command: 'CHECK' } });
      await handlers.del({ ...ctx, env: { ...env, command: 'DEL' } });
      expect(calls).toEqual([]);
    },
  );

  it.each(bad.slice(0, 3))(
    'DEL with %j still releases the allocation, the chain and the interface',
    async (b) => {
      const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
      await handlers.del({ env: { ...env, command: 'DEL' }, config: config(b), log: () => {} });
      expect(calls).toEqual([
        'ipam.find host-local',
        'kernel',
        'ipam.del',
        'deleteEgressSnat CNI-E4-aws-cni-ctr1',
        'kernel.open',
        'removeEgressLink v4if0',
        'close',
      ]);
    },
  );

  it("DEL with a nodeIP that is no address undoes both families (the ADD's cannot be told)", async () => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    await handlers.del({
      env: { ...env, command: 'DEL' },
      config: config({ nodeIP: '10.0.1' }),
      log: () => {},
    });
    expect(calls.filter((c) => !c.startsWith('ipam') && c !== 'kernel')).toEqual([
      'deleteEgressSnat CNI-E4-aws-cni-ctr1',
      'deleteEgressSnat CNI-E6-aws-cni-ctr1',
      'kernel.open',
      'removeEgressLink v4if0',
      'removeEgressLink v6if0',
      'close',
    ]);
    expect(calls).toContain('ipam.del');
  });

  it('DEL without the IPAM plugin removes the chain and the interface, then reports the missing plugin', async () => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' }, true);
    const e = await cniError(
      Promise.resolve().then(() =>
        handlers.del({ env: { ...env, command: 'DEL' }, config: config(), log: () => {} }),
      ),
    );
    expect({ code: e.code, msg: e.message }).toEqual({ code: 7, msg: 'failed to find plugin "host-local"' });
    expect(calls).toEqual([
      'ipam.find host-local',
      'kernel',
      'deleteEgressSnat CNI-E4-aws-cni-ctr1',
      'kernel.open',
      'removeEgressLink v4if0',
      'close',
    ]);
  });

  it('ADD with egress on and enabled not a string: code 7 naming the key', async () => {
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    const e = await cniError(
      Promise.resolve().then(() => handlers.add({ env, config: config({ enabled: true }), log: () => {} })),
    );
    expect({ code: e.code, msg: e.message }).toEqual({
      code: 7,
      msg: 'invalid network config: enabled: must be a string',
    });
    expect(calls).toEqual([]);
  });

  it('ADD with a pluginLogLevel the daemon would not accept: code 7 before anything is touched (as aws-cni)', async () => {
    for (const pluginLogLevel of ['verbose', 'trace', 'in fo']) {
      const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
      const e = await cniError(
        Promise.resolve().then(() =>
          handlers.add({ env, config: config({ pluginLogLevel }), log: () => {} }),
        ),
      );
      expect({ code: e.code, msg: e.message }).toEqual({
        code: 7,
        msg: 'invalid network config: pluginLogLevel: must be one of debug, info, warn, warning, error, fatal',
      });
      expect(calls).toEqual([]);
    }
    // DEL stays lenient: the pod's allocation and chain are released whatever the level says.
    const { calls, handlers } = fakes({ cniVersion: '1.0.0' });
    await handlers.del({ env, config: config({ pluginLogLevel: 'verbose' }), log: () => {} });
    expect(calls).toContain('ipam.del');
  });

  it('CHECK reads nat once, even when the chain carries --random (an iptables without --random-fully)', async () => {
    const { calls, handlers, kernel } = fakes({ cniVersion: '1.0.0' });
    const netfilter = new FakeNetfilter();
    const snat = { network: 'aws-cni', containerId: 'ctr1', podIp: '169.254.172.2', nodeIp: '10.0.1.5' };
    await addEgressSnat({ runner: netfilter }, { ...snat, randomFullySupported: false });
    const savesBefore = netfilter.calls.filter((c) => c.file === 'iptables-save').length;
    kernel.tools = { runner: netfilter };
    kernel.snat = { ...kernel.snat, egressSnatInPlace, readEgressNat };
    kernel.plumbing = { ...kernel.plumbing, verifyEgress: () => snat.podIp };
    await handlers.check?.({ env: { ...env, command: 'CHECK' }, config: config(), log: () => {} });
    expect(netfilter.calls.filter((c) => c.file === 'iptables-save').length - savesBefore).toBe(1);
    expect(calls).toEqual(['ipam.find host-local', 'ipam.check', 'kernel', 'kernel.open', 'close']);
  });
});
