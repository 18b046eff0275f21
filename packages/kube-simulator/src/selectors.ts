import { badRequest } from './status.js';
import { labelValueProblems, qualifiedKeyProblems } from './validation.js';

/** One requirement of a label selector. */
export type LabelRequirement =
  | { readonly key: string; readonly op: 'in' | 'notin'; readonly values: readonly string[] }
  | { readonly key: string; readonly op: 'exists' | 'doesnotexist' }
  | { readonly key: string; readonly op: 'gt' | 'lt'; readonly value: number };

/** A parsed label selector: every requirement must hold. */
export type LabelSelector = readonly LabelRequirement[];

/** One requirement of a field selector. */
export interface FieldRequirement {
  /** Field path, e.g. `spec.nodeName`. */
  readonly field: string;
  /** Whether the value must equal or differ. */
  readonly op: '=' | '!=';
  /** The value compared with. */
  readonly value: string;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function checkKey(key: string): string {
  const problems = qualifiedKeyProblems('key', key);
  if (problems.length > 0) throw badRequest(`unable to parse requirement: ${problems[0]!.message}`);
  return key;
}

function checkValue(value: string): string {
  const problems = labelValueProblems('values', value);
  if (problems.length > 0) throw badRequest(`unable to parse requirement: ${problems[0]!.message}`);
  return value;
}

/**
 * Parses a label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`). Throws a 400 BadRequest
 * {@link KubeApiError} on bad syntax.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const out: LabelRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^!\s*([^\s!=<>(),]+)$/))) out.push({ key: checkKey(m[1]!), op: 'doesnotexist' });
    else if ((m = part.match(/^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/))) {
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v.length > 0)
        .map(checkValue);
      if (values.length === 0)
        throw badRequest(
          `unable to parse requirement: for 'in', 'notin' operators, values set can't be empty`,
        );
      out.push({ key: checkKey(m[1]!), op: m[2] as 'in' | 'notin', values });
    } else if ((m = part.match(/^([^\s!=<>(),]+)\s*(==|=|!=)\s*([^\s!=<>(),]*)$/)))
      out.push({ key: checkKey(m[1]!), op: m[2] === '!=' ? 'notin' : 'in', values: [checkValue(m[3]!)] });
    else if ((m = part.match(/^([^\s!=<>(),]+)\s*([<>])\s*(-?\d+)$/)))
      out.push({ key: checkKey(m[1]!), op: m[2] === '>' ? 'gt' : 'lt', value: Number(m[3]) });
    else if ((m = part.match(/^([^\s!=<>(),]+)$/))) out.push({ key: checkKey(m[1]!), op: 'exists' });
    else throw badRequest(`unable to parse requirement: found '${part}', expected: identifier`);
  }
  return out;
}

/** Whether `labels` satisfy `selector`. */
export function matchesLabels(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  return selector.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case 'doesnotexist':
        return !has;
      case 'in':
        return has && r.values.includes(v!);
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        return r.op === 'gt' ? Number(v) > r.value : Number(v) < r.value;
      }
    }
    return false;
  });
}

/**
 * Parses a field selector (`metadata.name=x,spec.nodeName!=y`). Fields outside `supported` are refused with
 * the real server's 400 message.
 */
export function parseFieldSelector(text: string, supported: readonly string[]): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    const m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = m[1]!;
    if (!supported.includes(field)) throw badRequest(`field label not supported: ${field}`);
    out.push({ field, op: m[2] === '!=' ? '!=' : '=', value: m[3]!.trim() });
  }
  return out;
}

/**
 * The name a field selector requires exactly (`metadata.name=x` or `==`, alone or among other terms), as the real
 * API server reads it to authorize a list or watch against `resourceNames`; '' when it requires none.
 */
export function exactNameOf(text: string): string {
  for (const part of splitTopLevel(text)) {
    const m = part.match(/^\s*metadata\.name\s*(==|=)\s*(.*)$/);
    if (m) return m[2]!.trim();
  }
  return '';
}

/** Reads a dotted path (`spec.nodeName`) of a JSON object as a string ('' when absent). */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}

/** Whether `obj` satisfies every field requirement. */
export function matchesFields(selector: readonly FieldRequirement[], obj: unknown): boolean {
  return selector.every((r) => (fieldValue(obj, r.field) === r.value) === (r.op === '='));
}
