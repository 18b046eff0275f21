import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CniErrorCode, findPlugin, getVersionInfo, invokePlugin, isCniError } from '../src/index.js';
import { buildTestPlugin } from './fixtures/build-plugin.js';

const dir = scratchDir('vck-invoke-');
let plugin = '';
const log = join(dir.path, 'calls.jsonl');
const attachment = {
  containerId: 'ctr1',
  netns: '/run/netns/none',
  ifname: 'eth0',
  cniPath: [dir.path],
  env: { PATH: process.env['PATH'] },
};

function script(name: string, body: string): string {
  const p = join(dir.path, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

async function rejection(
  p: Promise<unknown>,
): Promise<{ code: number; msg: string; details: string | undefined }> {
  try {
    await p;
  } catch (e) {
    if (isCniError(e)) return { code: e.code, msg: e.message, details: e.details };
    throw e;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  plugin = await buildTestPlugin(dir.path);
});
afterAll(() => dir.remove());

describe('invokePlugin against a real plugin process', () => {
  const config = { cniVersion: '1.0.0', name: 'net', type: 'vck-test-plugin', log, address: '10.9.0.4/24' };

  it('decodes an ADD result in the request version', async () => {
    const { result } = await invokePlugin({ pluginPath: plugin, command: 'ADD', config, ...attachment });
    expect(result).toEqual({
      cniVersion: '1.0.0',
      interfaces: [{ name: 'eth0', sandbox: '/run/netns/none', mac: '0a:58:0a:63:00:02' }],
      ips: [{ address: '10.9.0.4/24', gateway: '10.99.0.1', interface: 0 }],
      routes: [{ dst: '0.0.0.0/0', gw: '10.99.0.1' }],
      dns: { nameservers: ['10.99.0.10'] },
    });
  });

  it('passes CNI_ARGS and the config through', async () => {
    await invokePlugin({
      pluginPath: plugin,
      command: 'DEL',
      config,
      ...attachment,
      args: 'IgnoreUnknown=1;K8S_POD_NAME=web',
    });
    const last = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').at(-1) ?? '{}');
    expect(last).toMatchObject({
      command: 'DEL',
      containerId: 'ctr1',
      args: { podName: 'web', ignoreUnknown: true },
    });
  });

  it('answers VERSION', async () => {
    expect(await getVersionInfo(plugin)).toEqual({
      cniVersion: '1.1.0',
      supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
  });

  it('reports the plugin’s own error code', async () => {
    const e = await rejection(
      invokePlugin({ pluginPath: plugin, command: 'ADD', config: { ...config, failAdd: 11 }, ...attachment }),
    );
    expect(e).toEqual({
      code: CniErrorCode.TryAgainLater,
      msg: 'asked to fail ADD',
      details: 'failAdd is set',
    });
  });

  it('STATUS and GC at 1.1.0', async () => {
    const c110 = { ...config, cniVersion: '1.1.0' };
    await invokePlugin({ pluginPath: plugin, command: 'STATUS', config: c110, cniPath: [dir.path] });
    const e = await rejection(
      invokePlugin({
        pluginPath: plugin,
        command: 'STATUS',
        config: { ...c110, unavailable: true },
        cniPath: [dir.path],
      }),
    );
    expect(e.code).toBe(CniErrorCode.PluginNotAvailable);
    await invokePlugin({
      pluginPath: plugin,
      command: 'GC',
      config: { ...c110, 'cni.dev/valid-attachments': [{ containerID: 'ctr1', ifname: 'eth0' }] },
      cniPath: [dir.path],
    });
    const last = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').at(-1) ?? '{}');
    expect(last).toMatchObject({
      command: 'GC',
      validAttachments: [{ containerID: 'ctr1', ifname: 'eth0' }],
    });
  });

  it('falls back to stderr when a plugin prints no error object (code 999)', async () => {
    const p = script('noisy', 'echo "cannot do it" >&2; exit 3');
    expect(await rejection(invokePlugin({ pluginPath: p, command: 'DEL', config }))).toEqual({
      code: 999,
      msg: 'cannot do it',
      details: undefined,
    });
  });

  it('rejects a success output that is not a result (code 6)', async () => {
    const p = script('liar', 'echo "hello"');
    expect((await rejection(invokePlugin({ pluginPath: p, command: 'ADD', config }))).code).toBe(
      CniErrorCode.DecodeFailure,
    );
  });

  it('kills a plugin that exceeds the timeout', async () => {
    const p = script('slow', 'sleep 5');
    const e = await rejection(invokePlugin({ pluginPath: p, command: 'DEL', config, timeoutMs: 200 }));
    expect(e.code).toBe(999);
    expect(e.msg).toMatch(/timed out after 200 ms/);
  });

  it('reports a binary that cannot start', async () => {
    const e = await rejection(
      invokePlugin({ pluginPath: join(dir.path, 'missing'), command: 'DEL', config }),
    );
    expect(e.msg).toMatch(/cannot run plugin/);
  });

  it('finds plugins in CNI_PATH order', async () => {
    expect(await findPlugin('vck-test-plugin', ['/nonexistent', dir.path])).toBe(plugin);
    expect((await rejection(findPlugin('nope', [dir.path]))).msg).toMatch(/failed to find plugin "nope"/);
  });
});
