import type { PoolDecision, PoolEni, PoolStats } from '@vpc-cni-kit/warm-pool';

/** A tiny mutable node model for tests: ENIs with CIDRs and assigned counts. */
export interface ModelCidr {
  cidr: string;
  isPrefix: boolean;
  size: number;
  assigned: number;
  cooldown: number;
}
export interface ModelEni {
  id: string;
  deviceNumber: number;
  isPrimary: boolean;
  isTrunk: boolean;
  isEfa: boolean;
  excluded: boolean;
  createdAt: number;
  cidrs: ModelCidr[];
}

let counter = 0;

export function cidrOf(eni: number, k: number, isPrefix: boolean): string {
  return isPrefix ? `10.${eni}.${k}.0/28` : `10.${eni}.0.${k + 10}/32`;
}

/** An ENI with `n` CIDRs, the first `assigned` addresses used (packed). */
export function mkEni(
  device: number,
  n: number,
  opts: {
    pd?: boolean;
    assigned?: number;
    createdAt?: number;
    flags?: Partial<ModelEni>;
    cooldown?: number;
  } = {},
): ModelEni {
  const pd = opts.pd ?? false;
  let left = opts.assigned ?? 0;
  let cool = opts.cooldown ?? 0;
  const cidrs: ModelCidr[] = [];
  for (let k = 0; k < n; k++) {
    const size = pd ? 16 : 1;
    const a = Math.min(left, size);
    left -= a;
    const c = Math.min(cool, size - a);
    cool -= c;
    cidrs.push({ cidr: cidrOf(device, k, pd), isPrefix: pd, size, assigned: a, cooldown: c });
  }
  return {
    id: `eni-${device}`,
    deviceNumber: device,
    isPrimary: device === 0,
    isTrunk: false,
    isEfa: false,
    excluded: false,
    createdAt: opts.createdAt ?? 0,
    cidrs,
    ...opts.flags,
  };
}

export function stats(enis: ModelEni[]): PoolStats {
  return {
    enis: enis.map(
      (e): PoolEni => ({
        ...e,
        assignedIPs: e.cidrs.reduce((s, c) => s + c.assigned, 0),
        cooldownIPs: e.cidrs.reduce((s, c) => s + c.cooldown, 0),
        cidrs: e.cidrs.map((c) => ({ ...c })),
      }),
    ),
  };
}

/**
 * Applies a decision to the model. Throws if it would release an assigned address, or exceed the ENI or
 * per-ENI slot limits.
 */
export function apply(
  enis: ModelEni[],
  d: PoolDecision,
  now: number,
  limits: { maxEni: number; slots: number },
): void {
  switch (d.kind) {
    case 'none':
      return;
    case 'assign': {
      const e = enis.find((x) => x.id === d.eniId)!;
      if (e.cidrs.length + d.count > limits.slots) throw new Error(`slot limit exceeded on ${e.id}`);
      for (let i = 0; i < d.count; i++) {
        counter += 1;
        const pd = d.unit === 'prefix';
        e.cidrs.push({
          cidr: `172.${e.deviceNumber}.${counter % 250}.${pd ? 0 : counter % 250}/${pd ? 28 : 32}x${counter}`,
          isPrefix: pd,
          size: pd ? 16 : 1,
          assigned: 0,
          cooldown: 0,
        });
      }
      return;
    }
    case 'create-eni': {
      if (enis.length + 1 > limits.maxEni) throw new Error('ENI limit exceeded');
      if (d.count > limits.slots) throw new Error('slot limit exceeded on a new ENI');
      const device = Math.max(...enis.map((e) => e.deviceNumber), -1) + 1;
      const e = mkEni(device, 0, { createdAt: now });
      enis.push(e);
      apply(
        enis,
        { kind: 'assign', eniId: e.id, unit: d.unit, count: d.count, reason: d.reason },
        now,
        limits,
      );
      return;
    }
    case 'release': {
      for (const r of d.cidrs) {
        const e = enis.find((x) => x.id === r.eniId)!;
        const i = e.cidrs.findIndex((c) => c.cidr === r.cidr);
        if (i < 0) throw new Error(`release of unknown ${r.cidr}`);
        if (e.cidrs[i]!.assigned > 0) throw new Error(`released an assigned address in ${r.cidr}`);
        e.cidrs.splice(i, 1);
      }
      return;
    }
    case 'free-eni': {
      const i = enis.findIndex((x) => x.id === d.eniId);
      const e = enis[i]!;
      if (e.cidrs.some((c) => c.assigned > 0)) throw new Error(`freed ENI ${e.id} with assigned addresses`);
      if (e.isPrimary) throw new Error('freed the primary ENI');
      enis.splice(i, 1);
      return;
    }
  }
}
