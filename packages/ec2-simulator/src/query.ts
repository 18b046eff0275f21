import { Ec2SimError } from './errors.js';

/** A filter as EC2 receives it: `Filter.N.Name` and `Filter.N.Value.M`. */
export interface Filter {
  /** Filter name, e.g. `tag:Name` or `vpc-id`. */
  readonly name: string;
  /** Accepted values (any of them matches). */
  readonly values: readonly string[];
}

const MAX_INT = 2 ** 31 - 1;

/**
 * The parameters of one EC2 Query API request, read with validation. Every read marks the key as used;
 * {@link QueryParams.finish} rejects any key no action read (`UnknownParameter`), as EC2 does.
 */
export class QueryParams {
  readonly #values: Map<string, string>;
  readonly #used = new Set<string>();

  /** @param values - decoded form fields */
  constructor(values: Map<string, string>) {
    this.#values = values;
  }

  /** Parses an `application/x-www-form-urlencoded` body; a repeated key is `InvalidParameter`. */
  static parse(body: string): QueryParams {
    const values = new Map<string, string>();
    for (const [k, v] of new URLSearchParams(body)) {
      if (values.has(k)) throw new Ec2SimError('InvalidParameter', `The parameter ${k} is repeated.`);
      values.set(k, v);
    }
    return new QueryParams(values);
  }

  /** True when `name` was sent. */
  has(name: string): boolean {
    return this.#values.has(name);
  }

  /** An optional string parameter. */
  string(name: string): string | undefined {
    const v = this.#values.get(name);
    if (v !== undefined) this.#used.add(name);
    return v;
  }

  /** A required string parameter (`MissingParameter` when absent or empty). */
  required(name: string): string {
    const v = this.string(name);
    if (v === undefined || v === '') {
      throw new Ec2SimError('MissingParameter', `The request must contain the parameter ${name}`);
    }
    return v;
  }

  /** An optional integer within [min, max] (`InvalidParameterValue` otherwise). */
  int(name: string, min = 0, max = MAX_INT): number | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!/^-?\d{1,10}$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new Ec2SimError('InvalidParameterValue', `Value (${v}) for parameter ${name} is invalid.`);
    }
    return Number(v);
  }

  /** An optional boolean (`true`/`false`). */
  bool(name: string): boolean | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (v !== 'true' && v !== 'false') {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Value (${v}) for parameter ${name} is invalid. Expected a boolean.`,
      );
    }
    return v === 'true';
  }

  /** A one-of-enum parameter. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) {
      throw new Ec2SimError(
        'InvalidParameterValue',
        `Value (${v}) for parameter ${name} is invalid. Allowed: ${allowed.join(', ')}.`,
      );
    }
    return v as T;
  }

  /** Indices N present under `prefix.N` or `prefix.N.…`, sorted and checked to start at 1 without gaps. */
  indices(prefix: string): number[] {
    const seen = new Set<number>();
    const lead = `${prefix}.`;
    for (const k of this.#values.keys()) {
      if (!k.startsWith(lead)) continue;
      const rest = k.slice(lead.length);
      const dot = rest.indexOf('.');
      const idx = dot < 0 ? rest : rest.slice(0, dot);
      if (!/^[1-9]\d{0,4}$/.test(idx)) {
        throw new Ec2SimError('InvalidParameter', `The parameter ${k} is not a valid list member.`);
      }
      seen.add(Number(idx));
    }
    return [...seen].sort((a, b) => a - b);
  }

  /** A flattened list of strings: `prefix.1`, `prefix.2`, …; empty values are rejected. */
  list(prefix: string): string[] {
    return this.indices(prefix).map((i) => this.required(`${prefix}.${i}`));
  }

  /** A flattened list of structures: calls `read(p)` with `p = "prefix.N."` for each N. */
  structs<T>(prefix: string, read: (p: string) => T): T[] {
    return this.indices(prefix).map((i) => read(`${prefix}.${i}.`));
  }

  /** `Filter.N.Name` / `Filter.N.Value.M`. */
  filters(): Filter[] {
    return this.structs('Filter', (p) => ({
      name: this.required(`${p}Name`),
      values: this.list(`${p}Value`),
    }));
  }

  /** Rejects any parameter no reader consumed. */
  finish(): void {
    for (const k of this.#values.keys()) {
      if (!this.#used.has(k))
        throw new Ec2SimError('UnknownParameter', `The parameter ${k} is not recognized`);
    }
  }
}
