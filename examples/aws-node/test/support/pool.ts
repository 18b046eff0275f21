/** The pool loop as tests build it. */
import type { Datastore } from '@vpc-cni-kit/datastore';
import type { EniManager } from '@vpc-cni-kit/eni-manager';
import { silentLogger } from '../../src/daemon/logger.js';
import { PoolLoop } from '../../src/daemon/pool-loop.js';

/**
 * A pool loop keeping `warmIpTarget` addresses warm on one ENI (8 pod addresses unless `more.limits` says
 * otherwise), with no host side.
 */
export function testPool(
  datastore: Datastore,
  eni: EniManager,
  warmIpTarget: number,
  more: Partial<ConstructorParameters<typeof PoolLoop>[0]> = {},
): PoolLoop {
  return new PoolLoop({
    datastore,
    eni,
    targets: {
      warmEniTarget: 0,
      warmIpTarget,
      minimumIpTarget: 0,
      warmPrefixTarget: 0,
      prefixDelegation: false,
    },
    limits: { maxEnis: 1, ipv4PerEni: 9, maxPods: 8 },
    now: () => Date.now(),
    log: silentLogger,
    observer: { decision: () => {}, actionFailed: () => {} },
    setupEni: async () => {},
    teardownEni: async () => {},
    routeTableId: (n) => (n === 0 ? 254 : n + 1),
    ...more,
  });
}
