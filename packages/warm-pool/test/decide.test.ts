import {
  DEFAULT_TARGETS,
  decide,
  isWarmPoolError,
  type PoolCidr,
  type PoolDecision,
  type PoolEni,
  type PoolTargets,
  poolFigures,
  type WarmPoolError,
} from '@vpc-cni-kit/warm-pool';
import { describe, expect, it } from 'vitest';
import { type ModelEni, mkEni, stats } from './model.js';

const M5_LARGE = { maxEnis: 3, ipv4PerEni: 10, maxPods: 29 };
const NOW = 10_000_000;

function run(
  enis: ModelEni[],
  targets: Partial<PoolTargets> = {},
  extra: { limits?: object; timing?: object } = {},
): PoolDecision {
  return decide({
    stats: stats(enis),
    targets: { ...DEFAULT_TARGETS, ...targets },
    limits: { ...M5_LARGE, ...extra.limits },
    timing: { now: NOW, ...extra.timing },
  });
}

/** A compact view of a decision for table rows. */
function brief(d: PoolDecision): string {
  switch (d.kind) {
    case 'none':
      return `none:${d.reason.code}`;
    case 'assign':
      return `assign ${d.count} ${d.unit} to ${d.eniId} (${d.reason.code})`;
    case 'create-eni':
      return `create-eni ${d.count} ${d.unit} (${d.reason.code})`;
    case 'release':
      return `release ${d.cidrs.map((c) => c.cidr).join(',')} (${d.reason.code})`;
    case 'free-eni':
      return `free ${d.eniId} (${d.reason.code})`;
  }
}

const PD = { prefixDelegation: true, warmEniTarget: 1 };

// Rows follow the reference's documented behaviour (README "CNI Configuration Variables",
// docs/eni-and-ip-target.md, docs/prefix-and-ip-target.md, ipamd.go pool maths).
const table: [string, ModelEni[], Partial<PoolTargets>, { limits?: object; timing?: object }, string][] = [
  // WARM_ENI_TARGET (default 1): keep a whole ENI's worth (9 on m5.large) free.
  [
    'defaults: empty node fills the primary ENI',
    [mkEni(0, 0)],
    {},
    {},
    'assign 9 ip to eni-0 (below-warm-eni-target)',
  ],
  ['defaults: 9 free is enough', [mkEni(0, 9)], {}, {}, 'none:within-targets'],
  [
    'defaults: one pod → a second ENI with 9',
    [mkEni(0, 9, { assigned: 1 })],
    {},
    {},
    'create-eni 9 ip (below-warm-eni-target)',
  ],
  [
    'defaults: partly filled ENI is topped up first',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 4)],
    {},
    {},
    'assign 5 ip to eni-1 (below-warm-eni-target)',
  ],
  [
    'defaults: all ENIs full → no room',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 9, { assigned: 9 }), mkEni(2, 9, { assigned: 2 })],
    {},
    { limits: { maxPods: 100 } },
    'none:no-room',
  ],
  [
    'MAX_ENI=1 caps ENIs',
    [mkEni(0, 9, { assigned: 1 })],
    {},
    { limits: { maxEniSetting: 1 } },
    'none:no-room',
  ],
  [
    'MAX_ENI ≤ 0 is ignored',
    [mkEni(0, 9, { assigned: 1 })],
    {},
    { limits: { maxEniSetting: 0 } },
    'create-eni 9 ip (below-warm-eni-target)',
  ],
  [
    'trunk reserve keeps a slot',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 9, { assigned: 1 })],
    {},
    { limits: { trunkReserve: 1 } },
    'none:no-room',
  ],
  [
    'unmanaged ENIs count against the limit',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 9, { assigned: 1 })],
    {},
    { limits: { unmanagedEnis: 1 } },
    'none:no-room',
  ],
  [
    'excluded ENIs count twice against the limit',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 0, { flags: { excluded: true } })],
    {},
    { limits: { maxEnis: 2 } },
    'none:no-room',
  ],
  [
    'WARM_ENI_TARGET=0 grows only when empty',
    [mkEni(0, 2, { assigned: 1 })],
    { warmEniTarget: 0 },
    {},
    'none:within-targets',
  ],
  [
    'WARM_ENI_TARGET=0 with nothing free',
    [mkEni(0, 2, { assigned: 2 })],
    { warmEniTarget: 0 },
    {},
    'assign 7 ip to eni-0 (below-warm-eni-target)',
  ],
  [
    'max pods stops growth',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 9, { assigned: 9 }), mkEni(2, 9, { assigned: 5 })],
    {},
    { limits: { maxPods: 27 } },
    'none:at-max-pods',
  ],
  [
    'subnet-full back-off (120 s)',
    [mkEni(0, 0)],
    {},
    { timing: { lastInsufficientAddressesAt: NOW - 119_999 } },
    'none:subnet-backoff',
  ],
  [
    'back-off over after 120 s',
    [mkEni(0, 0)],
    {},
    { timing: { lastInsufficientAddressesAt: NOW - 120_000 } },
    'assign 9 ip to eni-0 (below-warm-eni-target)',
  ],
  [
    'custom networking skips the primary',
    [mkEni(0, 0)],
    {},
    { limits: { customNetworking: true } },
    'create-eni 9 ip (below-warm-eni-target)',
  ],
  [
    'trunk ENIs are never filled',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 0, { flags: { isTrunk: true } })],
    {},
    {},
    'create-eni 9 ip (below-warm-eni-target)',
  ],
  // WARM_IP_TARGET / MINIMUM_IP_TARGET take precedence.
  [
    'WARM_IP_TARGET=5 on an empty node',
    [mkEni(0, 0)],
    { warmIpTarget: 5 },
    {},
    'assign 5 ip to eni-0 (below-warm-ip-target)',
  ],
  [
    'WARM_IP_TARGET=5 short by 3',
    [mkEni(0, 3, { assigned: 1 })],
    { warmIpTarget: 5 },
    {},
    'assign 3 ip to eni-0 (below-warm-ip-target)',
  ],
  [
    'WARM_IP_TARGET=5 over by 3 releases the highest /32s',
    [mkEni(0, 9, { assigned: 1 })],
    { warmIpTarget: 5 },
    {},
    'release 10.0.0.18/32,10.0.0.17/32,10.0.0.16/32 (above-ip-targets)',
  ],
  [
    'shrink at most every 30 s',
    [mkEni(0, 9, { assigned: 1 })],
    { warmIpTarget: 5 },
    { timing: { lastShrinkAt: NOW - 29_999 } },
    'none:shrink-too-soon',
  ],
  [
    'cooling addresses are not released',
    [mkEni(0, 9, { assigned: 1, cooldown: 8 })],
    { warmIpTarget: 5 },
    {},
    'none:nothing-releasable',
  ],
  [
    'MINIMUM_IP_TARGET=20 + WARM_IP_TARGET=2 from zero',
    [mkEni(0, 0)],
    { warmIpTarget: 2, minimumIpTarget: 20 },
    {},
    'assign 9 ip to eni-0 (below-minimum-ip-target)',
  ],
  [
    'MINIMUM_IP_TARGET spills into a new ENI',
    [mkEni(0, 9)],
    { warmIpTarget: 2, minimumIpTarget: 20 },
    {},
    'create-eni 9 ip (below-minimum-ip-target)',
  ],
  [
    'MINIMUM_IP_TARGET=20 reached: no shrink below it',
    [mkEni(0, 9), mkEni(1, 9), mkEni(2, 2)],
    { warmIpTarget: 2, minimumIpTarget: 20 },
    {},
    'none:within-targets',
  ],
  [
    'MINIMUM_IP_TARGET alone means warm 0',
    [mkEni(0, 9, { assigned: 9 }), mkEni(1, 9, { assigned: 9 }), mkEni(2, 2, { assigned: 2 })],
    { minimumIpTarget: 20 },
    {},
    'none:within-targets',
  ],
  // Prefix delegation: WARM_PREFIX_TARGET, rounding to 16.
  [
    'PD WARM_PREFIX_TARGET=1 on an empty node',
    [mkEni(0, 0, { pd: true })],
    { ...PD, warmPrefixTarget: 1 },
    {},
    'assign 1 prefix to eni-0 (below-warm-prefix-target)',
  ],
  [
    'PD one pod on the only prefix',
    [mkEni(0, 1, { pd: true, assigned: 1 })],
    { ...PD, warmPrefixTarget: 1 },
    {},
    'assign 1 prefix to eni-0 (below-warm-prefix-target)',
  ],
  [
    'PD one full and one free prefix',
    [mkEni(0, 2, { pd: true, assigned: 16 })],
    { ...PD, warmPrefixTarget: 1 },
    {},
    'none:within-targets',
  ],
  [
    'PD three free prefixes release two',
    [mkEni(0, 4, { pd: true, assigned: 3 })],
    { ...PD, warmPrefixTarget: 1 },
    {},
    'release 10.0.3.0/28,10.0.2.0/28 (above-warm-prefix-target)',
  ],
  [
    'PD WARM_ENI_TARGET is ignored (#3685): new ENI only when prefix slots run out',
    [mkEni(0, 9, { pd: true, assigned: 144 })],
    { ...PD, warmPrefixTarget: 1, warmEniTarget: 3 },
    { limits: { maxPods: 500 } },
    'create-eni 1 prefix (below-warm-prefix-target)',
  ],
  [
    'PD MINIMUM_IP_TARGET=20 needs 2 prefixes (20 behaves as 32)',
    [mkEni(0, 0, { pd: true })],
    { ...PD, warmIpTarget: 5, minimumIpTarget: 20 },
    {},
    'assign 2 prefix to eni-0 (below-minimum-ip-target)',
  ],
  [
    'PD 2 prefixes satisfy MIN 20 + WARM 5',
    [mkEni(0, 2, { pd: true })],
    { ...PD, warmIpTarget: 5, minimumIpTarget: 20 },
    {},
    'none:within-targets',
  ],
  [
    'PD WARM_IP_TARGET=5: keep ceil((3 + 5) / 16) = 1 prefix',
    [mkEni(0, 3, { pd: true, assigned: 3 })],
    { ...PD, warmIpTarget: 5 },
    {},
    'release 10.0.2.0/28,10.0.1.0/28 (above-ip-targets)',
  ],
  // Freeing ENIs.
  [
    'defaults: an extra empty ENI older than 1 min is freed',
    [mkEni(0, 9), mkEni(1, 9)],
    {},
    {},
    'free eni-1 (extra-eni)',
  ],
  [
    'ENIs younger than 1 min are kept',
    [mkEni(0, 9), mkEni(1, 9, { createdAt: NOW - 59_999 })],
    {},
    {},
    'none:within-targets',
  ],
  [
    'ENIs with cooling addresses are kept',
    [mkEni(0, 9), mkEni(1, 9, { cooldown: 1 })],
    {},
    {},
    'none:within-targets',
  ],
  [
    'EFA ENIs are never freed',
    [mkEni(0, 9), mkEni(1, 9, { flags: { isEfa: true } })],
    {},
    {},
    'none:within-targets',
  ],
  [
    'an ENI needed for WARM_IP_TARGET is kept',
    [mkEni(0, 9, { assigned: 6 }), mkEni(1, 9)],
    { warmIpTarget: 5 },
    { timing: { lastShrinkAt: NOW } },
    'none:shrink-too-soon',
  ],
  [
    'an ENI not needed for WARM_IP_TARGET is freed',
    [mkEni(0, 9, { assigned: 2 }), mkEni(1, 9)],
    { warmIpTarget: 5 },
    { timing: { lastShrinkAt: NOW } },
    'free eni-1 (extra-eni)',
  ],
  [
    'PD: an empty ENI is freed when others keep WARM_PREFIX_TARGET',
    [mkEni(0, 2, { pd: true, assigned: 3 }), mkEni(1, 1, { pd: true })],
    { ...PD, warmPrefixTarget: 1 },
    { timing: { lastShrinkAt: NOW } },
    'free eni-1 (extra-eni)',
  ],
  [
    'PD: an empty ENI holding the only free prefix is kept',
    [mkEni(0, 1, { pd: true, assigned: 3 }), mkEni(1, 1, { pd: true })],
    { ...PD, warmPrefixTarget: 1 },
    {},
    'none:within-targets',
  ],
];

describe('decide: reference behaviour table', () => {
  for (const [name, enis, targets, extra, expected] of table) {
    it(name, () => {
      expect(brief(run(enis, targets, extra))).toBe(expected);
    });
  }
});

describe('poolFigures', () => {
  it('computes the reference target state in prefix mode', () => {
    const f = poolFigures({
      stats: stats([mkEni(0, 3, { pd: true, assigned: 3 })]),
      targets: { ...DEFAULT_TARGETS, prefixDelegation: true, warmIpTarget: 5, minimumIpTarget: 20 },
      limits: M5_LARGE,
      timing: { now: NOW },
    });
    expect(f).toMatchObject({
      maxIpsPerEni: 144,
      maxSlotsPerEni: 9,
      total: 48,
      assigned: 3,
      available: 45,
      totalPrefixes: 3,
      freePrefixes: 2,
      short: 0,
      over: 28,
      shortPrefixes: 0,
      overPrefixes: 1,
    });
  });
});

describe('input validation', () => {
  it('throws a typed InvalidInput error naming the field', () => {
    const bad: [string, () => unknown][] = [
      ['targets.warmIpTarget', () => run([mkEni(0, 0)], { warmIpTarget: -1 })],
      ['limits.ipv4PerEni', () => run([mkEni(0, 0)], {}, { limits: { ipv4PerEni: 1 } })],
      ['timing.now', () => run([mkEni(0, 0)], {}, { timing: { now: Number.NaN } })],
      [
        'stats.enis[0].cidrs[0]',
        () =>
          run(
            [mkEni(0, 1, { assigned: 1, cooldown: 1 })].map((e) => ({
              ...e,
              cidrs: e.cidrs.map((c) => ({ ...c, cooldown: 1 })),
            })),
          ),
      ],
      // Past a valid first ENI: the first bad field of the second, whichever check catches it.
      ['stats.enis[1].createdAt', () => run([mkEni(0, 2), mkEni(1, 2, { createdAt: Number.NaN })])],
      [
        'stats.enis[1].cidrs[1].size',
        () =>
          run([
            mkEni(0, 2),
            { ...mkEni(1, 2), cidrs: mkEni(1, 2).cidrs.map((c, i) => (i === 1 ? { ...c, size: 0 } : c)) },
          ]),
      ],
      [
        'stats.enis[1].cidrs[0].assigned',
        () =>
          run([
            mkEni(0, 2),
            { ...mkEni(1, 2), cidrs: mkEni(1, 2).cidrs.map((c) => ({ ...c, assigned: 0.5 })) },
          ]),
      ],
      // A CIDR that is not an object is a typed error too, not a TypeError.
      [
        'stats.enis[0].cidrs[1]',
        () => {
          const eni = stats([mkEni(0, 2)]).enis[0] as PoolEni;
          return decide({
            stats: { enis: [{ ...eni, cidrs: [eni.cidrs[0] as PoolCidr, null as unknown as PoolCidr] }] },
            targets: DEFAULT_TARGETS,
            limits: M5_LARGE,
            timing: { now: NOW },
          });
        },
      ],
    ];
    for (const [field, fn] of bad) {
      let caught: unknown;
      try {
        fn();
      } catch (e) {
        caught = e;
      }
      expect(isWarmPoolError(caught), field).toBe(true);
      expect((caught as WarmPoolError).field).toBe(field);
    }
  });
});

describe('prefix delegation with fallback /32s (subnet without a free /28)', () => {
  const PDW = { prefixDelegation: true, warmPrefixTarget: 1, warmEniTarget: 0 };
  /** ENI n holding a prefix (or none) and `ips` /32s, the first `used` of them assigned. */
  function mixed(n: number, prefix: { assigned: number } | undefined, ips: number, used = 0): ModelEni {
    const e = mkEni(n, ips, { assigned: used });
    if (prefix !== undefined)
      e.cidrs.push({
        cidr: `10.${n}.9.0/28`,
        isPrefix: true,
        size: 16,
        assigned: prefix.assigned,
        cooldown: 0,
      });
    return e;
  }

  it('counts /32s as addresses: 16 fallback /32s free satisfy WARM_PREFIX_TARGET 1', () => {
    expect(brief(run([mixed(0, undefined, 8), mixed(1, undefined, 8)], PDW))).toBe('none:within-targets');
    const f = poolFigures({
      stats: stats([mixed(0, undefined, 8)]),
      targets: { ...DEFAULT_TARGETS, ...PDW },
      limits: M5_LARGE,
      timing: { now: NOW },
    });
    expect(f).toMatchObject({ total: 8, available: 8, totalPrefixes: 0, freePrefixes: 0 });
  });

  it('still grows in prefixes when short (the pool loop falls back if EC2 has no /28)', () => {
    expect(brief(run([mixed(0, undefined, 4)], PDW))).toBe(
      'assign 1 prefix to eni-0 (below-warm-prefix-target)',
    );
  });

  it('releases empty fallback /32s first once a prefix covers the target', () => {
    expect(brief(run([mixed(0, { assigned: 0 }, 2, 1)], PDW))).toBe(
      'release 10.0.0.11/32 (above-warm-prefix-target)',
    );
  });

  it('keeps fallback /32s the pool still needs, or while no prefix can be had, and waits 30 s between shrinks', () => {
    expect(brief(run([mixed(0, undefined, 9, 1), mixed(1, undefined, 9)], PDW))).toBe('none:within-targets');
    expect(
      brief(
        run([mixed(0, { assigned: 16 }, 9, 1), mixed(1, undefined, 9)], PDW, { limits: { maxPods: 200 } }),
      ),
    ).toBe('release 10.1.0.18/32 (above-warm-prefix-target)');
    expect(brief(run([mixed(0, undefined, 9), mixed(1, undefined, 7)], PDW))).toBe('none:within-targets');
    expect(brief(run([mixed(0, { assigned: 0 }, 2, 1)], PDW, { timing: { lastShrinkAt: NOW - 1000 } }))).toBe(
      'none:within-targets',
    );
  });
});
