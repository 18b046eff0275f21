/**
 * The reference re-reads the VPC's IPv4 CIDR blocks from IMDS every 30 s and, when they changed, re-applies
 * the SNAT and connmark rules, so a block associated with the VPC while the node runs stops being SNATed
 * within one period. This is that loop: read, compare as sets, apply, remember only what was applied.
 */

/** What the loop needs. */
export interface VpcCidrRefreshDeps {
  /** The blocks the rules were built from at start. */
  readonly initial: readonly string[];
  /** Reads the blocks now (IMDS `vpc-ipv4-cidr-blocks` of the primary ENI). */
  readonly read: () => Promise<readonly string[]>;
  /** Re-applies the rules for `cidrs`; a rejection keeps the previous blocks in force and is retried next period. */
  readonly apply: (cidrs: readonly string[]) => Promise<void>;
  /** Period (the reference: 30 s). */
  readonly intervalMs: number;
  /** Logs a change or a failure. */
  readonly log: {
    info(msg: string, fields?: Record<string, unknown>): void;
    warn(msg: string, fields?: Record<string, unknown>): void;
  };
}

/** The running loop. */
export interface VpcCidrRefresh {
  /** The blocks the rules are built from now. */
  current(): readonly string[];
  /** Reads and, if they changed, applies once now; true when the rules were re-applied. */
  refreshNow(): Promise<boolean>;
  /** Stops the timer (a refresh under way finishes). */
  stop(): void;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c) => b.includes(c));
}

/** Starts the periodic refresh; the first read happens one period after the call. */
export function startVpcCidrRefresh(deps: VpcCidrRefreshDeps): VpcCidrRefresh {
  let current: readonly string[] = [...deps.initial];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<boolean> | undefined;

  const once = async (): Promise<boolean> => {
    const next = await deps.read();
    if (next.length === 0 || sameSet(next, current)) return false;
    await deps.apply(next);
    deps.log.info('VPC CIDR blocks changed; SNAT rules re-applied', { before: current, after: next });
    current = [...next];
    return true;
  };
  const refreshNow = (): Promise<boolean> => {
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };
  const tick = () => {
    refreshNow()
      .catch((e: unknown) =>
        deps.log.warn('VPC CIDR refresh failed; keeping the rules in force', { error: String(e) }),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, deps.intervalMs);
      });
  };
  timer = setTimeout(tick, deps.intervalMs);
  return {
    current: () => current,
    refreshNow,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
