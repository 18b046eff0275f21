import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ipv4Pool } from '../src/address-pool.js';
import { seededRandom } from '../src/clock.js';
import { isEc2SimError, ManualClock } from '../src/index.js';
import { formatIpv4, formatIpv6, parseIpv4, parseIpv4Cidr, parseIpv6, parseIpv6Cidr } from '../src/ip.js';
import { QueryParams } from '../src/query.js';
import { TokenBuckets } from '../src/throttle.js';
import { renderError, renderResponse } from '../src/xml.js';

const codeOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (isEc2SimError(e)) return e.code;
    throw e;
  }
  return 'no error';
};

describe('ip', () => {
  it('IPv4 parse/format round-trips and rejects junk', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => parseIpv4(formatIpv4(n)) === n));
    for (const bad of ['1.2.3', '256.1.1.1', '01.2.3.4', '1.2.3.4 ', 'a.b.c.d', ''])
      expect(parseIpv4(bad)).toBeUndefined();
    expect(parseIpv4Cidr('10.0.0.0/24')).toEqual({ base: 0x0a000000, length: 24 });
    expect(parseIpv4Cidr('10.0.0.1/24')).toBeUndefined();
    expect(parseIpv4Cidr('10.0.0.0/33')).toBeUndefined();
  });

  it('IPv6 parse/format round-trips in canonical form', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (n) => parseIpv6(formatIpv6(n)) === n),
    );
    expect(formatIpv6(parseIpv6('2600:1f14:0abc:de00:0000:0000:0000:0010')!)).toBe('2600:1f14:abc:de00::10');
    expect(formatIpv6(0n)).toBe('::');
    for (const bad of ['1::2::3', '12345::', 'g::1', '1:2:3:4:5:6:7']) expect(parseIpv6(bad)).toBeUndefined();
    expect(parseIpv6Cidr('2600:1f14:abc:de00:1::/80')?.length).toBe(80);
    expect(parseIpv6Cidr('2600:1f14:abc:de00:1::1/80')).toBeUndefined();
  });
});

describe('Ipv4Pool', () => {
  it('never hands out reserved or duplicate addresses and keeps the free count exact', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 6 })), { maxLength: 40 }),
        fc.integer(),
        (ops, seed) => {
          const pool = new Ipv4Pool(parseIpv4Cidr('10.1.0.0/26')!);
          const random = seededRandom(seed);
          const held = new Set<number>();
          for (const [alloc, n] of ops) {
            if (alloc) {
              try {
                for (const a of pool.allocate(n, 'random', random, 's')) {
                  expect(held.has(a)).toBe(false);
                  expect(pool.isReserved(a)).toBe(false);
                  held.add(a);
                }
              } catch (e) {
                expect(isEc2SimError(e) && e.code).toBe('InsufficientFreeAddressesInSubnet');
                expect(n).toBeGreaterThan(59 - held.size);
              }
            } else {
              for (const a of [...held].slice(0, n)) {
                pool.release(a);
                held.delete(a);
              }
            }
            expect(pool.available).toBe(59 - held.size);
          }
        },
      ),
    );
  });

  it('prefixes take aligned free /28s only', () => {
    const pool = new Ipv4Pool(parseIpv4Cidr('10.1.0.0/26')!);
    expect(pool.allocatePrefixes(2).map(formatIpv4)).toEqual(['10.1.0.16', '10.1.0.32']);
    expect(codeOf(() => pool.allocatePrefixes(1))).toBe('InsufficientCidrBlocks');
    expect(pool.available).toBe(59 - 32);
  });
});

describe('QueryParams', () => {
  it('reads lists, structures and filters, and rejects what nobody read', () => {
    const p = QueryParams.parse(
      'Action=X&Filter.1.Name=tag%3AName&Filter.1.Value.1=a&Filter.1.Value.2=b&Filter.2.Name=vpc-id&Filter.2.Value.1=v&Id.1=x&Id.2=y',
    );
    expect(p.string('Action')).toBe('X');
    expect(p.filters()).toEqual([
      { name: 'tag:Name', values: ['a', 'b'] },
      { name: 'vpc-id', values: ['v'] },
    ]);
    expect(p.list('Id')).toEqual(['x', 'y']);
    p.finish();
    const q = QueryParams.parse('A=1&B=2');
    q.string('A');
    expect(codeOf(() => q.finish())).toBe('UnknownParameter');
    expect(codeOf(() => QueryParams.parse('A=1&A=2'))).toBe('InvalidParameter');
    expect(codeOf(() => QueryParams.parse('N=x').int('N'))).toBe('InvalidParameterValue');
    expect(codeOf(() => QueryParams.parse('B=yes').bool('B'))).toBe('InvalidParameterValue');
    expect(codeOf(() => QueryParams.parse('L.0=a').list('L'))).toBe('InvalidParameter');
    expect(codeOf(() => QueryParams.parse('').required('R'))).toBe('MissingParameter');
  });
});

describe('xml', () => {
  it('renders item lists, omits undefined and escapes text', () => {
    const xml = renderResponse('DescribeThingsResponseX', 'rid', {
      thingSet: [{ name: 'a<b&"c"', missing: undefined }, { name: 'd' }],
      plain: ['x', 'y'],
      flag: false,
    });
    expect(xml).toContain('<requestId>rid</requestId>');
    expect(xml).toContain(
      '<thingSet><item><name>a&lt;b&amp;&quot;c&quot;</name></item><item><name>d</name></item></thingSet>',
    );
    expect(xml).toContain('<plain><item>x</item><item>y</item></plain>');
    expect(xml).toContain('<flag>false</flag>');
    expect(xml).not.toContain('missing');
    expect(renderError('A.B', 'm & n', 'r')).toContain('<Code>A.B</Code><Message>m &amp; n</Message>');
  });
});

describe('TokenBuckets', () => {
  it('refills continuously from the injected clock, capped at the burst', () => {
    const clock = new ManualClock();
    const b = new TokenBuckets(
      {
        describe: { burst: 2, refillPerSecond: 1 },
        'unbounded-describe': { burst: 1, refillPerSecond: 1 },
        mutating: { burst: 1, refillPerSecond: 1 },
        'eni-lifecycle': { burst: 1, refillPerSecond: 1 },
        'ipv4-assign': { burst: 1, refillPerSecond: 1 },
        'ipv6-assign': { burst: 1, refillPerSecond: 1 },
        'modify-eni': { burst: 1, refillPerSecond: 1 },
        tags: { burst: 1, refillPerSecond: 1 },
      },
      clock,
    );
    expect([b.take('describe'), b.take('describe'), b.take('describe')]).toEqual([true, true, false]);
    clock.advance(500);
    expect(b.take('describe')).toBe(false);
    clock.advance(500);
    expect(b.take('describe')).toBe(true);
    clock.advance(60_000);
    expect([b.take('describe'), b.take('describe'), b.take('describe')]).toEqual([true, true, false]);
    expect(b.take('tags')).toBe(true);
  });
});
