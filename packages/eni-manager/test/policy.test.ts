import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  actionFamily,
  backoffDelay,
  classifyEni,
  eniError,
  eniTagKeys,
  errorCodeInfo,
  isEniManagerError,
  maxPods,
  newEniTags,
  RateLimiter,
  rankSubnets,
  tagsToAdd,
} from '../src/index.js';
import { sequence, TestClock } from './support/test-clock.js';

describe('RateLimiter', () => {
  it('keeps one bucket per action family', async () => {
    const clock = new TestClock();
    const limiter = new RateLimiter(clock, {
      createDelete: { capacity: 1, refillPerSecond: 1 },
      assignUnassign: { capacity: 1, refillPerSecond: 1 },
    });
    expect(await limiter.acquire('CreateNetworkInterface')).toBe(0);
    expect(await limiter.acquire('AssignPrivateIpAddresses')).toBe(0); // another family: not slowed
    expect(await limiter.acquire('DeleteNetworkInterface')).toBe(1000); // same family as Create
  });

  it('maps actions to the families EC2 throttles by', () => {
    expect(actionFamily('DescribeNetworkInterfaces')).toBe('describe');
    expect(actionFamily('AttachNetworkInterface')).toBe('attachDetach');
    expect(actionFamily('DetachNetworkInterface')).toBe('attachDetach');
    expect(actionFamily('CreateNetworkInterface')).toBe('createDelete');
    expect(actionFamily('UnassignPrivateIpAddresses')).toBe('assignUnassign');
    expect(actionFamily('ModifyNetworkInterfaceAttribute')).toBe('modify');
    expect(actionFamily('CreateTags')).toBe('tags');
  });
});

describe('backoffDelay', () => {
  const policy = { baseMs: 100, maxMs: 60_000, factor: 2, jitter: 0.15 };

  it('doubles from the base and stops at the cap (no jitter when random is 0)', () => {
    const zero = () => 0;
    expect([0, 1, 2, 3].map((n) => backoffDelay(policy, n, zero))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(policy, 20, zero)).toBe(60_000);
    expect(backoffDelay(policy, 10_000, zero)).toBe(60_000);
  });

  it('adds at most `jitter` of the delay, taken from the injected random source', () => {
    expect(backoffDelay(policy, 0, () => 1)).toBeCloseTo(115);
    const random = sequence(0.5, 0.2);
    expect(backoffDelay(policy, 1, random)).toBeCloseTo(215);
    expect(backoffDelay(policy, 1, random)).toBeCloseTo(206);
  });

  it('property: always finite, within [base·factor^n, cap·(1+jitter)]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const d = backoffDelay(policy, n, () => r);
        expect(Number.isFinite(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(Math.min(60_000, 100 * 2 ** Math.min(n, 30)));
        expect(d).toBeLessThanOrEqual(60_000 * 1.15 + 1e-9);
      }),
    );
  });
});

describe('maxPods', () => {
  it.each([
    ['m5.large', 3, 10, 29],
    ['c5.xlarge', 4, 15, 58],
    ['t3.small', 3, 4, 11],
    ['m5.4xlarge', 8, 30, 234],
    ['p5.48xlarge', 2, 50, 100],
  ])('%s (%i ENIs × %i IPv4) → %i, as eni-max-pods.txt', (_type, maxEnis, ipv4PerEni, expected) => {
    expect(maxPods({ maxEnis, ipv4PerEni })).toBe(expected);
  });

  it('subtracts the primary ENI under custom networking, multiplies by 16 with prefixes, honours a cap', () => {
    expect(maxPods({ maxEnis: 3, ipv4PerEni: 10 }, { customNetworking: true })).toBe(20);
    expect(maxPods({ maxEnis: 3, ipv4PerEni: 10 }, { prefixDelegation: true })).toBe(434);
    expect(maxPods({ maxEnis: 3, ipv4PerEni: 10 }, { prefixDelegation: true, cap: 110 })).toBe(110);
  });
});

describe('rankSubnets', () => {
  const primary = 'subnet-00000001';
  const s = (subnetId: string, availableIpv4: number, tags: Record<string, string> = {}) => ({
    subnetId,
    availableIpv4,
    tags,
  });

  it('keeps the primary and role-tagged subnets, most free first', () => {
    const ranked = rankSubnets(
      [
        s(primary, 10),
        s('subnet-00000002', 500, { 'kubernetes.io/role/cni': '1' }),
        s('subnet-00000003', 900), // untagged secondary: not eligible
        s('subnet-00000004', 50, { 'kubernetes.io/role/cni': '' }),
      ],
      { primarySubnetId: primary },
    );
    expect(ranked.map((x) => x.subnetId)).toEqual(['subnet-00000002', 'subnet-00000004', primary]);
  });

  it('drops subnets tagged role=0, even the primary', () => {
    const ranked = rankSubnets([s(primary, 10, { 'kubernetes.io/role/cni': '0' })], {
      primarySubnetId: primary,
    });
    expect(ranked).toEqual([]);
  });

  it('with a cluster name, drops subnets that carry only other clusters tags', () => {
    const ranked = rankSubnets(
      [
        s(primary, 10),
        s('subnet-00000002', 500, {
          'kubernetes.io/role/cni': '1',
          'cni.networking.k8s.aws/cluster/other': '1',
        }),
        s('subnet-00000003', 400, {
          'kubernetes.io/role/cni': '1',
          'cni.networking.k8s.aws/cluster/mine': '1',
        }),
      ],
      { primarySubnetId: primary, clusterName: 'mine' },
    );
    expect(ranked.map((x) => x.subnetId)).toEqual(['subnet-00000003', primary]);
  });
});

describe('classifyEni', () => {
  const opts = { instanceId: 'i-0123456789abcdef0', primaryEniId: 'eni-00000000000000001' };
  const eni = (tags: Record<string, string>, interfaceType = 'interface') => ({
    eniId: 'eni-00000000000000002',
    tags,
    interfaceType,
  });

  it('follows the reference: no_manage=true → unmanaged, other values → managed', () => {
    expect(classifyEni(eni({ [eniTagKeys.noManage]: 'true' }), opts)).toBe('unmanaged');
    expect(classifyEni(eni({ [eniTagKeys.noManage]: 'false' }), opts)).toBe('managed');
  });

  it('ENIs tagged for this instance are managed; untagged ones follow MANAGE_UNTAGGED_ENI', () => {
    expect(
      classifyEni(eni({ [eniTagKeys.instanceId]: opts.instanceId }), { ...opts, manageUntaggedEnis: false }),
    ).toBe('managed');
    expect(classifyEni(eni({}), opts)).toBe('managed');
    expect(classifyEni(eni({}), { ...opts, manageUntaggedEnis: false })).toBe('unmanaged');
    expect(
      classifyEni(eni({ [eniTagKeys.instanceId]: 'i-0ffffffffffffffff' }), {
        ...opts,
        manageUntaggedEnis: false,
      }),
    ).toBe('unmanaged');
  });

  it('the primary ENI is always managed; efa-only interfaces are set apart', () => {
    expect(classifyEni({ eniId: opts.primaryEniId, tags: { [eniTagKeys.noManage]: 'true' } }, opts)).toBe(
      'managed',
    );
    expect(classifyEni(eni({}, 'efa-only'), opts)).toBe('efa-only');
  });
});

describe('newEniTags', () => {
  it('writes instance id, cluster tags, createdAt; drops reserved additional keys', () => {
    const tags = newEniTags('i-0123456789abcdef0', Date.UTC(2026, 10, 22, 3, 4, 5, 678), {
      clusterName: 'prod',
      additionalTags: { team: 'net', 'node.k8s.amazonaws.com/instance_id': 'spoof' },
    });
    expect(tags).toEqual({
      team: 'net',
      'node.k8s.amazonaws.com/instance_id': 'i-0123456789abcdef0',
      'cluster.k8s.amazonaws.com/name': 'prod',
      'eks:eni:owner': 'amazon-vpc-cni',
      'node.k8s.amazonaws.com/createdAt': '2026-11-22T03:04:05Z',
    });
  });

  it('rejects tags EC2 would refuse, before any call', () => {
    expect(() => newEniTags('i-0123456789abcdef0', 0, { additionalTags: { 'aws:x': '1' } })).toThrow(
      expect.objectContaining({ code: 'InvalidInput' }),
    );
  });
});

describe('rankSubnets properties', () => {
  const arbSubnet = fc.record({
    subnetId: fc.integer({ min: 1, max: 9999 }).map((n) => `subnet-${n.toString(16).padStart(8, '0')}`),
    availableIpv4: fc.integer({ min: 0, max: 5000 }),
    tags: fc.dictionary(
      fc.constantFrom(
        'kubernetes.io/role/cni',
        'cni.networking.k8s.aws/cluster/a',
        'cni.networking.k8s.aws/cluster/b',
        'x',
      ),
      fc.constantFrom('0', '1', ''),
    ),
  });

  it('output is ordered most-free first, drops role=0, and every kept subnet is eligible', () => {
    fc.assert(
      fc.property(
        fc.array(arbSubnet, { maxLength: 12 }),
        fc.option(fc.constantFrom('a', 'b')),
        (subnets, cluster) => {
          const primarySubnetId = subnets[0]?.subnetId ?? 'subnet-00000001';
          const ranked = rankSubnets(subnets, {
            primarySubnetId,
            ...(cluster === null ? {} : { clusterName: cluster }),
          });
          for (let i = 1; i < ranked.length; i++)
            expect(ranked[i - 1]!.availableIpv4).toBeGreaterThanOrEqual(ranked[i]!.availableIpv4);
          for (const s of ranked) {
            expect(s.tags['kubernetes.io/role/cni']).not.toBe('0');
            if (s.subnetId !== primarySubnetId) expect(s.tags['kubernetes.io/role/cni']).toBeDefined();
            const clusterTags = Object.keys(s.tags).filter((k) =>
              k.startsWith('cni.networking.k8s.aws/cluster/'),
            );
            if (cluster !== null && clusterTags.length > 0)
              expect(clusterTags).toContain(`cni.networking.k8s.aws/cluster/${cluster}`);
          }
        },
      ),
    );
  });
});

describe('isEniManagerError', () => {
  it('matches by brand and code, so a copy from another install still matches', () => {
    const copy = { _tag: 'EniManagerError', code: 'InsufficientCidrBlocks', message: 'x' };
    expect(isEniManagerError(copy)).toBe(true);
    expect(isEniManagerError(copy, 'InsufficientCidrBlocks')).toBe(true);
    expect(isEniManagerError(copy, 'RequestLimitExceeded')).toBe(false);
  });

  it('rejects look-alikes: wrong brand, unknown code, non-objects', () => {
    expect(isEniManagerError({ _tag: 'Other', code: 'InsufficientCidrBlocks' })).toBe(false);
    expect(isEniManagerError({ _tag: 'EniManagerError', code: 'NotACode' })).toBe(false);
    expect(isEniManagerError(new Error('InsufficientCidrBlocks'))).toBe(false);
    expect(isEniManagerError(null)).toBe(false);
  });

  it('every code has its retryability in one table; throttling and outages are retryable, capacity is not', () => {
    const e = eniError('UnauthorizedOperation', 'denied', { iamAction: 'ec2:AttachNetworkInterface' });
    expect(e).toMatchObject({
      code: 'UnauthorizedOperation',
      retryable: false,
      iamAction: 'ec2:AttachNetworkInterface',
    });
    for (const code of [
      'RequestLimitExceeded',
      'InternalError',
      'Unavailable',
      'Ec2Transport',
      'ImdsUnavailable',
    ] as const) {
      expect(errorCodeInfo[code].retryable).toBe(true);
    }
    for (const code of [
      'InsufficientFreeAddressesInSubnet',
      'InsufficientCidrBlocks',
      'PrivateIpAddressLimitExceeded',
      'AttachmentLimitExceeded',
    ] as const) {
      expect(errorCodeInfo[code].retryable).toBe(false);
    }
  });
});

describe('tagsToAdd', () => {
  it('keeps only missing or different tags', () => {
    expect(tagsToAdd({ a: '1', b: '2' }, { a: '1', b: '3', c: '4' })).toEqual({ b: '3', c: '4' });
    expect(tagsToAdd({ a: '1' }, { a: '1' })).toEqual({});
  });
});
