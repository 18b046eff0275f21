import { execFileSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { describePrivileged, uniqueName } from '@vpc-cni-kit/testkit';
import { expect, it } from 'vitest';
import {
  isNetlinkError,
  netnsAdd,
  netnsDel,
  netnsList,
  netnsPath,
  openSync,
  sysctlRead,
  sysctlWrite,
  THREAD_NETNS,
  withNetnsSync,
} from '../src/index.js';

describePrivileged('named namespaces', () => {
  it('netnsAdd/netnsDel behave like ip netns add/del, and iproute2 sees them', () => {
    const own = readlinkSync(THREAD_NETNS);
    const name = uniqueName('vcknl', 32);
    const path = netnsAdd(name);
    try {
      expect(path).toBe(netnsPath(name));
      expect(readlinkSync(THREAD_NETNS)).toBe(own);
      expect(netnsList()).toContain(name);
      expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(name);
      expect(execFileSync('ip', ['-n', name, '-o', 'link'], { encoding: 'utf8' })).toMatch(/^1: lo:/);
      expect(withNetnsSync(path, () => readlinkSync(THREAD_NETNS))).not.toBe(own);
      expect(readlinkSync(THREAD_NETNS)).toBe(own);
      let dup: unknown;
      try {
        netnsAdd(name);
      } catch (e) {
        dup = e;
      }
      expect(isNetlinkError(dup, 'EEXIST')).toBe(true);
    } finally {
      netnsDel(name);
    }
    expect(existsSync(path)).toBe(false);
    expect(netnsList()).not.toContain(name);
    let missing: unknown;
    try {
      netnsDel(name);
    } catch (e) {
      missing = e;
    }
    expect(isNetlinkError(missing, 'ENOENT')).toBe(true);
    expect(() => openSync({ netns: path })).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('fails at once with ENOENT when the namespace directory cannot be made (no recursive mkdir)', () => {
    // Node 20's recursive mkdir never returns for a path under /proc; this must be one typed ENOENT.
    const dir = '/proc/vcknl-missing/netns';
    let failure: unknown;
    try {
      netnsAdd(uniqueName('vcknl', 32), { dir });
    } catch (e) {
      failure = e;
    }
    expect(isNetlinkError(failure, 'ENOENT')).toBe(true);
    expect(netnsList({ dir })).toEqual([]);
  });

  it('reads and writes net sysctls inside a namespace only', () => {
    const name = uniqueName('vcknl', 32);
    const path = netnsAdd(name);
    try {
      const rootValue = sysctlRead('net.ipv4.ip_forward');
      const inside = sysctlRead('net.ipv4.ip_forward', { netns: path });
      sysctlWrite('net.ipv4.ip_forward', inside === '1' ? 0 : 1, { netns: path });
      expect(sysctlRead('net.ipv4.ip_forward', { netns: path })).toBe(inside === '1' ? '0' : '1');
      expect(sysctlRead('net.ipv4.ip_forward')).toBe(rootValue);
      expect(
        execFileSync('ip', ['netns', 'exec', name, 'cat', '/proc/sys/net/ipv4/ip_forward'], {
          encoding: 'utf8',
        }).trim(),
      ).toBe(inside === '1' ? '0' : '1');
      expect(() => sysctlRead('net.ipv4.no_such_key', { netns: path })).toThrow(
        expect.objectContaining({ code: 'ENOENT' }),
      );
    } finally {
      netnsDel(name);
    }
  });
});
