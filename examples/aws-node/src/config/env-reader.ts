/**
 * Typed readers over an environment map that collect every problem (naming the variable) instead of
 * stopping at the first, so an operator sees all mistakes at once.
 */
import { cidrNetwork, formatCidr, parseCidr } from '@vpc-cni-kit/ip-address';

/** One invalid variable. */
export interface EnvProblem {
  variable: string;
  value: string;
  problem: string;
}

/** The daemon refused to start because of its environment. Its message is one line naming every problem. */
export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const;
  constructor(readonly problems: readonly EnvProblem[]) {
    super(
      `invalid configuration: ${problems.map((p) => `${p.variable}=${JSON.stringify(p.value)}: ${p.problem}`).join('; ')}`,
    );
    this.name = 'ConfigError';
  }
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Reads variables from `env`, recording problems. */
export class EnvReader {
  readonly problems: EnvProblem[] = [];
  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** The raw value, or undefined when unset or empty. */
  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  problem(variable: string, problem: string): void {
    this.problems.push({ variable, value: this.env[variable] ?? '', problem });
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  /** A boolean as Go's ParseBool reads it (1, t, true, TRUE, …). */
  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
    this.problem(name, 'must be a boolean (true/false/1/0)');
    return fallback;
  }

  /** An integer in [min, max]. */
  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!/^-?\d+$/.test(v)) {
      this.problem(name, 'must be an integer');
      return fallback;
    }
    const n = Number(v);
    if (n < min || n > max) {
      this.problem(name, `must be from ${min} to ${max}`);
      return fallback;
    }
    return n;
  }

  /** One of `choices` (case-sensitive, as the reference). */
  oneOf<T extends string>(name: string, fallback: T, choices: readonly T[]): T {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!(choices as readonly string[]).includes(v)) {
      this.problem(name, `must be one of ${choices.join(', ')}`);
      return fallback;
    }
    return v as T;
  }

  /** Comma-separated IPv4 CIDRs, trimmed and normalised to their network address. */
  ipv4Cidrs(name: string): string[] {
    const v = this.raw(name);
    if (v === undefined) return [];
    const out: string[] = [];
    for (const part of v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')) {
      const n = normaliseIpv4Cidr(part);
      if (n === undefined) this.problem(name, `${JSON.stringify(part)} is not an IPv4 CIDR`);
      else out.push(n);
    }
    return out;
  }

  /** A JSON object of string values. */
  stringMap(name: string): Record<string, string> {
    const v = this.raw(name);
    if (v === undefined) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      this.problem(name, 'must be a JSON object');
      return {};
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      this.problem(name, 'must be a JSON object');
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(parsed)) {
      if (typeof val !== 'string') this.problem(name, `value of ${JSON.stringify(k)} must be a string`);
      else out[k] = val;
    }
    return out;
  }
}

/** `a.b.c.d/n` → the network address form, or undefined (`@vpc-cni-kit/ip-address`'s strict parse). */
export function normaliseIpv4Cidr(s: string): string | undefined {
  const c = parseCidr(s);
  return c?.family === 4 ? formatCidr(cidrNetwork(c)) : undefined;
}
