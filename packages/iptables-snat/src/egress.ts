/**
 * Per-pod egress SNAT, as the reference's `egress-cni` installs it: one chain per pod in the `nat` table of
 * iptables (IPv4 egress of IPv6 pods) or ip6tables (IPv6 egress of IPv4 pods), named and commented the way
 * the upstream CNI plugins name theirs, holding a multicast ACCEPT and a SNAT to the node's address, and one
 * `POSTROUTING -s <pod egress address> -j <chain>` jump.
 */
import { createHash } from 'node:crypto';
import { familyBits, formatIp, parseIp } from '@vpc-cni-kit/ip-address';
import { detectBackend, interpretIptablesVersion } from './detect.js';
import { invalidOption, SnatError } from './errors.js';
import type { RandomizeSnat } from './options.js';
import { parseIptablesSave, type SavedTable } from './parse.js';
import type { SnatTools } from './reconcile.js';
import { joinRuleTokens, splitRuleTokens } from './rule-text.js';
import type { CommandResult } from './runner.js';

/** Which netfilter family the chain lives in: 4 = iptables, 6 = ip6tables. */
export type EgressFamily = 4 | 6;

/** The upstream plugins' chain names are exactly this long (`CNI-` + prefix + a SHA-512 hex digest, cut). */
const CHAIN_LENGTH = 28;

/** Multicast is accepted before the SNAT (the reference's "just because we can"). */
const MULTICAST: Readonly<Record<EgressFamily, string>> = { 4: '224.0.0.0/4', 6: 'ff00::/8' };

/**
 * The chain of one pod: `CNI-E4-…` (IPv4 egress) or `CNI-E6-…` (IPv6 egress) followed by the SHA-512 of
 * network name and container id, 28 characters in all — the upstream `MustFormatChainNameWithPrefix(name,
 * id, "E4-"|"E6-")` the reference calls.
 */
export function egressChainName(network: string, containerId: string, family: EgressFamily): string {
  const prefix = `CNI-E${family}-`;
  const digest = createHash('sha512')
    .update(network + containerId)
    .digest('hex');
  return `${prefix}${digest}`.slice(0, CHAIN_LENGTH);
}

/** The rule comment of one pod: `name: "<network>" id: "<containerId>"` (upstream `FormatComment`, Go `%q`). */
export function egressComment(network: string, containerId: string): string {
  return `name: ${JSON.stringify(network)} id: ${JSON.stringify(containerId)}`;
}

/** What {@link planEgressSnat} needs. */
export interface EgressSnatOptions {
  /** The CNI network name (the conflist's `name`, `aws-cni`; the plugin's own for the reference). */
  readonly network: string;
  /** `CNI_CONTAINERID`. */
  readonly containerId: string;
  /** The pod's egress address (`v4if0`'s 169.254.172.x or `v6if0`'s ULA): the source the jump matches. */
  readonly podIp: string;
  /** The node's address the traffic leaves with (`nodeIP` of the conflist). Same family as `podIp`. */
  readonly nodeIp: string;
  /** `randomizeSNAT`. @defaultValue `'prng'` */
  readonly randomizeSnat?: RandomizeSnat | undefined;
  /** Whether the iptables in use supports `--random-fully` (see `detectBackend`). @defaultValue `true` */
  readonly randomFullySupported?: boolean | undefined;
}

/** One pod's egress chain and jump, as `iptables-save` prints them. */
export interface EgressSnatPlan {
  /** 4 (iptables) or 6 (ip6tables), from the addresses. */
  readonly family: EgressFamily;
  /** The chain in the `nat` table. */
  readonly chain: string;
  /** The chain's rules (text after `-A <chain> `), in order. */
  readonly rules: readonly string[];
  /** The `POSTROUTING` rule jumping to the chain (text after `-A POSTROUTING `). */
  readonly jump: string;
}

function address(value: unknown, subject: string): { text: string; family: EgressFamily } {
  const ip = typeof value === 'string' ? parseIp(value) : undefined;
  if (ip === undefined) throw invalidOption(subject, `not an IP address: ${JSON.stringify(value)}`);
  return { text: formatIp(ip), family: ip.family };
}

/**
 * Plans one pod's egress SNAT (pure). Randomisation as the reference's: `none` → neither flag; `hashrandom`,
 * or `prng` on an iptables without it → `--random`; else `--random-fully`. Throws `INVALID_OPTION` for
 * addresses that do not parse or differ in family, an empty network or container id, or an unknown mode.
 */
export function planEgressSnat(options: EgressSnatOptions): EgressSnatPlan {
  const pod = address(options.podIp, 'podIp');
  const node = address(options.nodeIp, 'nodeIp');
  if (pod.family !== node.family)
    throw invalidOption('nodeIp', `IPv${node.family} for an IPv${pod.family} pod address`);
  for (const key of ['network', 'containerId'] as const) {
    if (typeof options[key] !== 'string' || options[key] === '')
      throw invalidOption(key, 'must be a non-empty string');
  }
  const mode = options.randomizeSnat ?? 'prng';
  if (mode !== 'prng' && mode !== 'hashrandom' && mode !== 'none')
    throw invalidOption('randomizeSnat', `must be prng, hashrandom or none: ${JSON.stringify(mode)}`);
  const random =
    mode === 'none'
      ? []
      : mode === 'hashrandom' || options.randomFullySupported === false
        ? ['--random']
        : ['--random-fully'];
  const family = pod.family;
  const chain = egressChainName(options.network, options.containerId, family);
  const comment = ['-m', 'comment', '--comment', egressComment(options.network, options.containerId)];
  return {
    family,
    chain,
    // In the order iptables-save prints a rule's parts: matches, then the target and its options.
    rules: [
      joinRuleTokens(['-d', MULTICAST[family], ...comment, '-j', 'ACCEPT']),
      joinRuleTokens([...comment, '-j', 'SNAT', '--to-source', node.text, ...random]),
    ],
    jump: joinRuleTokens(['-s', `${pod.text}/${familyBits(family)}`, ...comment, '-j', chain]),
  };
}

function jumpsTo(spec: string, chain: string): boolean {
  const tokens = splitRuleTokens(spec) ?? [];
  return tokens.some((t, i) => (t === '-j' || t === '-g') && tokens[i + 1] === chain);
}

/**
 * The `iptables-restore --noflush` input that makes `nat` hold exactly `plan` for this pod, or `undefined`
 * when it already does (pure). The chain is rewritten whole when its rules differ (declaring it flushes it);
 * `POSTROUTING` rules jumping to it other than the planned one are deleted. Nothing else is touched.
 */
export function diffEgressSnat(plan: EgressSnatPlan, nat: SavedTable | undefined): string | undefined {
  const exists = nat?.chains.some((c) => c.name === plan.chain) ?? false;
  const have = nat?.rules.filter((r) => r.chain === plan.chain).map((r) => r.spec) ?? [];
  const jumps = nat?.rules.filter((r) => r.chain === 'POSTROUTING' && jumpsTo(r.spec, plan.chain)) ?? [];
  const lines: string[] = [];
  const chainOk = exists && have.length === plan.rules.length && have.every((r, i) => r === plan.rules[i]);
  if (!chainOk) {
    lines.push(`:${plan.chain} - [0:0]`, ...plan.rules.map((r) => `-A ${plan.chain} ${r}`));
  }
  const keep = jumps.filter((r) => r.spec === plan.jump).slice(0, 1);
  for (const r of jumps) if (!keep.includes(r)) lines.push(`-D POSTROUTING ${r.spec}`);
  if (keep.length === 0) lines.push(`-A POSTROUTING ${plan.jump}`);
  return lines.length === 0 ? undefined : `*nat\n${lines.join('\n')}\nCOMMIT\n`;
}

/**
 * The `iptables-restore --noflush` input that removes a pod's chain and every `POSTROUTING` jump to it, or
 * `undefined` when neither is there (pure). Unlike the reference, which finds the jump through the pod's
 * address and so leaves the chain behind when the pod's namespace is already gone, this needs only the name.
 */
export function egressTeardownScript(chain: string, nat: SavedTable | undefined): string | undefined {
  const lines: string[] = [];
  for (const r of nat?.rules ?? []) {
    if (r.chain === 'POSTROUTING' && jumpsTo(r.spec, chain)) lines.push(`-D POSTROUTING ${r.spec}`);
  }
  if (nat?.chains.some((c) => c.name === chain)) lines.push(`:${chain} - [0:0]`, `-X ${chain}`);
  return lines.length === 0 ? undefined : `*nat\n${lines.join('\n')}\nCOMMIT\n`;
}

function failed(subject: string, result: CommandResult): SnatError {
  return new SnatError({ code: 'COMMAND_FAILED', subject, exitCode: result.exitCode, stderr: result.stderr });
}

/** `iptables-save`/`iptables-restore` or their ip6tables twins, unless `tools.commands` names others. */
function programs(tools: SnatTools, family: EgressFamily): { save: string; restore: string } {
  const p = family === 6 ? 'ip6tables' : 'iptables';
  return {
    save: tools.commands?.iptablesSave ?? `${p}-save`,
    restore: tools.commands?.iptablesRestore ?? `${p}-restore`,
  };
}

/** The `nat` table as {@link readEgressNat} read it. */
export interface EgressNatRead {
  /** Which tool read it: 4 = iptables-save, 6 = ip6tables-save. */
  readonly family: EgressFamily;
  /** The `nat` table, or `undefined` when the save printed none. */
  readonly nat: SavedTable | undefined;
  /** The tool's version from the save's `# Generated by … v1.8.9 …` header, when it printed one. */
  readonly header: string | undefined;
}

/**
 * Reads `nat` with one `iptables-save -t nat` (or ip6tables). {@link addEgressSnat} does this itself; a caller
 * that knows the family before it knows the pod's address can start the read early and hand it over.
 */
export function readEgressNat(tools: SnatTools, family: EgressFamily): Promise<EgressNatRead> {
  return readNat(tools, family);
}

async function readNat(tools: SnatTools, family: EgressFamily): Promise<EgressNatRead> {
  const { save } = programs(tools, family);
  const result = await tools.runner.run({ file: save, args: ['-t', 'nat'] });
  if (result.exitCode !== 0) throw failed(save, result);
  const header = /^# Generated by \S+ (v\d+\.\d+\.\d+)/m.exec(result.stdout)?.[1];
  return { family, nat: parseIptablesSave(result.stdout).find((t) => t.name === 'nat'), header };
}

async function restore(tools: SnatTools, family: EgressFamily, script: string): Promise<void> {
  const { restore: program } = programs(tools, family);
  const wait = tools.lockWaitSeconds ?? 5;
  const result = await tools.runner.run({
    file: program,
    args: ['-w', String(wait), '--noflush'],
    stdin: script,
  });
  if (result.exitCode !== 0) throw failed(program, result);
}

/** What {@link addEgressSnat} did. */
export interface EgressSnatApplied {
  /** The plan it installed. */
  readonly plan: EgressSnatPlan;
  /** Tool processes run: the read, and the apply when something differed. */
  readonly processes: number;
}

/**
 * Installs one pod's egress SNAT: reads `nat` (one `iptables-save -t nat`, or takes `read`, one the caller
 * started with {@link readEgressNat}), then applies what differs in one
 * atomic `iptables-restore --noflush` (none when the node already matches, as on a repeated ADD). When
 * `options.randomFullySupported` is not given, it is read from the version in the save's header (as the
 * reference asks iptables for its version), and from `iptables --version` only when there is no header.
 * Throws `INVALID_OPTION` (nothing run), `COMMAND_FAILED` or `PARSE_ERROR`; a failed apply changed nothing.
 */
export async function addEgressSnat(
  tools: SnatTools,
  options: EgressSnatOptions,
  read?: Promise<EgressNatRead>,
): Promise<EgressSnatApplied> {
  const family = planEgressSnat(options).family; // validates before anything runs
  const { nat, header } = await natRead(tools, family, read);
  let processes = 1;
  let randomFullySupported = options.randomFullySupported;
  if (randomFullySupported === undefined) {
    if (header !== undefined) randomFullySupported = interpretIptablesVersion(header).randomFullySupported;
    else {
      processes++;
      randomFullySupported = (await detectBackend(tools.runner, family === 6 ? 'ip6tables' : 'iptables'))
        .randomFullySupported;
    }
  }
  const plan = planEgressSnat({ ...options, randomFullySupported });
  const script = diffEgressSnat(plan, nat);
  if (script === undefined) return { plan, processes };
  await restore(tools, family, script);
  return { plan, processes: processes + 1 };
}

/**
 * Removes one pod's egress chain and its jumps (see {@link egressTeardownScript}). Idempotent: a second call
 * finds nothing and applies nothing. Returns the number of processes run.
 */
export async function deleteEgressSnat(
  tools: SnatTools,
  chain: string,
  family: EgressFamily,
): Promise<number> {
  const script = egressTeardownScript(chain, (await readNat(tools, family)).nat);
  if (script === undefined) return 1;
  await restore(tools, family, script);
  return 2;
}

/**
 * Whether `nat` holds exactly `plan` for this pod (for CHECK). Reads one `iptables-save -t nat`, or takes
 * `read`, one the caller started with {@link readEgressNat}, so that several plans (say, with and without
 * `--random-fully`) can be checked against one read. Throws `INVALID_OPTION` for a read of the other family.
 */
export async function egressSnatInPlace(
  tools: SnatTools,
  plan: EgressSnatPlan,
  read?: Promise<EgressNatRead>,
): Promise<boolean> {
  const { nat } = await natRead(tools, plan.family, read);
  return diffEgressSnat(plan, nat) === undefined;
}

/** `read` (one started earlier) or a new read of `family`'s nat table; `INVALID_OPTION` for the other family. */
async function natRead(
  tools: SnatTools,
  family: EgressFamily,
  read: Promise<EgressNatRead> | undefined,
): Promise<EgressNatRead> {
  const r = await (read ?? readNat(tools, family));
  if (r.family !== family) throw invalidOption('read', `an IPv${r.family} read for IPv${family} addresses`);
  return r;
}
