import { describe, expect, it } from 'vitest';
import {
  type BranchEni,
  formatPodEniAnnotation,
  isSgpError,
  parsePodEniAnnotation,
  SGP_ERROR_HINTS,
  SgpError,
  type SgpErrorCode,
} from '../src/index.js';

// The controller's spelling (vlanId) and what the reference daemon reads (vlanID): Go matches keys case-insensitively.
const CONTROLLER =
  '[{"eniId":"eni-0a1b2c3d","ifAddress":"0A:00:00:00:00:07","privateIp":"10.0.1.9","ipv6Addr":"","vlanId":3,"subnetCidr":"10.0.0.0/19","subnetV6Cidr":""}]';
const DAEMON_SPELLING =
  '[{"eniId":"eni-0a1b2c3d","ifAddress":"0a:00:00:00:00:07","privateIp":"10.0.1.9","vlanID":3,"subnetCidr":"10.0.0.0/19","associationID":"trunk-assoc-0123"}]';

function code(fn: () => unknown): SgpErrorCode | undefined {
  try {
    fn();
  } catch (error) {
    if (isSgpError(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe('parsePodEniAnnotation', () => {
  it('parses the controller annotation into a canonical branch', () => {
    expect(parsePodEniAnnotation(CONTROLLER)).toEqual({
      eniId: 'eni-0a1b2c3d',
      mac: '0a:00:00:00:00:07',
      ipv4: '10.0.1.9',
      subnetCidr: '10.0.0.0/19',
      vlanId: 3,
    });
  });

  it('reads vlanID and associationID as the daemon and newer controllers spell them', () => {
    const b = parsePodEniAnnotation(DAEMON_SPELLING);
    expect(b.vlanId).toBe(3);
    expect(b.associationId).toBe('trunk-assoc-0123');
  });

  it('parses IPv6 branches and canonicalises addresses and subnets', () => {
    const b = parsePodEniAnnotation(
      '[{"eniId":"eni-1","ifAddress":"0a:00:00:00:00:08","ipv6Addr":"2001:DB8:0:0::9","vlanId":4094,"subnetV6Cidr":"2001:db8::5/64"}]',
      { family: 6 },
    );
    expect(b).toEqual({
      eniId: 'eni-1',
      mac: '0a:00:00:00:00:08',
      ipv6: '2001:db8::9',
      subnetV6Cidr: '2001:db8::/64',
      vlanId: 4094,
    });
  });

  it('round-trips through formatPodEniAnnotation', () => {
    const b: BranchEni = {
      eniId: 'eni-2',
      mac: '0a:00:00:00:00:09',
      ipv4: '10.0.0.5',
      subnetCidr: '10.0.0.0/24',
      vlanId: 7,
      associationId: 'trunk-assoc-9',
    };
    expect(parsePodEniAnnotation(formatPodEniAnnotation(b))).toEqual(b);
    expect(JSON.parse(formatPodEniAnnotation(b))[0]).toHaveProperty('vlanId', 7);
  });

  it('tells a missing annotation from a malformed one', () => {
    expect(code(() => parsePodEniAnnotation(undefined))).toBe('ANNOTATION_MISSING');
    expect(code(() => parsePodEniAnnotation('  '))).toBe('ANNOTATION_MISSING');
    expect(code(() => parsePodEniAnnotation('{'))).toBe('ANNOTATION_INVALID');
  });

  const base = JSON.parse(CONTROLLER)[0];
  const broken: [string, Record<string, unknown> | unknown][] = [
    ['not an array', base],
    ['empty array', []],
    ['element not object', ['x']],
    ['no eniId', { ...base, eniId: undefined }],
    ['bad eniId', { ...base, eniId: 'i-123' }],
    ['bad MAC', { ...base, ifAddress: '0a:00:00:00:07' }],
    ['dash MAC', { ...base, ifAddress: '0a-00-00-00-00-07' }],
    ['VLAN 0', { ...base, vlanId: 0 }],
    ['VLAN 4095', { ...base, vlanId: 4095 }],
    ['VLAN string', { ...base, vlanId: '3' }],
    ['VLAN fraction', { ...base, vlanId: 3.5 }],
    ['IPv6 as privateIp', { ...base, privateIp: '2001:db8::1' }],
    ['no privateIp', { ...base, privateIp: '' }],
    ['subnet without length', { ...base, subnetCidr: '10.0.0.0' }],
    ['subnet length 33', { ...base, subnetCidr: '10.0.0.0/33' }],
    ['ip outside subnet', { ...base, subnetCidr: '10.1.0.0/19' }],
    ['number as ip', { ...base, privateIp: 10 }],
    ['bad ipv6Addr', { ...base, ipv6Addr: 'zz::1' }],
    // Shapes no VPC gives a branch ENI: each would be plumbed, then route nowhere or be refused by the kernel.
    ['multicast MAC', { ...base, ifAddress: '01:00:5e:00:00:01' }],
    ['zero MAC', { ...base, ifAddress: '00:00:00:00:00:00' }],
    ['subnet /0', { ...base, subnetCidr: '0.0.0.0/0' }],
    ['subnet /32', { ...base, subnetCidr: `${base.privateIp}/32` }],
    ['the subnet router address', { ...base, privateIp: '10.0.0.1', subnetCidr: '10.0.0.0/19' }],
    ['the network address', { ...base, privateIp: '10.0.0.0', subnetCidr: '10.0.0.0/19' }],
    ['the last address', { ...base, privateIp: '10.0.31.255', subnetCidr: '10.0.0.0/19' }],
  ];
  for (const [name, value] of broken) {
    it(`refuses ${name} with ANNOTATION_INVALID`, () => {
      const text = JSON.stringify(Array.isArray(value) || typeof value !== 'object' ? value : [value]);
      expect(code(() => parsePodEniAnnotation(name === 'not an array' ? JSON.stringify(value) : text))).toBe(
        'ANNOTATION_INVALID',
      );
    });
  }

  it('needs the pair of the node family', () => {
    expect(code(() => parsePodEniAnnotation(CONTROLLER, { family: 6 }))).toBe('ANNOTATION_INVALID');
  });
});

describe('SgpError', () => {
  it('gives each operator-facing cause its own code and a one-line message with a hint', () => {
    const causes: SgpErrorCode[] = [
      'VERSION_MISMATCH',
      'POD_NOT_FOUND',
      'ANNOTATION_MISSING',
      'ANNOTATION_INVALID',
      'NO_TRUNK',
      'TRUNK_LINK_NOT_FOUND',
      'BRANCH_LIMIT_REACHED',
      'INSTANCE_NOT_TRUNKABLE',
    ];
    const hints = new Set(causes.map((c) => SGP_ERROR_HINTS[c]));
    expect(hints.size).toBe(causes.length);
    for (const c of causes) {
      const e = new SgpError({ code: c, op: 'AddNetwork', detail: 'pod default/db-0' });
      expect(e.message).toBe(`AddNetwork: ${c} pod default/db-0 (hint: ${SGP_ERROR_HINTS[c]})`);
      expect(e.message).not.toContain('\n');
      expect(isSgpError(e, c)).toBe(true);
    }
    expect(isSgpError(new Error('x'))).toBe(false);
  });
});
