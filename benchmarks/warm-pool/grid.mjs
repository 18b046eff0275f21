// The grid of static settings the adaptive policy is judged against, and Pareto maths.
import { DEFAULT_TARGETS } from '@vpc-cni-kit/warm-pool';

const T = DEFAULT_TARGETS;

/**
 * Static settings over the four variables. Combinations that behave identically are listed once: with an IP
 * target set, WARM_ENI_TARGET and WARM_PREFIX_TARGET are ignored; WARM_PREFIX_TARGET only applies with
 * prefix delegation; PD with every target 0 is refused by the reference at start-up.
 */
export function staticGrid() {
  const out = [];
  for (const eni of [0, 1, 2, 3])
    out.push({ name: `WARM_ENI_TARGET=${eni}`, targets: { ...T, warmEniTarget: eni } });
  for (const warm of [0, 1, 2, 3, 4, 6, 8, 12])
    for (const min of [0, 6, 12, 18, 24]) {
      if (warm === 0 && min === 0) continue;
      const name = [warm ? `WARM_IP_TARGET=${warm}` : '', min ? `MINIMUM_IP_TARGET=${min}` : '']
        .filter(Boolean)
        .join(' ');
      out.push({ name, targets: { ...T, warmIpTarget: warm, minimumIpTarget: min } });
    }
  for (const prefix of [1, 2])
    out.push({
      name: `PD WARM_PREFIX_TARGET=${prefix}`,
      targets: { ...T, prefixDelegation: true, warmPrefixTarget: prefix },
    });
  for (const [warm, min] of [
    [1, 0],
    [4, 0],
    [8, 16],
    [0, 16],
  ])
    out.push({
      name: `PD ${[warm ? `WARM_IP_TARGET=${warm}` : '', min ? `MINIMUM_IP_TARGET=${min}` : ''].filter(Boolean).join(' ')}`,
      targets: { ...T, prefixDelegation: true, warmIpTarget: warm, minimumIpTarget: min },
    });
  return out;
}

/** The grid's raw size: every combination of the values tried for each variable. */
export const RAW_GRID =
  'WARM_ENI_TARGET {0,1,2,3} × WARM_IP_TARGET {0,1,2,3,4,6,8,12} × MINIMUM_IP_TARGET {0,6,12,18,24} × WARM_PREFIX_TARGET {off, PD 1, PD 2} (+ PD with IP targets)';

/** True when `a` is at least as good as `b` on cold starts and idle address-hours, and better on one. */
export function dominates(a, b) {
  const eps = 1e-9;
  return (
    a.coldStarts <= b.coldStarts &&
    a.idleAddressHours <= b.idleAddressHours + eps &&
    (a.coldStarts < b.coldStarts || a.idleAddressHours < b.idleAddressHours - eps)
  );
}

/**
 * The same with a third dimension: pod-seconds waited for an address. `a` dominates `b` when it is no worse on
 * cold starts, waiting and idle address-hours, and better on one.
 */
export function dominatesWithWaits(a, b) {
  const eps = 1e-9;
  const noWorse =
    a.coldStarts <= b.coldStarts &&
    a.waitedPodS <= b.waitedPodS + eps &&
    a.idleAddressHours <= b.idleAddressHours + eps;
  return (
    noWorse &&
    (a.coldStarts < b.coldStarts ||
      a.waitedPodS < b.waitedPodS - eps ||
      a.idleAddressHours < b.idleAddressHours - eps)
  );
}

/** The non-dominated rows, by cold starts then idle. */
export function paretoFront(rows) {
  return rows
    .filter((r) => !rows.some((o) => o !== r && dominates(o.m, r.m)))
    .sort((a, b) => a.m.coldStarts - b.m.coldStarts || a.m.idleAddressHours - b.m.idleAddressHours);
}
