import type { StatusCause } from './status.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** How a resource's object names are validated. */
export type NameRule = 'subdomain' | 'label' | 'path';

/** Builds a `FieldValueInvalid` cause the way the real server words it. */
export function invalidValue(field: string, value: unknown, why: string): StatusCause {
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${why}`, field };
}

/** Builds a `FieldValueRequired` cause. */
export function requiredValue(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

/** Problems with `name` under `rule` (empty when valid). */
export function nameProblems(rule: NameRule, name: string, field = 'metadata.name'): StatusCause[] {
  if (rule === 'path') {
    if (name === '.' || name === '..') return [invalidValue(field, name, `may not be '${name}'`)];
    if (/[/%]/.test(name))
      return [invalidValue(field, name, `may not contain '${name.includes('/') ? '/' : '%'}'`)];
    return [];
  }
  if (rule === 'label') {
    if (name.length > 63) return [invalidValue(field, name, 'must be no more than 63 characters')];
    if (!DNS1123_LABEL.test(name))
      return [
        invalidValue(
          field,
          name,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
      ];
    return [];
  }
  if (name.length > 253) return [invalidValue(field, name, 'must be no more than 253 characters')];
  if (!DNS1123_SUBDOMAIN.test(name))
    return [
      invalidValue(
        field,
        name,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ),
    ];
  return [];
}

/** Problems with a qualified key (`prefix/name`) such as a label or annotation key. */
export function qualifiedKeyProblems(field: string, key: string): StatusCause[] {
  const parts = key.split('/');
  const bad = (why: string) => [invalidValue(field, key, why)];
  if (parts.length > 2)
    return bad(
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'",
    );
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return bad('prefix part must be non-empty');
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
      return bad('prefix part a lowercase RFC 1123 subdomain');
  }
  if (name.length === 0) return bad('name part must be non-empty');
  if (name.length > 63) return bad('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name))
    return bad(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return [];
}

/** Problems with a label value. */
export function labelValueProblems(field: string, value: unknown): StatusCause[] {
  if (typeof value !== 'string') return [invalidValue(field, value, 'must be a string')];
  if (value.length > 63) return [invalidValue(field, value, 'must be no more than 63 characters')];
  if (!LABEL_VALUE.test(value))
    return [
      invalidValue(
        field,
        value,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ),
    ];
  return [];
}

/** Maximum total size of an object's annotations (keys plus values), as in the real server. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** Validates `metadata.labels`, `metadata.annotations` and `metadata.finalizers`. */
export function metadataProblems(meta: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [field, value] of [
    ['labels', meta.labels],
    ['annotations', meta.annotations],
  ] as const) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      out.push(invalidValue(`metadata.${field}`, value, 'must be a map of strings'));
      continue;
    }
    let size = 0;
    for (const [k, v] of Object.entries(value)) {
      out.push(...qualifiedKeyProblems(`metadata.${field}`, k));
      if (field === 'labels') out.push(...labelValueProblems(`metadata.labels`, v));
      else if (typeof v !== 'string') out.push(invalidValue(`metadata.annotations`, v, 'must be a string'));
      else size += k.length + v.length;
    }
    if (size > MAX_ANNOTATIONS_BYTES)
      out.push({
        reason: 'FieldValueTooLong',
        message: `Too long: must have at most ${MAX_ANNOTATIONS_BYTES} bytes`,
        field: 'metadata.annotations',
      });
  }
  if (meta.finalizers !== undefined && meta.finalizers !== null) {
    if (!Array.isArray(meta.finalizers))
      out.push(invalidValue('metadata.finalizers', meta.finalizers, 'must be a list'));
    else
      meta.finalizers.forEach((f, i) => {
        if (typeof f !== 'string') out.push(invalidValue(`metadata.finalizers[${i}]`, f, 'must be a string'));
        else out.push(...qualifiedKeyProblems(`metadata.finalizers[${i}]`, f));
      });
  }
  return out;
}
