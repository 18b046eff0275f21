/**
 * A real third-party runtime: Debian's libcni (via tools/libcni-runner) drives a plugin built on our skeleton,
 * chained before Debian's `tuning`, which decodes our result with the reference Go types and acts on the
 * interface it names.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildLibcniRunner,
  describePrivileged,
  ipCli,
  Libcni,
  scratchDir,
  uniqueName,
} from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CniErrorCode, invokePlugin, isCniError } from '../src/index.js';
import { buildTestPlugin } from './fixtures/build-plugin.js';

describePrivileged('libcni drives a skeleton plugin chained with Debian tuning', () => {
  const dir = scratchDir('vck-libcni-');
  const ns = uniqueName('vckcni');
  const netnsPath = `/run/netns/${ns}`;
  const log = join(dir.path, 'calls.jsonl');
  let cni: Libcni;
  let plugin: string;

  const mtu = () =>
    (JSON.parse(ipCli.inNetns(ns, ['-j', 'link', 'show', 'eth0'])) as Array<{ mtu: number }>)[0]?.mtu;
  const calls = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  function conflist(version: string, extra: Record<string, unknown> = {}): string {
    const file = join(dir.path, `net-${version}-${Object.keys(extra).join('-') || 'plain'}.conflist`);
    writeFileSync(
      file,
      JSON.stringify({
        cniVersion: version,
        name: 'vck-net',
        plugins: [
          {
            type: 'vck-test-plugin',
            address: '10.99.0.2/24',
            log,
            capabilities: { portMappings: true, 'io.kubernetes.cri.pod-annotations': true },
            ...extra,
          },
          { type: 'tuning', mtu: 1400 },
        ],
      }),
    );
    return file;
  }

  beforeAll(async () => {
    const [runner, p] = await Promise.all([buildLibcniRunner(), buildTestPlugin(join(dir.path, 'bin'))]);
    plugin = p;
    cni = new Libcni(runner, [join(dir.path, 'bin'), '/usr/lib/cni'], join(dir.path, 'cache'));
    ipCli.addNetns(ns);
    // The interface our test plugin reports; tuning changes its MTU, which proves it decoded our result.
    ipCli.inNetns(ns, ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
  }, 180_000);

  afterAll(() => {
    ipCli.delNetns(ns);
    dir.remove();
    expect(ipCli.listNetns()).not.toContain(ns);
  });

  it('reports our VERSION through libcni', async () => {
    const out = await cni.version('vck-test-plugin');
    expect(out).toEqual({
      ok: true,
      result: { cniVersion: '1.1.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] },
    });
  });

  describe.each(['0.3.1', '0.4.0', '1.0.0'])('at cniVersion %s', (version) => {
    const attachment = {
      containerId: `ctr-${version.replaceAll('.', '')}`,
      netns: netnsPath,
      ifname: 'eth0',
      args: {
        IgnoreUnknown: '1',
        K8S_POD_NAMESPACE: 'default',
        K8S_POD_NAME: 'web-0',
        K8S_POD_INFRA_CONTAINER_ID: 'sandbox1',
      },
      // What containerd (go-cni) sends: PascalCase members and null annotations.
      capabilityArgs: {
        portMappings: [{ HostPort: 18090, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }],
        'io.kubernetes.cri.pod-annotations': null,
      },
    };

    it('validates, ADDs, CHECKs, DELs (twice) through libcni with tuning chained after us', async () => {
      const file = conflist(version);
      expect(await cni.validate(file)).toMatchObject({ ok: true });

      const add = await cni.add(file, attachment);
      expect(add).toMatchObject({
        ok: true,
        result: { cniVersion: version, ips: [{ address: '10.99.0.2/24', gateway: '10.99.0.1' }] },
      });
      expect(mtu()).toBe(1400);

      const addCall = calls().at(-1);
      expect(addCall).toMatchObject({
        command: 'ADD',
        cniVersion: version,
        netns: netnsPath,
        args: {
          podName: 'web-0',
          podNamespace: 'default',
          podInfraContainerId: 'sandbox1',
          ignoreUnknown: true,
        },
        capabilities: { portMappings: true, 'io.kubernetes.cri.pod-annotations': true },
        runtimeConfig: {
          portMappings: [{ hostPort: 18090, containerPort: 80, protocol: 'tcp' }],
          podAnnotations: {},
        },
      });
      expect(addCall?.['rawKeys']).toEqual(
        expect.arrayContaining(['capabilities', 'runtimeConfig', 'name', 'cniVersion', 'type']),
      );

      const cached = await cni.cached(file, attachment);
      expect(cached).toMatchObject({ ok: true, result: { ips: [{ address: '10.99.0.2/24' }] } });

      const check = await cni.check(file, attachment);
      if (version === '0.3.1') {
        expect(check.ok).toBe(false);
      } else {
        expect(check).toEqual({ ok: true });
        expect(calls().at(-1)).toMatchObject({
          command: 'CHECK',
          prevResult: { ips: [{ address: '10.99.0.2/24' }] },
        });
      }

      expect(await cni.del(file, attachment)).toEqual({ ok: true });
      const del = calls().at(-1);
      expect(del?.['command']).toBe('DEL');
      if (version === '0.3.1') expect(del?.['prevResult']).toBeUndefined();
      else expect(del).toMatchObject({ prevResult: { ips: [{ address: '10.99.0.2/24' }] } });
      expect(mtu()).toBe(1500);

      // containerd's second DEL: no netns.
      expect(await cni.del(file, { ...attachment, netns: '' })).toEqual({ ok: true });
    });

    it('propagates our error code through libcni and tuning never runs', async () => {
      const out = await cni.add(conflist(version, { failAdd: CniErrorCode.TryAgainLater }), {
        ...attachment,
        containerId: 'failing',
      });
      expect(out).toMatchObject({ ok: false, error: { code: 11, msg: 'asked to fail ADD' } });
      expect(mtu()).toBe(1500);
    });
  });

  it('1.1.0 GC and STATUS by direct invocation (Debian libcni stops at 1.0.0)', async () => {
    const base = { cniVersion: '1.1.0', name: 'vck-net', type: 'vck-test-plugin', log };
    await invokePlugin({ pluginPath: plugin, command: 'STATUS', config: base, cniPath: ['/usr/lib/cni'] });
    await invokePlugin({
      pluginPath: plugin,
      command: 'GC',
      config: { ...base, 'cni.dev/valid-attachments': [{ containerID: 'ctr-100', ifname: 'eth0' }] },
      cniPath: ['/usr/lib/cni'],
    });
    expect(calls().at(-1)).toMatchObject({
      command: 'GC',
      validAttachments: [{ containerID: 'ctr-100', ifname: 'eth0' }],
    });
    try {
      await invokePlugin({
        pluginPath: plugin,
        command: 'STATUS',
        config: { ...base, unavailable: true },
        cniPath: ['/x'],
      });
      expect.fail('STATUS should fail');
    } catch (e) {
      expect(isCniError(e) && e.code).toBe(CniErrorCode.PluginNotAvailable);
    }
  });
});
