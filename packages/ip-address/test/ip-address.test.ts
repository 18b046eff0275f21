import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cidrContains,
  cidrNetwork,
  formatCidr,
  formatIp,
  formatIpv4,
  formatIpv6,
  ipFamily,
  ipFromBytes,
  ipToBytes,
  isNetwork,
  parseCidr,
  parseIp,
  parseIpv4,
  parseIpv6,
} from '../src/index.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u128 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
// Addresses with runs of zero groups, so `::` placement is exercised, not only dense random values.
const sparse128 = fc
  .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 })
  .map((gs) => gs.reduce((v, g) => (v << 16n) | BigInt(g), 0n));
const v6 = fc.oneof(u128, sparse128);

describe('IPv4', () => {
  it('parse ∘ format is the identity on every 32-bit value', () => {
    fc.assert(fc.property(u32, (n) => parseIpv4(formatIpv4(n)) === n));
  });

  it('format ∘ parse is the identity on canonical dotted quads', () => {
    expect(formatIpv4(parseIpv4('10.0.1.7')!)).toBe('10.0.1.7');
    expect(parseIpv4('255.255.255.255')).toBe(0xffffffff);
    expect(parseIpv4('0.0.0.0')).toBe(0);
  });

  it.each([
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '256.0.0.1',
    '1.2.3.-4',
    ' 1.2.3.4',
    '1.2.3.4/32',
    '1..3.4',
    '0x1.2.3.4',
    '',
  ])('refuses %j', (text) => {
    expect(parseIpv4(text)).toBeUndefined();
    expect(parseIp(text)).toBeUndefined();
  });
});

describe('IPv6', () => {
  it('parse ∘ format is the identity on every 128-bit value', () => {
    fc.assert(fc.property(v6, (n) => parseIpv6(formatIpv6(n)) === n));
  });

  it('formats in the RFC 5952 canonical form', () => {
    fc.assert(
      fc.property(v6, (n) => {
        const text = formatIpv6(n);
        if (text.startsWith('::ffff:') && text.includes('.')) return; // §5 mixed notation, checked below
        expect(text).toBe(text.toLowerCase()); // §4.3
        expect(text.split('::').length).toBeLessThanOrEqual(2); // §4.2.1: at most one ::
        for (const g of text.split(/::|:/).filter((x) => x !== ''))
          expect(g).toMatch(/^(0|[1-9a-f][0-9a-f]{0,3})$/); // §4.1
        const groups = text.includes('::') ? undefined : text.split(':');
        // §4.2.2: a single zero group is never shortened; §4.2.3: the longest (first) zero run is.
        if (groups) expect(groups.join(',')).not.toMatch(/(^|,)0,0(,|$)/);
        const full = n
          .toString(16)
          .padStart(32, '0')
          .match(/.{4}/g)!
          .map((g) => Number.parseInt(g, 16));
        let best = 0;
        for (let i = 0; i < 8; i++) {
          let j = i;
          while (j < 8 && full[j] === 0) j++;
          best = Math.max(best, j - i);
        }
        if (best >= 2) expect(text).toContain('::');
      }),
    );
  });

  it.each([
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:DB8::A', '2001:db8::a'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
    ['::ffff:a00:1', '::ffff:10.0.0.1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ])('%s is written %s', (input, canonical) => {
    expect(formatIpv6(parseIpv6(input)!)).toBe(canonical);
  });

  it.each([
    '::1::',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1::2:3:4:5:6:7:8',
    '12345::',
    'g::1',
    ':1',
    '1:',
    '::1%eth0',
    '[::1]',
    '::1.2.3',
    '::01.2.3.4',
    '1.2.3.4::',
    '',
  ])('refuses %j', (text) => {
    expect(parseIpv6(text)).toBeUndefined();
    expect(parseIp(text)).toBeUndefined();
  });
});

describe('either family', () => {
  it('parseIp picks the family and round-trips through text and bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          u32.map((n) => ({ family: 4 as const, value: BigInt(n) })),
          v6.map((value) => ({ family: 6 as const, value })),
        ),
        (a) => {
          expect(parseIp(formatIp(a))).toEqual(a);
          expect(ipFromBytes(ipToBytes(a))).toEqual(a);
          expect(ipToBytes(a).length).toBe(a.family === 4 ? 4 : 16);
          expect(ipFamily(formatIp(a))).toBe(a.family);
        },
      ),
    );
  });

  it('bytes are network order', () => {
    expect([...ipToBytes(parseIp('10.1.2.3')!)]).toEqual([10, 1, 2, 3]);
    expect(formatIp(ipFromBytes(Uint8Array.of(192, 168, 0, 1))!)).toBe('192.168.0.1');
    expect(ipFromBytes(new Uint8Array(6))).toBeUndefined();
  });
});

describe('CIDR', () => {
  const cidr4 = fc.record({
    family: fc.constant(4 as const),
    value: u32.map(BigInt),
    length: fc.integer({ min: 0, max: 32 }),
  });
  const cidr6 = fc.record({
    family: fc.constant(6 as const),
    value: v6,
    length: fc.integer({ min: 0, max: 128 }),
  });
  const anyCidr = fc.oneof(cidr4, cidr6);

  it('parse ∘ format is the identity', () => {
    fc.assert(
      fc.property(anyCidr, (c) => {
        expect(parseCidr(formatCidr(c))).toEqual(c);
      }),
    );
  });

  it('a network contains exactly the addresses that share its prefix', () => {
    fc.assert(
      fc.property(anyCidr, fc.oneof(u32, fc.bigInt({ min: 0n, max: (1n << 128n) - 1n })), (c, raw) => {
        const net = cidrNetwork(c);
        expect(isNetwork(net)).toBe(true);
        expect(cidrContains(net, c)).toBe(true);
        const width = c.family === 4 ? 32n : 128n;
        const value = BigInt(raw) & ((1n << width) - 1n);
        const host = width - BigInt(c.length);
        const inside = value >> host === c.value >> host;
        expect(cidrContains(c, { family: c.family, value })).toBe(inside);
        expect(cidrContains(c, { family: c.family === 4 ? 6 : 4, value: 0n })).toBe(false);
      }),
    );
  });

  it('keeps host bits as written and says whether it is a network', () => {
    const c = parseCidr('10.0.1.7/24')!;
    expect(formatCidr(c)).toBe('10.0.1.7/24');
    expect(isNetwork(c)).toBe(false);
    expect(formatCidr(cidrNetwork(c))).toBe('10.0.1.0/24');
    expect(formatCidr(parseCidr('2001:DB8:0:0::/64')!)).toBe('2001:db8::/64');
  });

  it.each([
    '1.2.3.4/33',
    '::/129',
    '1.2.3.4',
    '1.2.3.4/',
    '1.2.3.4/08',
    '1.2.3.4/-1',
    '1.2.3.4/3 ',
    '01.2.3.4/8',
    '::1::/64',
    '1.2.3.4/8/8',
  ])('refuses %j', (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });
});
