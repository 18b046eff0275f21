/**
 * aws-vpc-cni-init decides and checks everything before it installs or sets anything: its settings (absolute
 * paths, as the daemon's), and each sysctl it will write (present and writable), so a node without IPv6 refuses
 * ENABLE_IPv6 with one line instead of failing halfway.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSysctls, InitPreconditionError, initSysctls, readInitConfig } from '../src/cli/init-plan.js';
import { describeStartFailure } from '../src/cli/start-failure.js';
import { ConfigError } from '../src/config/env-reader.js';

const problems = (env: Record<string, string>) => {
  try {
    readInitConfig(env);
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.map((p) => `${p.variable}: ${p.problem}`);
  }
};

describe('readInitConfig', () => {
  it('has the reference defaults', () => {
    expect(readInitConfig({})).toEqual({
      binDir: '/host/opt/cni/bin',
      corePluginsDir: undefined,
      ipv6: false,
      v6Egress: false,
      noEarlyDemux: false,
    });
  });

  it('refuses relative paths and malformed booleans, every problem at once', () => {
    expect(
      problems({
        HOST_CNI_BIN_PATH: 'opt/cni/bin',
        AWS_NODE_CORE_PLUGINS_DIR: 'plugins',
        ENABLE_IPv6: 'yes',
      }),
    ).toEqual([
      'HOST_CNI_BIN_PATH: must be an absolute path',
      'AWS_NODE_CORE_PLUGINS_DIR: must be an absolute path',
      'ENABLE_IPv6: must be a boolean (true/false/1/0)',
    ]);
  });
});

describe('the sysctls, checked before anything is set', () => {
  const dirs: { remove: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });
  /** A /proc/sys with only `keys`. */
  const procSys = (keys: string[]) => {
    const d = scratchDir('vck-proc-');
    dirs.push(d);
    for (const k of keys) {
      mkdirSync(dirname(join(d.path, k)), { recursive: true });
      writeFileSync(join(d.path, k), '0\n');
    }
    return d.path;
  };
  const v4 = ['net/ipv4/conf/eth0/rp_filter', 'net/ipv4/ip_forward', 'net/ipv4/tcp_early_demux'];
  const v6 = [
    'net/ipv6/conf/all/disable_ipv6',
    'net/ipv6/conf/all/forwarding',
    'net/ipv6/conf/eth0/accept_ra',
  ];

  it('plans the reference sysctls for each mode', () => {
    const keys = (env: Record<string, string>) => initSysctls('eth0', readInitConfig(env)).map((w) => w.key);
    expect(keys({})).toEqual(v4);
    expect(keys({ ENABLE_IPv6: 'true' })).toEqual([...v4, ...v6]);
    expect(keys({ ENABLE_V6_EGRESS: 'true' })).toEqual([...v4, ...v6.slice(1)]);
    expect(initSysctls('eth0', readInitConfig({ DISABLE_TCP_EARLY_DEMUX: 'true' }))[2]).toMatchObject({
      key: 'net/ipv4/tcp_early_demux',
      value: '0',
    });
  });

  it('passes when every sysctl is there; tcp_early_demux may be missing, as in the reference', () => {
    const plan = initSysctls('eth0', readInitConfig({ ENABLE_IPv6: 'true' }));
    expect(checkSysctls(plan, procSys([...v4, ...v6]))).toEqual(plan);
    expect(checkSysctls(plan, procSys([...v4.slice(0, 2), ...v6])).map((w) => w.key)).toEqual([
      ...v4.slice(0, 2),
      ...v6,
    ]);
  });

  it('ENABLE_IPv6 on a kernel without IPv6: one line naming the sysctl, the setting and what to do', () => {
    const plan = initSysctls('eth0', readInitConfig({ ENABLE_IPv6: 'true' }));
    let error: unknown;
    try {
      checkSysctls(plan, procSys(v4));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InitPreconditionError);
    expect((error as InitPreconditionError).code).toBe('SysctlUnavailable');
    expect(`aws-vpc-cni-init: ${describeStartFailure(error, { imdsEndpoint: undefined })}`).toBe(
      'aws-vpc-cni-init: failed to start: cannot set net.ipv6.conf.all.disable_ipv6=0 (ENOENT: this kernel does not have it), which ENABLE_IPv6=true needs: unset ENABLE_IPv6 on a node without IPv6, or boot it with IPv6; nothing was installed or set',
    );
  });

  it('a missing IPv4 sysctl (the primary interface gone) is refused too', () => {
    expect(() => checkSysctls(initSysctls('eth0', readInitConfig({})), procSys(v4.slice(1)))).toThrow(
      /^cannot set net\.ipv4\.conf\.eth0\.rp_filter=2 \(ENOENT: this kernel does not have it\), which every node needs: run it in the node's network namespace \(hostNetwork\); nothing was installed or set$/,
    );
  });
});
