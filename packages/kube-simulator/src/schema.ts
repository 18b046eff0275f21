import type { StatusCause } from './status.js';
import { invalidValue, requiredValue } from './validation.js';

/** The subset of a CRD's OpenAPI v3 (structural) schema the simulator enforces. */
export interface JsonSchema {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly nullable?: boolean;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly description?: string;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
}

/** What checking a value against a schema found. */
export interface SchemaResult {
  /** The value with unknown fields pruned and defaults applied. */
  readonly value: unknown;
  /** Validation failures. */
  readonly causes: StatusCause[];
  /** Paths of pruned unknown fields (`.spec.foo`). */
  readonly unknownFields: string[];
}

const TYPE_NAMES: Record<string, string> = {
  object: 'object',
  array: 'array',
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(expected: string, v: unknown): boolean {
  const actual = typeOf(v);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

function show(path: string): string {
  return path.startsWith('.') ? path.slice(1) : path;
}

function walk(
  s: JsonSchema,
  v: unknown,
  path: string,
  out: { causes: StatusCause[]; unknown: string[] },
): unknown {
  if (v === null) {
    if (s.nullable) return null;
    if (s.type === undefined) return null;
    out.causes.push(
      invalidValue(show(path), 'null', `${show(path)} in body must be of type ${s.type}: "null"`),
    );
    return v;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !Number.isInteger(v))
      out.causes.push(
        invalidValue(
          show(path),
          typeOf(v),
          `${show(path)} in body must be of type integer,string: "${typeOf(v)}"`,
        ),
      );
    return v;
  }
  if (s.type && !typeMatches(s.type, v)) {
    out.causes.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: "${typeOf(v)}": ${show(path)} in body must be of type ${TYPE_NAMES[s.type]}: "${typeOf(v)}"`,
      field: show(path),
    });
    return v;
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    out.causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      field: show(path),
    });
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum)
      out.causes.push(
        invalidValue(show(path), v, `${show(path)} in body should be greater than or equal to ${s.minimum}`),
      );
    if (s.maximum !== undefined && v > s.maximum)
      out.causes.push(
        invalidValue(show(path), v, `${show(path)} in body should be less than or equal to ${s.maximum}`),
      );
  }
  if (typeof v === 'string') {
    if (s.minLength !== undefined && v.length < s.minLength)
      out.causes.push(
        invalidValue(show(path), v, `${show(path)} in body should be at least ${s.minLength} chars long`),
      );
    if (s.maxLength !== undefined && v.length > s.maxLength)
      out.causes.push({
        reason: 'FieldValueTooLong',
        message: `Too long: may not be longer than ${s.maxLength}`,
        field: show(path),
      });
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v))
      out.causes.push(invalidValue(show(path), v, `${show(path)} in body should match '${s.pattern}'`));
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems)
      out.causes.push(
        invalidValue(show(path), v.length, `${show(path)} in body should have at least ${s.minItems} items`),
      );
    if (s.maxItems !== undefined && v.length > s.maxItems)
      out.causes.push({
        reason: 'FieldValueTooMany',
        message: `Too many: ${v.length}: must have at most ${s.maxItems} items`,
        field: show(path),
      });
    if (s.items) return v.map((item, i) => walk(s.items!, item, `${path}[${i}]`, out));
    return v;
  }
  if (typeof v === 'object') {
    const rec = v as Record<string, unknown>;
    const result: Record<string, unknown> = {};
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    for (const [k, child] of Object.entries(rec)) {
      const childSchema =
        s.properties?.[k] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (childSchema) result[k] = walk(childSchema, child, `${path}.${k}`, out);
      else if (preserve || s.additionalProperties === true || (s.type === undefined && !s.properties))
        result[k] = child;
      else out.unknown.push(`${path}.${k}`);
    }
    for (const [k, childSchema] of Object.entries(s.properties ?? {}))
      if (result[k] === undefined && childSchema.default !== undefined)
        result[k] = structuredClone(childSchema.default);
    for (const r of s.required ?? [])
      if (result[r] === undefined) out.causes.push(requiredValue(show(`${path}.${r}`)));
    return result;
  }
  return v;
}

/**
 * Checks `value` against a structural schema the way the API server does for custom resources: prunes fields
 * the schema does not declare, applies defaults, and reports violations as Status causes.
 */
export function checkSchema(schema: JsonSchema, value: unknown, path = ''): SchemaResult {
  const out = { causes: [] as StatusCause[], unknown: [] as string[] };
  const pruned = walk(schema, value, path, out);
  return { value: pruned, causes: out.causes, unknownFields: out.unknown };
}
