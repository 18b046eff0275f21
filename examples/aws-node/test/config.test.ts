import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { ConfigError, normaliseIpv4Cidr } from '../src/config/env-reader.js';
import { parseLogLevel, readLogLevel } from '../src/log/logger.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.map((p) => `${p.variable}: ${p.problem}`);
  }
}

describe('loadConfig', () => {
  it('has the reference defaults', () => {
    expect(loadConfig({})).toMatchObject({
      warmEniTarget: 1,
      warmIpTarget: 0,
      minimumIpTarget: 0,
      warmPrefixTarget: 0,
      prefixDelegation: false,
      ipCooldownSeconds: 30,
      maxEni: undefined,
      eniMtu: 9001,
      podMtu: 9001,
      vethPrefix: 'eni',
      externalSnat: false,
      randomizeSnat: 'prng',
      nodePortSupport: true,
      connmark: 0x80,
      socketPath: '/var/run/aws-node/ipamd.sock',
      backingStorePath: '/var/run/aws-node/ipam.json',
      introspection: { enabled: true, bindAddress: '127.0.0.1:61679' },
      metrics: { enabled: true, bindAddress: ':61678' },
      hostCniConfDirPath: '/host/etc/cni/net.d',
    });
  });

  it('reads every kind of value', () => {
    const c = loadConfig({
      WARM_IP_TARGET: '5',
      MINIMUM_IP_TARGET: '20',
      MAX_ENI: '2',
      POD_MTU: '1500',
      AWS_VPC_K8S_CNI_VETHPREFIX: 'veth',
      AWS_VPC_K8S_CNI_EXTERNALSNAT: 'TRUE',
      AWS_VPC_K8S_CNI_RANDOMIZESNAT: 'hashrandom',
      AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS: ' 10.1.2.3/16 , 192.168.0.0/24',
      AWS_VPC_K8S_CNI_CONNMARK: '0x100',
      ADDITIONAL_ENI_TAGS: '{"team":"net","node.k8s.amazonaws.com/x":"dropped"}',
      AWS_EC2_ENDPOINT: 'http://10.0.0.1:8000',
      INTROSPECTION_BIND_ADDRESS: 'unix:/run/x.sock',
    });
    expect(c).toMatchObject({
      warmIpTarget: 5,
      minimumIpTarget: 20,
      maxEni: 2,
      podMtu: 1500,
      vethPrefix: 'veth',
      externalSnat: true,
      randomizeSnat: 'hashrandom',
      excludeSnatCidrs: ['10.1.0.0/16', '192.168.0.0/24'],
      connmark: 0x100,
      additionalEniTags: { team: 'net' },
      ec2Endpoint: 'http://10.0.0.1:8000',
      introspection: { bindAddress: 'unix:/run/x.sock' },
    });
  });

  it('reads the security-groups-for-pods settings (strict and 802.1Q by default, as the reference)', () => {
    expect(loadConfig({}).podEni).toEqual({
      enabled: false,
      mode: 'strict',
      disableTcpEarlyDemux: false,
      linkKind: 'vlan',
    });
    expect(
      loadConfig({
        ENABLE_POD_ENI: 'true',
        KUBERNETES_SERVICE_HOST: '10.96.0.1',
        MY_NODE_NAME: 'ip-10-0-0-5.us-west-2.compute.internal',
        POD_SECURITY_GROUP_ENFORCING_MODE: 'standard',
        DISABLE_TCP_EARLY_DEMUX: 'true',
        AWS_NODE_BRANCH_LINK_KIND: 'macvlan',
      }).podEni,
    ).toEqual({ enabled: true, mode: 'standard', disableTcpEarlyDemux: true, linkKind: 'macvlan' });
  });

  it('ignores MAX_ENI ≤ 0 as the reference does', () => {
    expect(loadConfig({ MAX_ENI: '0' }).maxEni).toBeUndefined();
    expect(loadConfig({ MAX_ENI: '-1' }).maxEni).toBeUndefined();
  });

  it.each([
    [{ WARM_IP_TARGET: 'five' }, 'WARM_IP_TARGET: must be an integer'],
    [{ WARM_ENI_TARGET: '-1' }, 'WARM_ENI_TARGET: must be from 0'],
    [{ AWS_VPC_ENI_MTU: '9002' }, 'AWS_VPC_ENI_MTU: must be from 576 to 9001'],
    [{ POD_MTU: '100' }, 'POD_MTU: must be from 576 to 9001'],
    [{ AWS_VPC_K8S_CNI_VETHPREFIX: 'toolong' }, 'AWS_VPC_K8S_CNI_VETHPREFIX: must be at most 4 characters'],
    [{ AWS_VPC_K8S_CNI_VETHPREFIX: 'eth' }, 'AWS_VPC_K8S_CNI_VETHPREFIX: must not be eth, lo or vlan'],
    [{ AWS_VPC_K8S_PLUGIN_LOG_FILE: 'stdout' }, 'AWS_VPC_K8S_PLUGIN_LOG_FILE: must not be stdout'],
    [{ ENABLE_PREFIX_DELEGATION: 'true' }, 'ENABLE_PREFIX_DELEGATION: needs WARM_PREFIX_TARGET'],
    [
      { AWS_VPC_K8S_CNI_RANDOMIZESNAT: 'random' },
      'AWS_VPC_K8S_CNI_RANDOMIZESNAT: must be one of prng, hashrandom, none',
    ],
    [{ AWS_VPC_K8S_CNI_EXTERNALSNAT: 'yes' }, 'AWS_VPC_K8S_CNI_EXTERNALSNAT: must be a boolean'],
    [
      { AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS: '10.0.0.0/8,nope' },
      'AWS_VPC_K8S_CNI_EXCLUDE_SNAT_CIDRS: "nope" is not an IPv4 CIDR',
    ],
    [{ AWS_VPC_K8S_CNI_CONNMARK: '0' }, 'AWS_VPC_K8S_CNI_CONNMARK: must be a mark'],
    [{ ADDITIONAL_ENI_TAGS: '[1]' }, 'ADDITIONAL_ENI_TAGS: must be a JSON object'],
    [{ IP_COOLDOWN_PERIOD: '1.5' }, 'IP_COOLDOWN_PERIOD: must be an integer'],
    [{ ENABLE_POD_ENI: 'true' }, 'ENABLE_POD_ENI: needs the Kubernetes API'],
    [
      { ENABLE_POD_ENI: 'true', KUBERNETES_SERVICE_HOST: '10.96.0.1', ENABLE_IMDS_ONLY_MODE: 'true' },
      'ENABLE_POD_ENI: cannot find the trunk ENI without EC2',
    ],
    [
      { POD_SECURITY_GROUP_ENFORCING_MODE: 'loose' },
      'POD_SECURITY_GROUP_ENFORCING_MODE: must be one of strict, standard',
    ],
    [{ DISABLE_TCP_EARLY_DEMUX: 'maybe' }, 'DISABLE_TCP_EARLY_DEMUX: must be a boolean'],
    [{ AWS_NODE_BRANCH_LINK_KIND: '8021q' }, 'AWS_NODE_BRANCH_LINK_KIND: must be one of vlan, macvlan'],
    [{ INTROSPECTION_BIND_ADDRESS: 'here' }, 'INTROSPECTION_BIND_ADDRESS: must be host:port'],
    [{ AWS_EC2_ENDPOINT: 'ec2.local' }, 'AWS_EC2_ENDPOINT: must be an http(s) URL'],
    [{ AWS_NODE_METRICS_BIND_ADDRESS: ':99999' }, 'AWS_NODE_METRICS_BIND_ADDRESS: port must be 0–65535'],
    [
      { AWS_NODE_METRICS_BIND_ADDRESS: '300.1.2.3:61678' },
      'AWS_NODE_METRICS_BIND_ADDRESS: "300.1.2.3" is not',
    ],
    [{ INTROSPECTION_BIND_ADDRESS: '127.0.0.1:65536' }, 'INTROSPECTION_BIND_ADDRESS: port must be 0–65535'],
    [{ INTROSPECTION_BIND_ADDRESS: '[::zz]:61679' }, 'INTROSPECTION_BIND_ADDRESS: "[::zz]" is not an IPv6'],
    [{ INTROSPECTION_BIND_ADDRESS: '...:61679' }, 'INTROSPECTION_BIND_ADDRESS: "..." is not'],
    [
      { INTROSPECTION_BIND_ADDRESS: 'unix:run/x.sock' },
      'INTROSPECTION_BIND_ADDRESS: unix: needs an absolute path',
    ],
    [{ AWS_NODE_IPAMD_SOCKET: 'ipamd.sock' }, 'AWS_NODE_IPAMD_SOCKET: must be an absolute path'],
    // Node would bind a path cut to 107 bytes: another file than the one named.
    [
      { AWS_NODE_IPAMD_SOCKET: `/run/${'a'.repeat(103)}` },
      "AWS_NODE_IPAMD_SOCKET: is 108 bytes long; a unix socket's path has at most 107",
    ],
    [
      { INTROSPECTION_BIND_ADDRESS: `unix:/run/${'é'.repeat(60)}` },
      "INTROSPECTION_BIND_ADDRESS: unix: path is 125 bytes long; a unix socket's path has at most 107",
    ],
    [
      { AWS_VPC_K8S_CNI_BACKING_STORE: 'ipam.json' },
      'AWS_VPC_K8S_CNI_BACKING_STORE: must be an absolute path',
    ],
  ])('rejects %j naming the variable', (env, message) => {
    expect(problems(env).join('\n')).toContain(message);
  });

  it.each([
    '127.0.0.1:61679',
    ':0',
    ':65535',
    '[::1]:61678',
    '[::]:61678',
    'localhost:1',
    'unix:/run/m.sock',
  ])('accepts the bind address %s', (address) => {
    expect(problems({ INTROSPECTION_BIND_ADDRESS: address, AWS_NODE_METRICS_BIND_ADDRESS: address })).toEqual(
      [],
    );
  });

  describe('IPv6 mode', () => {
    const v6 = { ENABLE_IPv6: 'true', ENABLE_IPv4: 'false', ENABLE_PREFIX_DELEGATION: 'true' };

    it('takes ENABLE_IPv6 with ENABLE_IPv4=false and prefix delegation, no warm target needed', () => {
      const c = loadConfig(v6);
      expect(c.ipv6).toBe(true);
      expect(c.prefixDelegation).toBe(true);
      expect(loadConfig({}).ipv6).toBe(false);
      // ENABLE_IPv4 unset follows ENABLE_IPv6 (the reference's code default is false, its manifest true).
      expect(loadConfig({ ENABLE_IPv6: 'true', ENABLE_PREFIX_DELEGATION: 'true' }).ipv6).toBe(true);
    });

    it.each([
      [{ ENABLE_IPv6: 'true', ENABLE_IPv4: 'true' }, 'ENABLE_IPv6: IPv4 and IPv6 are both enabled'],
      [{ ENABLE_IPv4: 'false' }, 'ENABLE_IPv4: IPv4 and IPv6 are both disabled'],
      [
        { ENABLE_IPv6: 'true', ENABLE_IPv4: 'false' },
        'ENABLE_IPv6: IPv6 mode needs ENABLE_PREFIX_DELEGATION=true',
      ],
      [
        { ...v6, AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: 'true', KUBERNETES_SERVICE_HOST: '10.100.0.1' },
        'AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG: custom networking is not supported in IPv6 mode',
      ],
      [{ ENABLE_IPv6: 'yes' }, 'ENABLE_IPv6: must be a boolean'],
      [
        { ...v6, ENABLE_POD_ENI: 'true' },
        'ENABLE_POD_ENI: security groups for pods are not supported in IPv6 mode',
      ],
      [
        {
          ...v6,
          WARM_POOL_POLICY: 'adaptive',
          AWS_NODE_ADAPTIVE_POD_WATCH: 'true',
          KUBERNETES_SERVICE_HOST: '10.100.0.1',
        },
        'AWS_NODE_ADAPTIVE_POD_WATCH: is not used in IPv6 mode',
      ],
    ])('refuses %j with one line naming the variable', (env, message) => {
      expect(problems(env).join('\n')).toContain(message);
    });
  });

  describe('variables read as the reference reads them, and refused when they cannot mean anything', () => {
    it.each([
      ['true', true],
      ['TRUE', true],
      ['1', true],
      ['t', true],
      ['false', false],
      ['0', false],
    ])('ENABLE_BANDWIDTH_PLUGIN=%s is %s, as every other boolean', (value, on) => {
      expect(loadConfig({ ENABLE_BANDWIDTH_PLUGIN: value }).bandwidthPlugin).toBe(on);
    });

    it.each([
      [{ ENABLE_BANDWIDTH_PLUGIN: 'yes' }, 'ENABLE_BANDWIDTH_PLUGIN: must be a boolean'],
      [
        { KUBERNETES_SERVICE_HOST: 'bad host/x', MY_NODE_NAME: 'n' },
        'KUBERNETES_SERVICE_HOST: must be an IPv4 address, an IPv6 address or a DNS name',
      ],
      [
        { KUBERNETES_SERVICE_HOST: '-api.example.com', MY_NODE_NAME: 'n' },
        'KUBERNETES_SERVICE_HOST: must be an IPv4 address',
      ],
      [
        { ENI_CONFIG_LABEL_DEF: 'zone label' },
        'ENI_CONFIG_LABEL_DEF: is not a label key: name part "zone label" must be 1–63 characters',
      ],
      [{ ENI_CONFIG_LABEL_DEF: 'a/b/c' }, 'ENI_CONFIG_LABEL_DEF: is not a label key: must be [prefix/]name'],
      [
        { ENI_CONFIG_ANNOTATION_DEF: 'Example.com/eniConfig' },
        'ENI_CONFIG_ANNOTATION_DEF: is not an annotation key: prefix "Example" is not a DNS label',
      ],
      [
        { ENI_CONFIG_ANNOTATION_DEF: 'k8s.amazonaws.com/' },
        'ENI_CONFIG_ANNOTATION_DEF: is not an annotation key',
      ],
      [
        { AWS_VPC_K8S_CNI_LOG_FILE: 'ipamd.log' },
        'AWS_VPC_K8S_CNI_LOG_FILE: must be stdout, stderr or an absolute path',
      ],
      [
        { AWS_VPC_K8S_PLUGIN_LOG_FILE: 'logs/plugin.log' },
        'AWS_VPC_K8S_PLUGIN_LOG_FILE: must be stderr or an absolute path',
      ],
      [
        { AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE: 'egress.log' },
        'AWS_VPC_K8S_EGRESS_V4_PLUGIN_LOG_FILE: must be stderr or an absolute path',
      ],
      [{ AWS_MANAGE_ENIS_NON_SCHEDULABLE: 'maybe' }, 'AWS_MANAGE_ENIS_NON_SCHEDULABLE: must be a boolean'],
      [
        { AWS_MANAGE_ENIS_NON_SCHEDULABLE: 'false' },
        "AWS_MANAGE_ENIS_NON_SCHEDULABLE: false is not supported: aws-node does not read the node's unschedulable taint",
      ],
      [
        { NETWORK_POLICY_ENFORCING_MODE: 'enforcing' },
        'NETWORK_POLICY_ENFORCING_MODE: must be one of none, strict, standard',
      ],
    ])('refuses %j', (env, message) => {
      expect(problems(env).join('\n')).toContain(message);
    });

    it('accepts what the reference accepts', () => {
      const c = loadConfig({
        KUBERNETES_SERVICE_HOST: 'kubernetes.default.svc',
        MY_NODE_NAME: 'n',
        ENI_CONFIG_LABEL_DEF: 'topology.kubernetes.io/zone',
        ENI_CONFIG_ANNOTATION_DEF: 'k8s.amazonaws.com/eniConfig',
        AWS_VPC_K8S_CNI_LOG_FILE: 'stdout',
        AWS_VPC_K8S_PLUGIN_LOG_FILE: 'stderr',
        AWS_MANAGE_ENIS_NON_SCHEDULABLE: 'true',
        NETWORK_POLICY_ENFORCING_MODE: 'standard',
      });
      expect(c.kube.apiServer).toBe('https://kubernetes.default.svc:443');
      expect(c.eniConfigLabelKey).toBe('topology.kubernetes.io/zone');
      expect(c.manageEnisNonSchedulable).toBe(true);
      expect(c.networkPolicyEnforcingMode).toBe('standard');
      expect(loadConfig({}).networkPolicyEnforcingMode).toBeUndefined();
      for (const host of ['10.100.0.1', 'fd00::1', 'API.Example.com'])
        expect(problems({ KUBERNETES_SERVICE_HOST: host, MY_NODE_NAME: 'n' })).toEqual([]);
      expect(loadConfig({ AWS_VPC_K8S_CNI_LOG_FILE: 'stderr' }).logFile).toBe('stderr');
    });
  });

  describe('log levels', () => {
    it.each(['DEBUG', 'Info', 'warn', 'WARNING', 'error', 'Fatal'])('accepts %s for both logs', (level) => {
      const c = loadConfig({ AWS_VPC_K8S_CNI_LOGLEVEL: level, AWS_VPC_K8S_PLUGIN_LOG_LEVEL: level });
      expect(c.logLevel).toBe(level);
      expect(c.pluginLogLevel).toBe(level);
    });

    it.each(['verbose', 'trace', 'debug2', 'warnx'])(
      'refuses %s for both logs, naming each variable',
      (level) => {
        expect(problems({ AWS_VPC_K8S_CNI_LOGLEVEL: level, AWS_VPC_K8S_PLUGIN_LOG_LEVEL: level })).toEqual([
          'AWS_VPC_K8S_PLUGIN_LOG_LEVEL: must be one of debug, info, warn, warning, error, fatal (any letter case)',
          'AWS_VPC_K8S_CNI_LOGLEVEL: must be one of debug, info, warn, warning, error, fatal (any letter case)',
        ]);
      },
    );

    it('maps fatal to the most severe level, never to debug', () => {
      expect(readLogLevel('FATAL')).toBe('error');
      expect(parseLogLevel('fatal')).toBe('error');
      expect(readLogLevel('Warning')).toBe('warn');
      expect(readLogLevel('verbose')).toBeUndefined();
      // The plugin reading a conflist someone else wrote keeps the reference's default.
      expect(parseLogLevel('verbose')).toBe('debug');
    });
  });

  it('reports every problem at once', () => {
    expect(problems({ WARM_IP_TARGET: 'x', POD_MTU: 'y' })).toHaveLength(2);
  });

  it.each([
    ['10.1.2.3/16', '10.1.0.0/16'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['10.0.0.1/32', '10.0.0.1/32'],
    ['10.0.0.1', undefined],
    ['300.0.0.1/8', undefined],
    ['10.0.0.0/33', undefined],
    ['010.0.0.0/8', undefined],
    ['10.0.0.0/08', undefined],
    ['10.0.0/8', undefined],
    ['fd00::/8', undefined],
  ])('normalises %s', (input, want) => {
    expect(normaliseIpv4Cidr(input)).toBe(want);
  });
});
