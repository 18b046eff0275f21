import { CniError } from '../cni-error.js';

/** A JSON object being validated. */
export type JsonObject = Record<string, unknown>;

/**
 * Field readers that name the failing path (`plugins[1].ipam.type`) in the error they throw. Every reader
 * takes the CNI error code to fail with, so one helper serves config (7), env (4) and decode (6) checks.
 */
export class FieldReader {
  constructor(
    readonly code: number,
    readonly what: string,
  ) {}

  fail(path: string, problem: string, value?: unknown): never {
    const details = value === undefined ? undefined : `got ${preview(value)}`;
    throw new CniError(this.code, `${this.what}: ${path}: ${problem}`, details);
  }

  object(v: unknown, path: string): JsonObject {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(path, 'must be an object', v);
    return v as JsonObject;
  }

  optObject(o: JsonObject, key: string, path: string): JsonObject | undefined {
    const v = o[key];
    return v === undefined || v === null ? undefined : this.object(v, join(path, key));
  }

  string(o: JsonObject, key: string, path: string, opts: { nonEmpty?: boolean } = {}): string {
    const v = o[key];
    if (typeof v !== 'string') this.fail(join(path, key), 'must be a string', v);
    if (opts.nonEmpty && v === '') this.fail(join(path, key), 'must not be empty');
    return v;
  }

  optString(o: JsonObject, key: string, path: string): string | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.fail(join(path, key), 'must be a string', v);
    return v;
  }

  /** A boolean; libcni also accepts the strings "true" and "false" for list flags, so `loose` does too. */
  optBool(o: JsonObject, key: string, path: string, loose = false): boolean | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    if (loose && (v === 'true' || v === 'false')) return v === 'true';
    return this.fail(join(path, key), 'must be a boolean', v);
  }

  /** A non-negative integer no larger than `max`. */
  optUint(o: JsonObject, key: string, path: string, max = 0xffffffff): number | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
      this.fail(join(path, key), `must be an integer from 0 to ${max}`, v);
    }
    return v;
  }

  optArray(o: JsonObject, key: string, path: string): unknown[] | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) this.fail(join(path, key), 'must be an array', v);
    return v;
  }

  optStringArray(o: JsonObject, key: string, path: string): string[] | undefined {
    const arr = this.optArray(o, key, path);
    if (arr === undefined) return undefined;
    return arr.map((x, i) => {
      if (typeof x !== 'string') this.fail(`${join(path, key)}[${i}]`, 'must be a string', x);
      return x;
    });
  }
}

/** `a.b` path joining that keeps the root unnamed. */
export function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function preview(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Names, container ids and similar identifiers: `^[A-Za-z0-9][A-Za-z0-9_.-]*$`. */
export const identifierRe = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Parses JSON bytes or text into an object, failing with `code` (6, decode failure). Bytes must be UTF-8, as JSON
 * requires and every runtime writes it: a malformed sequence is refused, not replaced by U+FFFD (which would let a
 * corrupted name or path pass as another one).
 */
export function decodeJsonObject(input: string | Uint8Array, what: string, code: number): JsonObject {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(input);
    } catch {
      throw new CniError(code, `${what}: not valid UTF-8`);
    }
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CniError(code, `${what}: not valid JSON`, e instanceof Error ? e.message : undefined);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new CniError(code, `${what}: must be a JSON object`);
  }
  return v as JsonObject;
}
