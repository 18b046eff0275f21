import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { egressConflistEntry, renderConflist, writeConflist } from '../src/daemon/conflist.js';

/** The reference's misc/10-aws.conflist egress entry with its placeholders filled in. */
function referenceEgress(fill: {
  enabled: string;
  nodeIp: string;
  subnet: string;
  dst: string;
  dataDir: string;
  logFile: string;
  randomize?: string;
  mtu?: string;
}) {
  return {
    name: 'egress-cni',
    type: 'egress-cni',
    mtu: fill.mtu ?? '9001',
    enabled: fill.enabled,
    randomizeSNAT: fill.randomize ?? 'prng',
    nodeIP: fill.nodeIp,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: fill.subnet }]],
      routes: [{ dst: fill.dst }],
      dataDir: fill.dataDir,
    },
    pluginLogFile: fill.logFile,
    pluginLogLevel: 'Debug',
  };
}

const V6_LOG = '/var/log/aws-routed-eni/egress-v6-plugin.log';
const V4_LOG = '/var/log/aws-routed-eni/egress-v4-plugin.log';
const node = { nodeIpv4: '10.0.1.5', nodeIpv6: '2600:1f14:aa:bb::5' };

describe('the egress-cni conflist entry', () => {
  it('IPv4 cluster, defaults: present but disabled, IPv6 range, empty nodeIP (the reference does not look it up)', () => {
    const { entry, warning } = egressConflistEntry(loadConfig({}), { ipv6Cluster: false, ...node });
    expect(warning).toBeUndefined();
    expect(entry).toEqual(
      referenceEgress({
        enabled: 'false',
        nodeIp: '',
        subnet: 'fd00::ac:00/118',
        dst: '::/0',
        dataDir: '/run/cni/v4pd/egress-v6-ipam',
        logFile: V6_LOG,
      }),
    );
  });

  it('IPv4 cluster with ENABLE_V6_EGRESS: enabled, SNAT to the node IPv6, the reference fields and order', () => {
    const config = loadConfig({
      ENABLE_V6_EGRESS: 'true',
      AWS_VPC_K8S_CNI_RANDOMIZESNAT: 'hashrandom',
      POD_MTU: '1500',
    });
    const { entry } = egressConflistEntry(config, { ipv6Cluster: false, ...node });
    expect(entry).toEqual(
      referenceEgress({
        enabled: 'true',
        nodeIp: node.nodeIpv6,
        subnet: 'fd00::ac:00/118',
        dst: '::/0',
        dataDir: '/run/cni/v4pd/egress-v6-ipam',
        logFile: V6_LOG,
        randomize: 'hashrandom',
        mtu: '1500',
      }),
    );
    expect(Object.keys(entry)).toEqual(Object.keys(referenceEgress({} as never)));
  });

  it('IPv4 cluster with ENABLE_V6_EGRESS on a node without IPv6: turned off, with a warning', () => {
    const { entry, warning } = egressConflistEntry(loadConfig({ ENABLE_V6_EGRESS: 'true' }), {
      ipv6Cluster: false,
      nodeIpv4: node.nodeIpv4,
      nodeIpv6: undefined,
    });
    expect(entry).toMatchObject({ enabled: 'false', nodeIP: '' });
    expect(warning).toMatch(/^ENABLE_V6_EGRESS=true but the primary ENI has no IPv6 address/);
  });

  it('IPv6 cluster: IPv4 egress on by default, SNAT to the node IPv4; ENABLE_V4_EGRESS=false turns it off', () => {
    const config = loadConfig({ AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE: 'stderr' });
    expect(egressConflistEntry(config, { ipv6Cluster: true, ...node }).entry).toEqual(
      referenceEgress({
        enabled: 'true',
        nodeIp: node.nodeIpv4,
        subnet: '169.254.172.0/22',
        dst: '0.0.0.0/0',
        dataDir: '/run/cni/v6pd/egress-v4-ipam',
        logFile: 'stderr',
      }),
    );
    const off = loadConfig({ ENABLE_V4_EGRESS: 'false' });
    expect(egressConflistEntry(off, { ipv6Cluster: true, ...node }).entry).toMatchObject({
      enabled: 'false',
      nodeIP: node.nodeIpv4,
      pluginLogFile: V4_LOG,
    });
  });

  it('sits between aws-cni and portmap, as in the reference', () => {
    const config = loadConfig({});
    const { entry } = egressConflistEntry(config, { ipv6Cluster: false, ...node });
    const list = JSON.parse(renderConflist(config, { egress: entry, bandwidth: true })) as {
      plugins: Array<{ type: string }>;
    };
    expect(list.plugins.map((p) => p.type)).toEqual(['aws-cni', 'egress-cni', 'portmap', 'bandwidth']);
  });
});

describe('egress settings in the environment', () => {
  const fails = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (e) {
      return (e as Error).message;
    }
    return undefined;
  };

  it.each([
    [{ ENABLE_V4_EGRESS: 'yes' }, 'ENABLE_V4_EGRESS="yes": must be a boolean (true/false/1/0)'],
    [{ ENABLE_V6_EGRESS: 'on' }, 'ENABLE_V6_EGRESS="on": must be a boolean (true/false/1/0)'],
    [
      { AWS_VPC_K8S_EGRESS_V6_PLUGIN_LOG_FILE: 'stdout' },
      'AWS_VPC_K8S_EGRESS_V6_PLUGIN_LOG_FILE="stdout": must not be stdout (egress-cni writes its result there); use stderr or a path',
    ],
  ])('%j fails closed in one line', (env, problem) => {
    const message = fails(env);
    expect(message).toBe(`invalid configuration: ${problem}`);
    expect(message).not.toContain('\n');
  });

  it('ENABLE_V6_EGRESS is refused in an IPv6 cluster', () => {
    expect(fails({ ENABLE_IPv6: 'true', ENABLE_V6_EGRESS: 'true' })).toContain(
      'ENABLE_V6_EGRESS="true": is for IPv4 clusters',
    );
  });
});

describe('writeConflist', () => {
  it('a HOST_CNI_CONFDIR_PATH that cannot be made (under /proc) is a typed error at once, not a hang', async () => {
    const e = await writeConflist('/proc/vck-nope/net.d', '{}\n').catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'DirectoryNotCreated', path: '/proc/vck-nope', errno: 'ENOENT' });
  });
});
