import { describe, expect, it } from 'vitest';
import {
  createInstanceLimitsSource,
  isEniManagerError,
  maxPods,
  publishedInstanceLimits,
} from '../src/index.js';

describe("the reference's published instance limits", () => {
  it('carries the reference numbers (misc/eni-max-pods.txt examples)', () => {
    const m5 = publishedInstanceLimits('m5.large')!;
    expect(m5).toMatchObject({
      maxEnis: 3,
      ipv4PerEni: 10,
      hypervisor: 'nitro',
      prefixDelegationSupported: true,
    });
    expect(maxPods(m5)).toBe(29);
    expect(maxPods(publishedInstanceLimits('c5.xlarge')!)).toBe(58);
    expect(maxPods(publishedInstanceLimits('t3.small')!)).toBe(11);
    expect(maxPods(publishedInstanceLimits('m5.4xlarge')!)).toBe(234);
    const p5 = publishedInstanceLimits('p5.48xlarge')!;
    expect(maxPods(p5)).toBe(100);
    expect(p5.networkCards).toHaveLength(32);
    expect(p5.maxEnisTotal).toBe(2);
    // A Xen type: prefix delegation is not supported there.
    expect(publishedInstanceLimits('m4.large')).toMatchObject({
      hypervisor: 'xen',
      prefixDelegationSupported: false,
    });
    expect(publishedInstanceLimits('zz9.huge')).toBeUndefined();
    expect(publishedInstanceLimits('constructor')).toBeUndefined();
  });

  it('IMDS-only (no EC2 at all): known types from the table, an unknown type is UnknownInstanceType', async () => {
    const source = createInstanceLimitsSource(undefined);
    expect((await source.limits('c5.xlarge')).ipv4PerEni).toBe(15);
    const error = await source.limits('zz9.huge').catch((e: unknown) => e);
    expect(isEniManagerError(error, 'UnknownInstanceType')).toBe(true);
    expect(String((error as Error).message)).toContain('IMDS-only');
  });
});

describe("the VPC resource controller's published branch limits", () => {
  it('gives the branch interfaces per trunk, 0 for types that cannot trunk, undefined for unlisted types', async () => {
    const { publishedBranchLimit } = await import('../src/index.js');
    expect(publishedBranchLimit('m5.large')).toBe(9);
    expect(publishedBranchLimit('c5.xlarge')).toBe(18);
    expect(publishedBranchLimit('m5.4xlarge')).toBe(54);
    expect(publishedBranchLimit('t3.small')).toBe(0);
    expect(publishedBranchLimit('no.such-type')).toBeUndefined();
    expect(publishedBranchLimit('constructor')).toBeUndefined();
  });
});
