import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CniErrorCode,
  type CniVersion,
  convertResult,
  isCniError,
  parseResult,
  type Result,
  SUPPORTED_VERSIONS,
} from '../src/index.js';

const full: Result = {
  cniVersion: '1.1.0',
  interfaces: [
    { name: 'veth1', mac: '0a:00:00:00:00:01' },
    { name: 'eth0', mac: '0a:00:00:00:00:02', sandbox: '/run/netns/p', mtu: 9001 },
  ],
  ips: [
    { address: '10.0.0.5/32', gateway: '169.254.1.1', interface: 1 },
    { address: '2600:1f14::5/128', interface: 1 },
  ],
  routes: [
    { dst: '0.0.0.0/0', gw: '169.254.1.1' },
    { dst: '10.1.0.0/16', table: 2, scope: 253 },
  ],
  dns: { nameservers: ['10.0.0.2'], search: ['svc.cluster.local'] },
};

describe('convertResult', () => {
  it.each(SUPPORTED_VERSIONS)('writes %s with the right per-version shape', (to) => {
    const wire = convertResult(full, to) as unknown as Record<string, unknown>;
    expect(wire['cniVersion']).toBe(to);
    const ips = wire['ips'] as Array<Record<string, unknown>>;
    if (to.startsWith('0.')) {
      expect(ips.map((i) => i['version'])).toEqual(['4', '6']);
    } else {
      expect(ips.every((i) => !('version' in i))).toBe(true);
    }
    const itf = (wire['interfaces'] as Array<Record<string, unknown>>)[1];
    const route = (wire['routes'] as Array<Record<string, unknown>>)[1];
    if (to === '1.1.0') {
      expect(itf?.['mtu']).toBe(9001);
      expect(route).toEqual({ dst: '10.1.0.0/16', table: 2, scope: 253 });
    } else {
      expect(itf).toEqual({ name: 'eth0', mac: '0a:00:00:00:00:02', sandbox: '/run/netns/p' });
      expect(route).toEqual({ dst: '10.1.0.0/16' });
    }
  });

  it.each(SUPPORTED_VERSIONS.filter((v) => v !== '1.1.0'))(
    'strict conversion to %s names what it cannot hold',
    (to) => {
      try {
        convertResult(full, to, { strict: true });
        expect.fail('expected an error');
      } catch (e) {
        expect(isCniError(e) && e.code).toBe(CniErrorCode.IncompatibleVersion);
        expect(isCniError(e) && e.details).toBe(
          `fields not defined in ${to}: interfaces[1].mtu, routes[1].table, routes[1].scope`,
        );
      }
    },
  );

  it('does not modify its input', () => {
    const copy = structuredClone(full);
    convertResult(full, '0.3.1');
    expect(full).toEqual(copy);
  });

  it.each(
    SUPPORTED_VERSIONS.flatMap((from) =>
      SUPPORTED_VERSIONS.map((to) => [from, to] as [CniVersion, CniVersion]),
    ),
  )('converts a 1.0-expressible result %s → %s and back without loss', (from, to) => {
    const base: Result = { ...structuredClone(full), cniVersion: from };
    delete base.interfaces?.[1]?.mtu;
    base.routes = [{ dst: '0.0.0.0/0', gw: '169.254.1.1' }];
    const there = parseResult(convertResult(base, to));
    const back = parseResult(convertResult(there, from));
    expect(back).toEqual(base);
  });
});

describe('parseResult', () => {
  it.each(SUPPORTED_VERSIONS)('reads its own %s output', (v) => {
    const parsed = parseResult(JSON.stringify(convertResult(full, v)));
    expect(parsed.cniVersion).toBe(v);
    expect(parsed.ips?.[0]?.address).toBe('10.0.0.5/32');
  });

  it('assumes the default version when the result has none, as libcni does', () => {
    expect(parseResult({ ips: [{ address: '10.0.0.1/24' }] }, { defaultVersion: '0.4.0' }).cniVersion).toBe(
      '0.4.0',
    );
  });

  const bad: Array<[string, unknown, number, RegExp]> = [
    ['not JSON', '{', CniErrorCode.DecodeFailure, /not valid JSON/],
    ['an array', '[]', CniErrorCode.DecodeFailure, /JSON object/],
    ['no version', {}, CniErrorCode.DecodeFailure, /cniVersion: is required/],
    [
      'an unknown version',
      { cniVersion: '0.2.0' },
      CniErrorCode.IncompatibleVersion,
      /unsupported cniVersion "0.2.0"/,
    ],
    [
      'an address without prefix',
      { cniVersion: '1.0.0', ips: [{ address: '10.0.0.1' }] },
      6,
      /ips\[0\]\.address/,
    ],
    [
      'a v6 gateway on a v4 address',
      { cniVersion: '1.0.0', ips: [{ address: '10.0.0.1/8', gateway: '::1' }] },
      6,
      /ips\[0\]\.gateway: must be an IPv4/,
    ],
    [
      'a dangling interface index',
      { cniVersion: '1.0.0', interfaces: [{ name: 'a' }], ips: [{ address: '10.0.0.1/8', interface: 1 }] },
      6,
      /ips\[0\]\.interface/,
    ],
    [
      'a wrong ips[].version',
      { cniVersion: '0.4.0', ips: [{ version: '6', address: '10.0.0.1/8' }] },
      6,
      /ips\[0\]\.version: does not match/,
    ],
    [
      'a bad route',
      { cniVersion: '1.1.0', routes: [{ dst: 'default' }] },
      6,
      /routes\[0\]\.dst: must be a CIDR/,
    ],
    [
      'a negative mtu',
      { cniVersion: '1.1.0', interfaces: [{ name: 'x', mtu: -1 }] },
      6,
      /interfaces\[0\]\.mtu/,
    ],
    ['an interface without a name', { cniVersion: '1.1.0', interfaces: [{}] }, 6, /interfaces\[0\]\.name/],
    [
      'dns servers as a string',
      { cniVersion: '1.1.0', dns: { nameservers: '1.1.1.1' } },
      6,
      /dns\.nameservers/,
    ],
  ];
  it.each(bad)('rejects %s with a typed error naming the field', (_name, input, code, msg) => {
    try {
      parseResult(input);
      expect.fail('expected an error');
    } catch (e) {
      expect(isCniError(e)).toBe(true);
      expect(isCniError(e) && e.code).toBe(code);
      expect(isCniError(e) && e.message).toMatch(msg);
    }
  });
});

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
const v6 = fc
  .array(fc.nat(0xffff), { minLength: 8, maxLength: 8 })
  .map((g) => g.map((x) => x.toString(16)).join(':'));
const arbResult: fc.Arbitrary<Result> = fc
  .record({
    cniVersion: fc.constantFrom(...SUPPORTED_VERSIONS),
    interfaces: fc.array(
      fc.record(
        {
          name: fc.stringMatching(/^[a-z][a-z0-9]{0,14}$/),
          mac: fc.constant('0a:00:00:00:00:01'),
          sandbox: fc.constant('/run/netns/x'),
          mtu: fc.integer({ min: 68, max: 65535 }),
        },
        { requiredKeys: ['name'] },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    v4s: fc.array(fc.tuple(v4, fc.integer({ min: 0, max: 32 })), { maxLength: 3 }),
    v6s: fc.array(fc.tuple(v6, fc.integer({ min: 0, max: 128 })), { maxLength: 2 }),
    routes: fc.array(
      fc.record(
        {
          dst: fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([a, l]) => `${a}/${l}`),
          table: fc.nat(1000),
        },
        { requiredKeys: ['dst'] },
      ),
      { maxLength: 3 },
    ),
  })
  .map((r) => ({
    cniVersion: r.cniVersion,
    interfaces: r.interfaces,
    ips: [
      ...r.v4s.map(([a, l]) => ({ address: `${a}/${l}`, interface: 0 })),
      ...r.v6s.map(([a, l]) => ({ address: `${a}/${l}` })),
    ],
    routes: r.routes,
  }));

describe('conversion properties', () => {
  it('any result survives conversion to any version and back to 1.1.0 exactly when it fits 1.0.0', () => {
    fc.assert(
      fc.property(arbResult, fc.constantFrom(...SUPPORTED_VERSIONS), (result, to) => {
        const wire = convertResult(result, to);
        const reread = parseResult(JSON.parse(JSON.stringify(wire)));
        expect(reread.cniVersion).toBe(to);
        expect(reread.ips).toEqual(result.ips);
        expect(reread.interfaces?.map((i) => i.name)).toEqual(result.interfaces?.map((i) => i.name));
        if (to === '1.1.0') expect({ ...reread, cniVersion: result.cniVersion }).toEqual(result);
      }),
      { numRuns: 300 },
    );
  });
});
