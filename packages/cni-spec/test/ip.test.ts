import { describe, expect, it } from 'vitest';
import { ipFamily, parseCidr } from '../src/index.js';

describe('ip helpers', () => {
  it.each([
    ['10.0.0.1', 4],
    ['255.255.255.255', 4],
    ['::', 6],
    ['::1', 6],
    ['fe80::1', 6],
    ['2600:1f14:abcd::5', 6],
    ['1:2:3:4:5:6:7:8', 6],
    ['::ffff:10.0.0.1', 6],
    ['256.0.0.1', undefined],
    ['01.0.0.1', undefined],
    ['1.2.3', undefined],
    ['1:2:3:4:5:6:7:8:9', undefined],
    ['1::2::3', undefined],
    ['fe80::1%eth0', undefined],
    ['12345::', undefined],
    ['', undefined],
  ])('%s is IPv%s', (s, family) => {
    expect(ipFamily(s)).toBe(family);
  });
  it.each([
    ['10.0.0.0/8', { address: '10.0.0.0', prefixLength: 8, family: 4 }],
    ['::/0', { address: '::', prefixLength: 0, family: 6 }],
    ['10.0.0.0/33', undefined],
    ['10.0.0.0', undefined],
    ['10.0.0.0/x', undefined],
    ['fe80::/129', undefined],
  ])('parseCidr(%s)', (s, want) => {
    expect(parseCidr(s)).toEqual(want);
  });
});
