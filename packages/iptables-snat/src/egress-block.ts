import { SnatError } from './errors.js';
import type { CommandRunner } from './runner.js';

/** The node-local ranges egress-cni gives pods for the other family (the reference's constants). */
export const EGRESS_RANGES = {
  /** IPv4 addresses of IPv6 pods' `v4if0` (IPv6 clusters). */
  4: '169.254.172.0/22',
  /** IPv6 ULAs of IPv4 pods' `v6if0` (IPv4 clusters with `ENABLE_V6_EGRESS`). */
  6: 'fd00::ac:00/118',
} as const;

/** The reference's rule that refuses new connections forwarded to an egress range, as `iptables -S` prints it. */
export interface EgressRangeBlock {
  /** `iptables` or `ip6tables`. */
  readonly command: 'iptables' | 'ip6tables';
  /** Always `filter`. */
  readonly table: 'filter';
  /** Always `FORWARD`. */
  readonly chain: 'FORWARD';
  /** The rule's tokens after the chain name. */
  readonly rule: readonly string[];
}

/**
 * The rule that keeps other hosts from reaching pods through their egress addresses: `-d <range> -m conntrack
 * --ctstate NEW -m comment --comment "Block Node Local Pod access via IPv4|IPv6" -j REJECT` in `filter FORWARD`
 * (the reference's `setupRuleToBlockNodeLocalAccess`). Pure.
 */
export function egressRangeBlock(family: 4 | 6): EgressRangeBlock {
  return {
    command: family === 4 ? 'iptables' : 'ip6tables',
    table: 'filter',
    chain: 'FORWARD',
    rule: [
      '-d',
      EGRESS_RANGES[family],
      '-m',
      'conntrack',
      '--ctstate',
      'NEW',
      '-m',
      'comment',
      '--comment',
      `Block Node Local Pod access via IPv${family}`,
      '-j',
      'REJECT',
    ],
  };
}

/**
 * Ensures {@link egressRangeBlock} is in place: checked with `-C`, inserted at position 1 of `FORWARD` when
 * missing (as the reference does); a second call changes nothing. Throws `COMMAND_FAILED` when the check fails
 * other than with "no such rule" (exit 1) or the insert fails.
 * Returns whether it inserted the rule.
 */
export async function ensureEgressRangeBlock(runner: CommandRunner, family: 4 | 6): Promise<boolean> {
  const b = egressRangeBlock(family);
  const base = ['-w', '-t', b.table];
  const present = await runner.run({ file: b.command, args: [...base, '-C', b.chain, ...b.rule] });
  if (present.exitCode === 0) return false;
  // 1 is "no such rule"; anything else (a bad parameter, the xtables lock) says nothing about whether the rule
  // is there, and inserting then could duplicate it.
  if (present.exitCode !== 1)
    throw new SnatError({
      code: 'COMMAND_FAILED',
      subject: b.command,
      exitCode: present.exitCode,
      stderr: present.stderr,
      detail: `cannot check for the FORWARD rule blocking ${EGRESS_RANGES[family]}`,
    });
  const added = await runner.run({ file: b.command, args: [...base, '-I', b.chain, '1', ...b.rule] });
  if (added.exitCode !== 0)
    throw new SnatError({
      code: 'COMMAND_FAILED',
      subject: b.command,
      exitCode: added.exitCode,
      stderr: added.stderr,
      detail: `cannot insert the FORWARD rule blocking ${EGRESS_RANGES[family]}`,
    });
  return true;
}
