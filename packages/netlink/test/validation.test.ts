import { describe, expect, it } from 'vitest';
import { libc } from '../src/ffi/libc.js';
import {
  ERRNO_CODES,
  errnoCode,
  isNetlinkError,
  NetlinkError,
  netnsPath,
  sysctlRead,
  sysctlWrite,
} from '../src/index.js';
import * as addr from '../src/ops/addr.js';
import type { Op } from '../src/ops/driver.js';
import * as link from '../src/ops/link.js';
import * as neigh from '../src/ops/neigh.js';
import * as route from '../src/ops/route.js';
import * as rule from '../src/ops/rule.js';
import { requestsOf } from './helpers.js';

/** Runs an op against a recorder: bad input must throw INVALID_ARGUMENT before any request is made. */
function rejected(make: () => Op<unknown>): { code: string; sent: number } {
  let sent = 0;
  try {
    requestsOf(make(), () => {
      sent++;
      return [];
    });
  } catch (e) {
    if (isNetlinkError(e)) return { code: e.code, sent };
    throw e;
  }
  return { code: 'none', sent };
}

describe('bad input is refused before anything is sent', () => {
  const cases: [string, () => Op<unknown>][] = [
    ['long name', () => link.linkAdd({ kind: 'bridge', name: 'x'.repeat(16) })],
    ['name with slash', () => link.linkAdd({ kind: 'bridge', name: 'a/b' })],
    ['bad kind', () => link.linkAdd({ kind: 'dummy', name: 'd0' } as never)],
    ['veth without peer', () => link.linkAdd({ kind: 'veth', name: 'v0' } as never)],
    ['vlan id 4096', () => link.linkAdd({ kind: 'vlan', name: 'v', parent: 2, id: 4096 })],
    ['bad mac', () => link.linkSet(2, { address: '02:00:00:00:00' })],
    ['mtu 0', () => link.linkSet(2, { mtu: 0 })],
    ['ifindex 0', () => link.linkDel(0)],
    ['bad address', () => addr.addrAdd({ dev: 2, address: '10.0.0.256/32' })],
    ['bad prefix length', () => addr.addrAdd({ dev: 2, address: '10.0.0.1/33' })],
    ['bad label', () => addr.addrAdd({ dev: 2, address: '10.0.0.1/32', label: 'x'.repeat(20) })],
    ['route mixed families', () => route.routeAdd({ dst: '10.0.0.0/8', gateway: 'fe80::1' })],
    ['route bad table', () => route.routeAdd({ dst: '10.0.0.0/8', table: 0 })],
    ['route bad scope', () => route.routeAdd({ dst: '10.0.0.0/8', scope: 'galaxy' as never })],
    ['route bad type', () => route.routeAdd({ dst: '10.0.0.0/8', type: 'nat' as never })],
    ['rule mixed families', () => rule.ruleAdd({ from: '10.0.0.0/8', to: '::/0' })],
    ['rule negative priority', () => rule.ruleAdd({ priority: -1 })],
    ['rule fwmark too big', () => rule.ruleAdd({ fwmark: 2 ** 32 })],
    ['neigh bad lladdr', () => neigh.neighAdd({ dev: 2, address: '10.0.0.1', lladdr: 'zz' })],
    ['neigh bad state', () => neigh.neighAdd({ dev: 2, address: '10.0.0.1', state: 'sleepy' as never })],
  ];
  it.each(cases)('%s', (_name, make) => {
    expect(rejected(make)).toEqual({ code: 'INVALID_ARGUMENT', sent: 0 });
  });

  it('refuses bad namespace names and sysctl keys without touching anything', () => {
    for (const f of [() => netnsPath('../etc'), () => netnsPath(''), () => sysctlRead('kernel.hostname')]) {
      expect(f).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    expect(() => sysctlRead('net/../../etc/passwd')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => sysctlWrite('net.ipv4.ip_forward', '1\n0')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('errors', () => {
  it('maps errno numbers to stable codes', () => {
    expect(errnoCode(17)).toBe('EEXIST');
    expect(errnoCode(-19)).toBe('ENODEV');
    expect(errnoCode(4242)).toBe('EOTHER');
    expect(ERRNO_CODES.EOPNOTSUPP).toBe(95);
  });

  it('guards by brand and code, not by message', () => {
    const e = new NetlinkError({ code: 'EEXIST', op: 'route.add', errno: 17, extack: 'File exists' });
    expect(isNetlinkError(e)).toBe(true);
    expect(isNetlinkError(e, 'EEXIST', 'ENOENT')).toBe(true);
    expect(isNetlinkError(e, 'ENOENT')).toBe(false);
    expect(isNetlinkError(Object.assign(new Error('EEXIST'), { code: 'EEXIST' }))).toBe(false);
    expect(isNetlinkError(null)).toBe(false);
    expect(e).toMatchObject({ op: 'route.add', errno: 17, extack: 'File exists' });
  });

  it('reports NOT_SUPPORTED off Linux, without loading koffi', () => {
    let caught: unknown;
    try {
      libc('darwin');
    } catch (err) {
      caught = err;
    }
    expect(isNetlinkError(caught, 'NOT_SUPPORTED')).toBe(true);
  });
});
