import { CniError } from '@vpc-cni-kit/cni-spec';
import { describe, expect, it } from 'vitest';
import { buildAddResult, readPrevResult } from '../src/plugin/result.js';

describe('the aws-cni result', () => {
  const pod = (address: string) => ({
    address,
    deviceNumber: 0,
    routeTableId: 254,
    hostVethName: 'eni0123456789a',
    hostVethMac: '02:00:00:00:00:01',
    vethPrefix: 'eni',
  });

  it('carries an IPv6 pod address as a /128 (the reference: getIPAddressFromIpAllocationMetadata)', () => {
    const r = buildAddResult('1.0.0', '/var/run/netns/p', 'eth0', pod('2001:db8:c00:1:1::5'));
    expect(r.ips).toEqual([{ address: '2001:db8:c00:1:1::5/128', interface: 1 }]);
    expect(buildAddResult('1.0.0', '/n', 'eth0', pod('10.0.0.5')).ips?.[0]?.address).toBe('10.0.0.5/32');
  });

  it('refuses a pod address that is not an address with code 999 instead of writing it into the result', () => {
    let caught: unknown;
    try {
      buildAddResult('1.0.0', '/n', 'eth0', pod('10.0.0'));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CniError);
    expect((caught as CniError).code).toBe(999);
    expect((caught as CniError).details).toBe('10.0.0');
  });

  it('reads an IPv6 prevResult back for DEL and CHECK without the daemon', () => {
    const r = buildAddResult('0.4.0', '/var/run/netns/p', 'eth0', pod('2001:db8:c00:1:1::5'));
    expect(readPrevResult(r, 'eth0')).toEqual({
      address: '2001:db8:c00:1:1::5',
      routeTableId: 254,
      hostVethName: 'eni0123456789a',
    });
  });
});
