import { formatAddress, parseAddress, parseCidr } from '@vpc-cni-kit/datastore';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('addresses and CIDRs', () => {
  it('parses strictly and prints canonically (RFC 5952 for IPv6, as Go prints)', () => {
    expect(parseAddress('10.0.0.1')).toEqual({ family: 4, value: 0x0a000001n });
    for (const bad of [
      '10.0.0',
      '10.0.0.256',
      '010.0.0.1',
      '1.2.3.4 ',
      '',
      ':::',
      '1::2::3',
      'g::1',
      '1:2:3:4:5:6:7:8:9',
    ]) {
      expect(parseAddress(bad), bad).toBeUndefined();
    }
    const v6 = (s: string) => formatAddress(6, parseAddress(s)!.value);
    expect(v6('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(v6('2001:db8:0:1:0:0:1:0')).toBe('2001:db8:0:1::1:0');
    expect(v6('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(v6('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2:3:4:5:6');
    expect(v6('::')).toBe('::');
    expect(v6('1::')).toBe('1::');
    expect(v6('2001:db8:0:1:1:1:1:1')).toBe('2001:db8:0:1:1:1:1:1');
  });

  it('round-trips any IPv4 and IPv6 value', () => {
    fc.assert(
      fc.property(fc.ipV4(), (s) => {
        expect(formatAddress(4, parseAddress(s)!.value)).toBe(s);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (v) => {
        expect(parseAddress(formatAddress(6, v))).toEqual({ family: 6, value: v });
      }),
    );
  });

  it('accepts only network CIDRs', () => {
    expect(parseCidr('10.0.0.16/28')?.text).toBe('10.0.0.16/28');
    expect(parseCidr('10.0.0.17/28')).toBeUndefined();
    expect(parseCidr('2001:DB8::/80')?.text).toBe('2001:db8::/80');
    expect(parseCidr('10.0.0.1/33')).toBeUndefined();
    expect(parseCidr('10.0.0.1/032')).toBeUndefined();
    expect(parseCidr('10.0.0.1')).toBeUndefined();
  });
});
