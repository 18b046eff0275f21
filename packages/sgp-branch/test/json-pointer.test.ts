import { describe, expect, it } from 'vitest';
import { jsonPointerToken } from '../src/index.js';

describe('jsonPointerToken (RFC 6901)', () => {
  it('escapes ~ before /, so the escape of a key never reads back as another key', () => {
    expect(jsonPointerToken('vpc.amazonaws.com/pod-eni')).toBe('vpc.amazonaws.com~1pod-eni');
    expect(jsonPointerToken('a~b')).toBe('a~0b');
    expect(jsonPointerToken('a~1/b')).toBe('a~01~1b');
    expect(jsonPointerToken('plain')).toBe('plain');
    expect(jsonPointerToken('')).toBe('');
  });

  it('round-trips through the RFC 6901 decoding (~1 to / first, then ~0 to ~)', () => {
    const decode = (t: string) => t.replaceAll('~1', '/').replaceAll('~0', '~');
    for (const key of ['~', '/', '~/', '/~', '~0', '~1', 'x~01/y', 'vpc.amazonaws.com/pod-ips'])
      expect(decode(jsonPointerToken(key))).toBe(key);
  });
});
