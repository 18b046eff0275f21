import { describe, expect, it } from 'vitest';
import {
  CniErrorCode,
  isCniError,
  parseConfList,
  parsePluginConfig,
  parseRuntimeConfig,
  SUPPORTED_VERSIONS,
} from '../src/index.js';

function expectCniError(fn: () => unknown, code: number, msg: RegExp): void {
  try {
    fn();
    expect.fail('expected a CNI error');
  } catch (e) {
    expect(isCniError(e), String(e)).toBe(true);
    if (!isCniError(e)) return;
    expect(e.code).toBe(code);
    expect(`${e.message} ${e.details ?? ''}`).toMatch(msg);
  }
}

describe('parsePluginConfig', () => {
  it.each(SUPPORTED_VERSIONS)('accepts a libcni request at %s, capabilities and all', (v) => {
    const cfg = parsePluginConfig(
      JSON.stringify({
        cniVersion: v,
        name: 'aws-cni',
        type: 'aws-cni',
        capabilities: { 'io.kubernetes.cri.pod-annotations': true },
        runtimeConfig: { 'io.kubernetes.cri.pod-annotations': null },
        mtu: '9001',
        prevResult: { cniVersion: v, ips: [{ address: '10.0.0.9/32' }] },
      }),
    );
    expect(cfg.cniVersion).toBe(v);
    expect(cfg.capabilities).toEqual({ 'io.kubernetes.cri.pod-annotations': true });
    expect(cfg.runtimeConfig?.podAnnotations).toEqual({});
    expect(cfg.prevResult?.ips).toEqual([{ address: '10.0.0.9/32' }]);
    expect(cfg.raw['mtu']).toBe('9001');
  });

  it('reads GC attachments from either key', () => {
    const a = [{ containerID: 'c1', ifname: 'eth0' }];
    expect(
      parsePluginConfig({ cniVersion: '1.1.0', name: 'n', type: 't', 'cni.dev/valid-attachments': a })
        .validAttachments,
    ).toEqual(a);
    expect(
      parsePluginConfig({ cniVersion: '1.1.0', name: 'n', type: 't', 'cni.dev/attachments': a })
        .validAttachments,
    ).toEqual(a);
  });

  const bad: Array<[string, unknown, number, RegExp]> = [
    ['garbage', 'not json', CniErrorCode.DecodeFailure, /not valid JSON/],
    [
      'bytes that are not UTF-8 (not replaced by U+FFFD)',
      Buffer.from([...Buffer.from('{"cniVersion":"1.0.0","name":"a'), 0xff, ...Buffer.from('","type":"t"}')]),
      CniErrorCode.DecodeFailure,
      /network config: not valid UTF-8/,
    ],
    ['no version', { name: 'n', type: 't' }, CniErrorCode.IncompatibleVersion, /no cniVersion/],
    [
      'version 0.2.0',
      { cniVersion: '0.2.0', name: 'n', type: 't' },
      CniErrorCode.IncompatibleVersion,
      /config is "0.2.0"/,
    ],
    [
      'no name',
      { cniVersion: '1.0.0', type: 't' },
      CniErrorCode.InvalidNetworkConfig,
      /name: must be a string/,
    ],
    [
      'a bad name',
      { cniVersion: '1.0.0', name: '-x', type: 't' },
      7,
      /invalid characters found in network name/,
    ],
    ['a path as type', { cniVersion: '1.0.0', name: 'n', type: '../t' }, 7, /type: must be a plugin name/],
    [
      'capabilities not booleans',
      { cniVersion: '1.0.0', name: 'n', type: 't', capabilities: { a: 1 } },
      7,
      /capabilities\.a/,
    ],
    [
      'ipam without type',
      { cniVersion: '1.0.0', name: 'n', type: 't', ipam: { subnet: 'x' } },
      7,
      /ipam\.type/,
    ],
    [
      'a bad prevResult',
      { cniVersion: '1.0.0', name: 'n', type: 't', prevResult: { ips: [{ address: 'x' }] } },
      7,
      /prevResult: ips\[0\]\.address/,
    ],
    [
      'ipMasq as a string',
      { cniVersion: '1.0.0', name: 'n', type: 't', ipMasq: 'yes' },
      7,
      /ipMasq: must be a boolean/,
    ],
    [
      'bad attachments',
      { cniVersion: '1.1.0', name: 'n', type: 't', 'cni.dev/valid-attachments': [{ ifname: 'eth0' }] },
      7,
      /valid-attachments\[0\]\.containerID/,
    ],
  ];
  it.each(bad)('rejects %s', (_n, input, code, msg) => {
    expectCniError(() => parsePluginConfig(input as string), code, msg);
  });

  it('limits versions to the ones the plugin supports', () => {
    expectCniError(
      () =>
        parsePluginConfig({ cniVersion: '0.3.0', name: 'n', type: 't' }, { supportedVersions: ['1.0.0'] }),
      CniErrorCode.IncompatibleVersion,
      /plugin supports \["1.0.0"\]/,
    );
  });
});

describe('parseRuntimeConfig', () => {
  it('reads containerd PascalCase members as the conventions camelCase', () => {
    const rc = parseRuntimeConfig({
      portMappings: [{ HostPort: 18090, ContainerPort: 80, Protocol: 'TCP', HostIP: '' }],
      bandwidth: { IngressRate: 1_000_000, IngressBurst: 4294967295, EgressRate: 5 },
      'io.kubernetes.cri.pod-annotations': { 'vpc.amazonaws.com/pod-eni': '[]' },
      ips: ['10.0.0.3/32'],
      mac: 'C2:11:22:33:44:55',
      customThing: 1,
    });
    expect(rc.portMappings).toEqual([{ hostPort: 18090, containerPort: 80, protocol: 'tcp' }]);
    expect(rc.bandwidth).toEqual({ ingressRate: 1_000_000, ingressBurst: 4294967295, egressRate: 5 });
    expect(rc.podAnnotations).toEqual({ 'vpc.amazonaws.com/pod-eni': '[]' });
    expect(rc.mac).toBe('c2:11:22:33:44:55');
    expect(rc.raw['customThing']).toBe(1);
  });

  it.each([
    [{ portMappings: [{ hostPort: 70000, containerPort: 1 }] }, /portMappings\[0\]\.hostPort/],
    [{ portMappings: [{ containerPort: 1 }] }, /portMappings\[0\]\.hostPort: is required/],
    [
      { portMappings: [{ hostPort: 1, containerPort: 1, protocol: 'icmp' }] },
      /protocol: must be tcp, udp or sctp/,
    ],
    [{ bandwidth: { ingressRate: -1 } }, /bandwidth\.ingressRate/],
    [{ mac: 'zz' }, /mac: must be a MAC/],
    [{ 'io.kubernetes.cri.pod-annotations': { a: 1 } }, /pod-annotations\.a: must be a string/],
  ])('rejects %j', (input, msg) => {
    expectCniError(() => parseRuntimeConfig(input), CniErrorCode.InvalidNetworkConfig, msg);
  });
});

describe('parseConfList', () => {
  const awsConflist = {
    cniVersion: '0.4.0',
    name: 'aws-cni',
    disableCheck: 'true',
    plugins: [
      {
        name: 'aws-cni',
        type: 'aws-cni',
        vethPrefix: 'eni',
        mtu: '9001',
        capabilities: { 'io.kubernetes.cri.pod-annotations': true },
      },
      { name: 'egress-cni', type: 'egress-cni', ipam: { type: 'host-local' } },
      { type: 'portmap', capabilities: { portMappings: true }, snat: true },
    ],
  };
  it('reads the reference AWS conflist, string booleans included', () => {
    const list = parseConfList(JSON.stringify(awsConflist));
    expect(list.cniVersion).toBe('0.4.0');
    expect(list.disableCheck).toBe(true);
    expect(list.plugins.map((p) => p.type)).toEqual(['aws-cni', 'egress-cni', 'portmap']);
    expect(list.plugins[2]?.capabilities).toEqual({ portMappings: true });
  });
  it('negotiates the highest supported of cniVersion and cniVersions', () => {
    expect(
      parseConfList({
        cniVersion: '0.4.0',
        cniVersions: ['1.0.0', '1.1.0', '9.9.9'],
        name: 'n',
        plugins: [{ type: 't' }],
      }).cniVersion,
    ).toBe('1.1.0');
  });
  it('lifts a single-plugin .conf when asked', () => {
    const list = parseConfList(
      { cniVersion: '0.3.1', name: 'n', type: 'bridge', bridge: 'br0' },
      { allowSingle: true },
    );
    expect(list.plugins).toEqual([{ type: 'bridge', raw: { type: 'bridge', bridge: 'br0' } }]);
  });
  it.each([
    [{ name: 'n', plugins: [{ type: 't' }] }, CniErrorCode.IncompatibleVersion, /declares no cniVersion/],
    [
      { cniVersion: '0.1.0', name: 'n', plugins: [{ type: 't' }] },
      CniErrorCode.IncompatibleVersion,
      /no supported version/,
    ],
    [{ cniVersion: '1.0.0', name: 'n', plugins: [] }, 7, /plugins: must list at least one plugin/],
    [{ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 't' }, { nope: 1 }] }, 7, /plugins\[1\]\.type/],
    [{ cniVersion: '1.0.0', name: 'n', disableCheck: 'maybe', plugins: [{ type: 't' }] }, 7, /disableCheck/],
  ])('rejects %j', (input, code, msg) => {
    expectCniError(() => parseConfList(input), code, msg);
  });
});
