import { describe, expect, it } from 'vitest';
import {
  awsId,
  decimal,
  index,
  instanceType,
  ipv4Prefix,
  ipv6Prefix,
  mac,
  positive,
  region,
  zone,
} from '../src/shapes.js';

// The one set of shape checks both the IMDS and the EC2 parsers use.
describe('shared shape checks', () => {
  it('delegated prefixes are /28 (host bits zero) and /80', () => {
    expect(ipv4Prefix('10.0.0.16/28')).toBe('10.0.0.16/28');
    expect(ipv4Prefix('10.0.0.17/28')).toBeUndefined();
    expect(ipv4Prefix('10.0.0.0/24')).toBeUndefined();
    expect(ipv4Prefix('2001:db8::/28')).toBeUndefined();
    expect(ipv6Prefix('2001:db8:c00:1:2::/80')).toBe('2001:db8:c00:1:2::/80');
    expect(ipv6Prefix('2001:db8:c00:1::/64')).toBeUndefined();
    expect(ipv6Prefix('10.0.0.0/80')).toBeUndefined();
  });

  it('indexes and counts are safe integers: indexes from 0, counts from 1', () => {
    expect([0, 1, 99].map(index)).toEqual([0, 1, 99]);
    expect([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53].map(index)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([positive(1), positive(0), positive(2.5)]).toEqual([1, undefined, undefined]);
    expect([decimal('7'), decimal('-1'), decimal('1e3'), decimal('')]).toEqual([
      7,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('ids by prefix, MACs, zones, regions and instance types', () => {
    expect(awsId('eni-attach', 'eni-attach-0123abcd')).toBe('eni-attach-0123abcd');
    expect(awsId('eni', 'eni-attach-0123abcd')).toBeUndefined();
    expect(awsId('subnet', 'subnet-XYZ01234')).toBeUndefined();
    expect(mac('02:0a:1b:2c:3d:4e')).toBe('02:0a:1b:2c:3d:4e');
    expect(mac('02:0A:1B:2C:3D:4E')).toBeUndefined();
    expect([zone('us-west-2a'), zone('us-west-2')]).toEqual(['us-west-2a', undefined]);
    expect([region('us-west-2'), region('us-west-2a1!')]).toEqual(['us-west-2', undefined]);
    expect([instanceType('m5.large'), instanceType('m5')]).toEqual(['m5.large', undefined]);
  });
});
