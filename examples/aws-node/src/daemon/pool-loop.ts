import type { Datastore } from '@vpc-cni-kit/datastore';
import type { EniManager, ImdsEni } from '@vpc-cni-kit/eni-manager';
import { isEniManagerError } from '@vpc-cni-kit/eni-manager';
import {
  type AdaptiveReason,
  type AdaptiveSettings,
  type AdaptiveState,
  type AdaptiveTargets,
  decide,
  decideAdaptive,
  INSUFFICIENT_ADDRESSES_BACKOFF_MS,
  initialAdaptiveState,
  type PoolDecision,
  type PoolLimits,
  type PoolTargets,
  type PoolTiming,
  PREFIX_SIZE,
} from '@vpc-cni-kit/warm-pool';
import type { BoundCounts } from './bound-pods.js';
import { EniConfigUnavailableError } from './custom-networking.js';
import type { BackendObserver, PoolCondition } from './ipam-backend.js';
import type { Logger } from './logger.js';

/** What the pool loop reports (metrics). */
export interface PoolObserver {
  decision(decision: PoolDecision): void;
  actionFailed(kind: PoolDecision['kind'], code: string, reason: string): void;
  /** A decision other than `none` is being carried out; {@link PoolObserver.actionEnded} follows. */
  actionStarted?(kind: PoolDecision['kind']): void;
  /** The decision carried out ended, done or failed. */
  actionEnded?(kind: PoolDecision['kind']): void;
  /** The adaptive policy's targets and why (only with `policy: 'adaptive'`). */
  adaptive?(targets: AdaptiveTargets, why: AdaptiveReason): void;
  /** Prefix delegation fell back to /32s (`true`: no free /28 in the subnet) or went back to prefixes. */
  prefixFallback?(active: boolean): void;
}

/**
 * Prefix delegation's fallback to /32 secondary addresses while the subnet has no free /28
 * (`InsufficientCidrBlocks`), for introspection.
 */
export interface PrefixFallbackState {
  /** Growth is in /32s now. */
  readonly active: boolean;
  /** When EC2 last refused a /28 (ms since epoch). */
  readonly since?: number;
  /** When the next growth tries a /28 again (ms since epoch). */
  readonly retryPrefixesAt?: number;
  /** Times the pool grew in /32s instead of prefixes. */
  readonly fallbackGrowths: number;
}

/** Which warm-pool policy the loop runs (`WARM_POOL_POLICY`). */
export type WarmPoolPolicy = 'static' | 'adaptive';

/** Everything the pool loop depends on. */
export interface PoolLoopDeps {
  datastore: Datastore;
  eni: EniManager;
  targets: PoolTargets;
  limits: PoolLimits;
  /** Wall-clock milliseconds (ENI ages and back-off windows are compared with it). */
  now: () => number;
  log: Logger;
  observer: PoolObserver;
  /** `static` (the reference's, default) or `adaptive` (`decideAdaptive` from @vpc-cni-kit/warm-pool). */
  policy?: WarmPoolPolicy;
  /** Bounds and tuning of the adaptive policy. */
  adaptiveSettings?: AdaptiveSettings;
  /** Host routing for a newly attached ENI (rules, table routes, MTU); must be idempotent. */
  setupEni: (eni: ImdsEni) => Promise<void>;
  /** Host routing teardown for an ENI being freed. */
  teardownEni: (eniId: string) => Promise<void>;
  /**
   * Custom networking: the subnet and groups for the next ENI (the node's ENIConfig, read now). Throws
   * {@link EniConfigUnavailableError} when it cannot be used; no ENI is created then.
   */
  eniTarget?: () => Promise<{ subnetId?: string; securityGroupIds?: readonly string[] }>;
  /** The route table for a device number and network card (the reference's formula). */
  routeTableId: (deviceNumber: number, networkCard: number) => number;
  /**
   * With prefix delegation, how long growth stays in /32s after EC2 refused a /28 (`InsufficientCidrBlocks`)
   * before it tries prefixes again. @defaultValue `120000` (the reference's subnet-full back-off)
   */
  prefixFallbackMs?: number;
  /**
   * Adaptive policy: pods bound to this node (from the pod watch) that have not asked for an address yet, now
   * (`observation.bound`), and how many of them a Job controls (`observation.boundJobPods`). Absent: 0.
   */
  bound?: () => BoundCounts;
  /**
   * How long a {@link PoolLoop.wake} waits, so that the wakes of a burst of pods leaving (or arriving to an
   * empty pool) share one pass. @defaultValue `10`
   */
  wakeDelayMs?: number;
}

const SUBNET_FULL = new Set(['InsufficientFreeAddressesInSubnet', 'InsufficientCidrBlocks']);

/**
 * The reference's pool manager, one decision at a time: read the datastore's stats, ask the pure warm-pool
 * policy what to do, do it through EC2, record the result in the datastore. Never two ticks at once.
 */
export class PoolLoop {
  /** CIDRs released by this loop, `eniId cidr` → when (the reconciler must not re-add them from stale IMDS). */
  readonly recentlyReleased = new Map<string, number>();
  private lastShrinkAt: number | undefined;
  private lastInsufficientAt: number | undefined;
  private lastDecision: PoolDecision | undefined;
  /** When EC2 last refused a /28 while the pool was in prefixes, and how often growth came in /32s. */
  private prefixRefusedAt: number | undefined;
  private fallbackActive = false;
  private fallbackGrowths = 0;
  /** Why the last ENI could not be created under custom networking (cleared by the next success). */
  private eniConfigProblem: string | undefined;
  private running: Promise<PoolDecision> | undefined;
  /** The next pass, periodic or woken; `undefined` while a pass is due or running (or before start). */
  private timer: NodeJS.Timeout | undefined;
  /** The pending timer is a woken pass (later wakes join it). */
  private wakeScheduled = false;
  /** A wake arrived since the current pass began: it must be followed by another. */
  private wakeRequested = false;
  private inPass = false;
  private intervalMs = 5000;
  private stopped = false;
  // Adaptive policy: its state, and what the node saw since its last decision.
  private adaptiveState: AdaptiveState = initialAdaptiveState;
  private adaptiveLast:
    | { targets: AdaptiveTargets; why: AdaptiveReason; bound: number; boundJobPods: number }
    | undefined;
  private seen = { arrivals: 0, departures: 0, misses: 0, throttled: 0, leadTimesMs: [] as number[] };

  constructor(private readonly deps: PoolLoopDeps) {}

  /**
   * Wraps the backend's observer so the adaptive policy sees pod arrivals (successful ADDs), departures (DELs)
   * and ADDs that found the pool empty; every call is forwarded to `inner` unchanged.
   */
  observing(inner: BackendObserver): BackendObserver {
    return {
      // Branch-ENI pods take no pool address: the demand the adaptive policy sees leaves them out.
      addNetwork: (durationMs, outcome, branch) => {
        if (outcome === 'success' && !branch) this.seen.arrivals += 1;
        inner.addNetwork(durationMs, outcome, branch);
      },
      delNetwork: (reason, branch) => {
        if (!branch) this.seen.departures += 1;
        inner.delNetwork(reason, branch);
      },
      noAvailableAddress: () => {
        this.seen.misses += 1;
        inner.noAvailableAddress();
      },
      podEniError: (fn) => inner.podEniError?.(fn),
    };
  }

  /** Why the pool could not serve an address, as the backend explains it to the plugin. */
  condition(): PoolCondition {
    const now = this.deps.now();
    const reason = this.lastDecision?.kind === 'none' ? this.lastDecision.reason.code : undefined;
    return {
      subnetExhausted: this.lastInsufficientAt !== undefined && now - this.lastInsufficientAt < 120_000,
      eniLimitReached: reason === 'no-room',
      eniConfigProblem: this.eniConfigProblem,
    };
  }

  /** Prefix delegation's fallback to /32s, for introspection. */
  prefixFallback(): PrefixFallbackState {
    const at = this.prefixRefusedAt;
    return {
      active: this.fallbackActive,
      ...(at !== undefined ? { since: at, retryPrefixesAt: at + this.fallbackMs() } : {}),
      fallbackGrowths: this.fallbackGrowths,
    };
  }

  private fallbackMs(): number {
    return this.deps.prefixFallbackMs ?? INSUFFICIENT_ADDRESSES_BACKOFF_MS;
  }

  /** Growth skips prefixes: EC2 refused a /28 less than the fallback period ago. */
  private inFallback(): boolean {
    return this.fallbackActive && this.deps.now() - (this.prefixRefusedAt ?? 0) < this.fallbackMs();
  }

  private setFallback(active: boolean): void {
    if (active) this.prefixRefusedAt = this.deps.now();
    if (active === this.fallbackActive) return;
    this.fallbackActive = active;
    this.deps.log.info(active ? 'no free /28 in the subnet: growing in /32s' : 'growing in prefixes again', {
      ...(active ? { retryPrefixesInMs: this.fallbackMs() } : {}),
    });
    this.deps.observer.prefixFallback?.(active);
  }

  /**
   * Runs a prefix growth (`grow(undefined)`), or, while the fallback holds or when EC2 refuses the /28,
   * the same growth in /32s (`grow(n)`, at most `ipSlots` of them); a /28 granted ends the fallback.
   */
  private async growWithFallback<T>(
    prefixes: number,
    ipSlots: number,
    grow: (ipv4Count: number | undefined) => Promise<T>,
  ): Promise<T> {
    const ips = Math.min(prefixes * PREFIX_SIZE, ipSlots);
    if (!this.inFallback()) {
      try {
        const got = await grow(undefined);
        this.setFallback(false);
        return got;
      } catch (e) {
        if (!isEniManagerError(e, 'InsufficientCidrBlocks') || ips < 1) throw e;
        this.setFallback(true);
      }
    }
    const got = await grow(ips);
    this.fallbackGrowths += 1;
    return got;
  }

  /** IPv4 slots (secondary addresses and prefixes share them) still free on an ENI. */
  private freeSlots(eniId: string): number {
    const used = this.deps.datastore
      .stats()
      .enis.find((x) => x.id === eniId)
      ?.cidrs.filter((c) => c.family === 4).length;
    return Math.max(this.deps.limits.ipv4PerEni - 1 - (used ?? 0), 0);
  }

  /** The last decision taken, for introspection. */
  last(): PoolDecision | undefined {
    return this.lastDecision;
  }

  /**
   * The adaptive policy's last targets, reason, and the bound pods it saw with those of them a Job controls
   * (undefined before one, or static).
   */
  lastAdaptive():
    | { targets: AdaptiveTargets; why: AdaptiveReason; bound: number; boundJobPods: number }
    | undefined {
    return this.adaptiveLast;
  }

  /** Runs one decision now (waits for one already running). */
  tick(): Promise<PoolDecision> {
    this.running ??= this.exclusive(() => this.runOnce()).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private queue: Promise<unknown> = Promise.resolve();

  /** Runs `fn` when no pool action or other exclusive work is in flight (both change the datastore). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Ticks every `intervalMs` (the reference: about every 5 s) until {@link stop}. */
  start(intervalMs: number): void {
    this.intervalMs = intervalMs;
    this.schedule(0, false);
  }

  /**
   * Runs the next pass after `delayMs`, and then only once the I/O callbacks already due have run (a pass
   * is never urgent to the millisecond; an AddNetwork whose checkpoint just became durable is).
   */
  private schedule(delayMs: number, woken: boolean): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wakeScheduled = woken;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeScheduled = false;
      setImmediate(() => void this.pass());
    }, delayMs);
  }

  /** Ticks until a decision is `none` (at most 10), then schedules the next pass. */
  private async pass(): Promise<void> {
    if (this.stopped || this.inPass) return;
    this.inPass = true;
    // This pass reads the datastore after every wake so far: they are served by it.
    this.wakeRequested = false;
    try {
      // Keep acting while there is something to do, so a burst of pods is served quickly.
      for (let i = 0; i < 10 && !this.stopped; i++) {
        const d = await this.tick();
        if (d.kind === 'none') break;
      }
    } catch (e) {
      this.deps.log.error('pool loop tick failed', { error: String(e) });
    } finally {
      this.inPass = false;
    }
    if (this.stopped) return;
    if (this.wakeRequested) this.schedule(this.deps.wakeDelayMs ?? 10, true);
    else this.schedule(this.intervalMs, false);
  }

  /**
   * Asks for a pass soon (the pool just ran dry or a pod left): after `wakeDelayMs`, sharing it with any
   * other wake until then; a wake during a pass gets one more pass after it.
   */
  wake(): void {
    if (this.stopped) return;
    this.wakeRequested = true;
    // Not started, a pass due or running (it or the pass after it serves this wake), or a woken pass pending.
    if (this.timer === undefined || this.wakeScheduled) return;
    this.schedule(this.deps.wakeDelayMs ?? 10, true);
  }

  /** Stops ticking and waits for the tick in flight (no new EC2 mutations after this). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  private async runOnce(): Promise<PoolDecision> {
    const { log } = this.deps;
    const now = this.deps.now();
    const timing: PoolTiming = {
      now,
      ...(this.lastShrinkAt !== undefined ? { lastShrinkAt: this.lastShrinkAt } : {}),
      ...(this.lastInsufficientAt !== undefined
        ? { lastInsufficientAddressesAt: this.lastInsufficientAt }
        : {}),
    };
    const decision = this.decideNow(timing);
    this.lastDecision = decision;
    this.deps.observer.decision(decision);
    if (decision.kind !== 'none')
      log.info('pool decision', { decision: decision.kind, reason: decision.reason.message });
    for (const [k, at] of this.recentlyReleased) if (now - at > 120_000) this.recentlyReleased.delete(k);
    const grows = decision.kind === 'assign' || decision.kind === 'create-eni';
    const acting = decision.kind !== 'none';
    if (acting) this.deps.observer.actionStarted?.(decision.kind);
    try {
      await this.act(decision);
      if (grows) this.seen.leadTimesMs.push(this.deps.now() - now);
    } catch (e) {
      const code = isEniManagerError(e)
        ? e.code
        : e instanceof EniConfigUnavailableError
          ? e.code
          : 'Internal';
      if (e instanceof EniConfigUnavailableError) this.eniConfigProblem = e.message;
      // A failed grow still measured how slow EC2 is; a throttled one says the account's budget is spent.
      if (grows) this.seen.leadTimesMs.push(this.deps.now() - now);
      if (code === 'RequestLimitExceeded') this.seen.throttled += 1;
      if (SUBNET_FULL.has(code)) this.lastInsufficientAt = this.deps.now();
      const error = e instanceof Error ? e.message : String(e);
      this.deps.observer.actionFailed(decision.kind, code, error);
      log.warn('pool action failed', { decision: decision.kind, code, error });
    } finally {
      if (acting) this.deps.observer.actionEnded?.(decision.kind);
    }
    return decision;
  }

  /** One decision from the configured policy. */
  private decideNow(timing: PoolTiming): PoolDecision {
    const { datastore, targets, limits } = this.deps;
    if (this.deps.policy !== 'adaptive') return decide({ stats: datastore.stats(), targets, limits, timing });
    const { arrivals, departures, misses, throttled, leadTimesMs } = this.seen;
    this.seen = { arrivals: 0, departures: 0, misses: 0, throttled: 0, leadTimesMs: [] };
    const { pods: bound, jobPods: boundJobPods } = this.deps.bound?.() ?? { pods: 0, jobPods: 0 };
    const r = decideAdaptive({
      stats: datastore.stats(),
      targets,
      limits,
      timing,
      observation: {
        arrivals,
        departures,
        waiting: misses,
        bound,
        ...(boundJobPods > 0 ? { boundJobPods } : {}),
        throttled,
        leadTimesMs,
      },
      state: this.adaptiveState,
      ...(this.deps.adaptiveSettings ? { settings: this.deps.adaptiveSettings } : {}),
    });
    this.adaptiveState = r.state;
    this.adaptiveLast = { targets: r.targets, why: r.why, bound, boundJobPods };
    this.deps.observer.adaptive?.(r.targets, r.why);
    return r.decision;
  }

  private async act(d: PoolDecision): Promise<void> {
    const { datastore, eni } = this.deps;
    switch (d.kind) {
      case 'none':
        return;
      case 'assign': {
        const assign = async (ipv4Count: number | undefined) => {
          try {
            return await eni.assignIpv4(
              d.eniId,
              ipv4Count !== undefined ? { ipv4Count } : { prefixCount: d.count },
            );
          } catch (e) {
            // The reply may be lost while EC2 assigned: adopt what the ENI holds now, so EC2 never has more
            // addresses than the datastore knows (they would fill the ENI up to PrivateIpAddressLimitExceeded).
            await this.adoptFromEc2(d.eniId);
            throw e;
          }
        };
        const got =
          d.unit === 'prefix'
            ? await this.growWithFallback(d.count, this.freeSlots(d.eniId), assign)
            : await assign(d.count);
        const known = this.knownCidrs(d.eniId);
        for (const ip of got.ipv4Addresses)
          if (!known.has(`${ip}/32`)) datastore.addCidr(d.eniId, `${ip}/32`);
        for (const p of got.ipv4Prefixes) if (!known.has(p)) datastore.addCidr(d.eniId, p);
        return;
      }
      case 'create-eni': {
        const target = (await this.deps.eniTarget?.()) ?? {};
        this.eniConfigProblem = undefined;
        const allocate = (ipv4Count: number | undefined) =>
          eni.allocateEni({
            ...(ipv4Count !== undefined ? { ipv4Count } : { prefixCount: d.count }),
            ...target,
          });
        const created =
          d.unit === 'prefix'
            ? await this.growWithFallback(d.count, Math.max(this.deps.limits.ipv4PerEni - 1, 0), allocate)
            : await allocate(d.count);
        await this.adoptEni(created.imds);
        return;
      }
      case 'release': {
        for (const { eniId, cidr } of d.cidrs) {
          // Out of the datastore first, so no pod takes it while EC2 releases it.
          datastore.removeCidr(eniId, cidr);
          this.recentlyReleased.set(`${eniId} ${cidr}`, this.deps.now());
          const isPrefix = !cidr.endsWith('/32');
          try {
            await eni.unassignIpv4(
              eniId,
              isPrefix ? { ipv4Prefixes: [cidr] } : { ipv4Addresses: [cidr.slice(0, -3)] },
            );
          } catch (e) {
            // Failed, or its reply lost: whatever EC2 still assigns goes back into the datastore.
            this.recentlyReleased.delete(`${eniId} ${cidr}`);
            await this.adoptFromEc2(eniId);
            throw e;
          }
        }
        this.lastShrinkAt = this.deps.now();
        return;
      }
      case 'free-eni': {
        datastore.removeEni(d.eniId);
        await this.deps.teardownEni(d.eniId);
        await eni.freeEni(d.eniId);
        this.lastShrinkAt = this.deps.now();
        return;
      }
    }
  }

  private knownCidrs(eniId: string): Set<string> {
    return new Set(
      this.deps.datastore
        .stats()
        .enis.find((x) => x.id === eniId)
        ?.cidrs.map((c) => c.cidr) ?? [],
    );
  }

  /**
   * Re-reads one ENI from EC2 after a mutating call failed (it may have been carried out, its reply lost) and
   * records the addresses and prefixes EC2 assigns to it that the datastore lacks, except ones this loop is
   * releasing. Adds only: an address the datastore has and EC2 does not is the reconcile's to settle. A
   * failed re-read is logged; the reconcile catches up.
   */
  private async adoptFromEc2(eniId: string): Promise<void> {
    const { datastore, log } = this.deps;
    let seen: Awaited<ReturnType<EniManager['describeEnis']>>;
    try {
      seen = await this.deps.eni.describeEnis([eniId]);
    } catch (e) {
      log.warn('cannot re-read the ENI after a failed EC2 call', { eni: eniId, error: String(e) });
      return;
    }
    const ec2 = seen.find((x) => x.eniId === eniId);
    if (ec2 === undefined || !datastore.eniIds().includes(eniId)) return;
    const known = this.knownCidrs(eniId);
    const adopted: string[] = [];
    for (const cidr of [...ec2.secondaryIpv4.map((ip) => `${ip}/32`), ...ec2.ipv4Prefixes]) {
      if (known.has(cidr) || this.recentlyReleased.has(`${eniId} ${cidr}`)) continue;
      datastore.addCidr(eniId, cidr);
      adopted.push(cidr);
    }
    if (adopted.length > 0)
      log.info('adopted what EC2 holds after a failed call', { eni: eniId, cidrs: adopted });
  }

  /** Sets up and records an attached ENI and its addresses (new ones and, at start, existing ones). */
  async adoptEni(e: ImdsEni, options: { isPrimary?: boolean; createdAt?: number } = {}): Promise<void> {
    const { datastore } = this.deps;
    const isPrimary = options.isPrimary ?? (e.deviceNumber === 0 && e.networkCard === 0);
    if (!isPrimary) await this.deps.setupEni(e);
    if (!datastore.eniIds().includes(e.eniId)) {
      datastore.addEni({
        id: e.eniId,
        deviceNumber: e.deviceNumber,
        networkCard: e.networkCard,
        routeTableId: this.deps.routeTableId(e.deviceNumber, e.networkCard),
        subnetId: e.subnetId,
        isPrimary,
        ...(options.createdAt !== undefined ? { createdAt: options.createdAt } : {}),
      });
    }
    const known = new Set(
      datastore
        .stats()
        .enis.find((x) => x.id === e.eniId)
        ?.cidrs.map((c) => c.cidr) ?? [],
    );
    // Custom networking: the primary ENI carries no pods, so its addresses never enter the pool.
    if (isPrimary && this.deps.limits.customNetworking === true) return;
    for (const ip of e.ipv4Addresses.slice(1))
      if (!known.has(`${ip}/32`)) datastore.addCidr(e.eniId, `${ip}/32`);
    for (const p of e.ipv4Prefixes) if (!known.has(p)) datastore.addCidr(e.eniId, p);
  }
}
