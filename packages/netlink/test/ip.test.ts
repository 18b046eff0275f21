import { describe, expect, it } from 'vitest';
import { formatIp, formatMac, ipFamily, parseIp, parseMac, parsePrefix } from '../src/index.js';

describe('IP parsing and formatting', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['::', '::'],
    ['::1', '::1'],
    ['2001:DB8::5', '2001:db8::5'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['fe80::1:2:3:4:5:6', 'fe80:0:1:2:3:4:5:6'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['::ffff:10.1.2.3', '::ffff:10.1.2.3'],
    ['64:ff9b::192.0.2.1', '64:ff9b::c000:201'],
  ])('%s round-trips to %s', (text, canonical) => {
    const b = parseIp(text);
    expect(b).toBeDefined();
    expect(formatIp(b!)).toBe(canonical);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.0.0.1',
    '01.2.3.4',
    '1.2.3.-1',
    ' 1.2.3.4',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7::8',
    'g::1',
    '12345::',
    'fe80::1%eth0',
    '::1.2.3',
  ])('rejects %j', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('parses prefixes and knows families', () => {
    expect(parsePrefix('10.0.0.0/24')).toEqual({ family: 4, bytes: Uint8Array.of(10, 0, 0, 0), length: 24 });
    expect(parsePrefix('10.0.0.5')?.length).toBe(32);
    expect(parsePrefix('2001:db8::/48')?.length).toBe(48);
    expect(parsePrefix('::/0')?.length).toBe(0);
    expect(parsePrefix('10.0.0.0/33')).toBeUndefined();
    expect(parsePrefix('::/129')).toBeUndefined();
    expect(parsePrefix('10.0.0.0/')).toBeUndefined();
    expect(parsePrefix('10.0.0.0/08')).toBeUndefined();
    expect(ipFamily('::1')).toBe(6);
    expect(ipFamily('1.1.1.1')).toBe(4);
    expect(ipFamily('nope')).toBeUndefined();
  });

  it('parses and formats MACs', () => {
    expect(formatMac(parseMac('02:AB:cd:00:00:01')!)).toBe('02:ab:cd:00:00:01');
    expect(formatMac(parseMac('02-ab-cd-00-00-01')!)).toBe('02:ab:cd:00:00:01');
    expect(parseMac('02:ab:cd:00:00')).toBeUndefined();
    expect(parseMac('02:ab:cd:00:00:0g')).toBeUndefined();
  });
});
