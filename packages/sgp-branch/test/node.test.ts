import { describe, expect, it } from 'vitest';
import { isSgpError, podRequestsBranch, trunkLinkOf } from '../src/index.js';

describe('podRequestsBranch', () => {
  it('looks at the first container only, for a key starting with vpc.amazonaws.com/pod-eni', () => {
    expect(podRequestsBranch([{ 'vpc.amazonaws.com/pod-eni': '1', cpu: '1' }])).toBe(true);
    expect(podRequestsBranch([{ cpu: '1' }, { 'vpc.amazonaws.com/pod-eni': '1' }])).toBe(false);
    expect(podRequestsBranch([undefined])).toBe(false);
    expect(podRequestsBranch([])).toBe(false);
  });
});

describe('trunkLinkOf', () => {
  const links = [
    { name: 'eth0', index: 2, mac: '0a:00:00:00:00:01' },
    { name: 'eth1', index: 3, mac: '0A:00:00:00:00:0B' },
  ];
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return isSgpError(e) ? e.code : 'other';
    }
    return undefined;
  };

  it('finds the trunk link by MAC, case-insensitively', () => {
    expect(trunkLinkOf(links, '0a:00:00:00:00:0b')).toBe(links[1]);
  });

  it('tells a node without a trunk from a trunk whose link is not there yet', () => {
    expect(code(() => trunkLinkOf(links, undefined))).toBe('NO_TRUNK');
    expect(code(() => trunkLinkOf(links, '0a:00:00:00:00:0c'))).toBe('TRUNK_LINK_NOT_FOUND');
    expect(code(() => trunkLinkOf(links, 'nope'))).toBe('INVALID_ARGUMENT');
  });
});
