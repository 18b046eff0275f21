import type { ListStrategy } from './resource-type.js';
import { badRequest, KubeApiError } from './status.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** The patch content types the simulator accepts. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** Content type → patch type. */
export const PATCH_CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? { ...(target as JsonObject) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v) as Json;
  }
  return out;
}

function unprocessable(message: string): KubeApiError {
  return new KubeApiError(422, 'Invalid', message);
}

function strategicList(
  target: Json[] | undefined,
  patch: Json[],
  strategy: ListStrategy | undefined,
  path: string,
  strategies: Readonly<Record<string, ListStrategy>>,
): Json[] {
  const base = target ?? [];
  if (patch.some((e) => isObject(e) && e.$patch === 'replace'))
    return patch.filter((e) => !(isObject(e) && e.$patch === 'replace'));
  if (!strategy) return structuredClone(patch);
  if ('set' in strategy) {
    const out = [...base];
    for (const v of patch) if (!out.some((o) => JSON.stringify(o) === JSON.stringify(v))) out.push(v);
    return out;
  }
  const key = strategy.mergeKey;
  const out = base.map((e) => structuredClone(e));
  for (const p of patch) {
    if (!isObject(p))
      throw badRequest(`unable to find api field in struct for the merge key "${key}" at ${path}`);
    if (p[key] === undefined)
      throw badRequest(`map: ${JSON.stringify(p)} does not contain declared merge key: ${key}`);
    const i = out.findIndex((e) => isObject(e) && JSON.stringify(e[key]) === JSON.stringify(p[key]));
    if (p.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = strategicObject(out[i] as JsonObject, p, path, strategies);
    else out.push(strategicObject({}, p, path, strategies));
  }
  return out;
}

function strategicObject(
  target: JsonObject,
  patch: JsonObject,
  path: string,
  strategies: Readonly<Record<string, ListStrategy>>,
): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return structuredClone(rest);
  }
  let out: JsonObject = { ...target };
  const retain = patch.$retainKeys;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys') continue;
    if (k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (!Array.isArray(v)) throw badRequest(`invalid patch: ${k} must be a list`);
      const cur = out[field];
      if (Array.isArray(cur))
        out[field] = cur.filter((e) => !v.some((d) => JSON.stringify(d) === JSON.stringify(e)));
      continue;
    }
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) delete out[k];
    else if (isObject(v)) {
      if (v.$patch === 'delete') delete out[k];
      else out[k] = strategicObject(isObject(out[k]) ? (out[k] as JsonObject) : {}, v, childPath, strategies);
    } else if (Array.isArray(v)) {
      out[k] = strategicList(
        Array.isArray(out[k]) ? (out[k] as Json[]) : undefined,
        v,
        strategies[childPath],
        childPath,
        strategies,
      );
    } else out[k] = v;
  }
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw badRequest('invalid patch: $retainKeys must be a list of strings');
    out = Object.fromEntries(Object.entries(out).filter(([k]) => retain.includes(k)));
  }
  // Reorder per $setElementOrder directives (elements not named keep their place after the ordered ones).
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith('$setElementOrder/') || !Array.isArray(order)) continue;
    const field = k.slice('$setElementOrder/'.length);
    const list = out[field];
    const strategy = strategies[path ? `${path}.${field}` : field];
    if (!Array.isArray(list)) continue;
    const keyOf = (e: Json) =>
      JSON.stringify(strategy && 'mergeKey' in strategy && isObject(e) ? e[strategy.mergeKey] : e);
    const wanted = order.map((o) =>
      JSON.stringify(strategy && 'mergeKey' in strategy && isObject(o) ? o[strategy.mergeKey] : o),
    );
    const rank = (e: Json) => {
      const r = wanted.indexOf(keyOf(e));
      return r < 0 ? wanted.length : r;
    };
    out[field] = [...list].sort((a, b) => rank(a) - rank(b));
  }
  return out;
}

/**
 * Strategic merge patch for built-in types: maps merge, lists merge by the key `strategies` declares for their
 * path (e.g. containers by `name`) or as sets, other lists are replaced; honours `$patch`, `$retainKeys`,
 * `$setElementOrder/…` and `$deleteFromPrimitiveList/…`.
 */
export function strategicMergePatch(
  target: unknown,
  patch: unknown,
  strategies: Readonly<Record<string, ListStrategy>>,
): unknown {
  if (!isObject(patch)) throw badRequest('invalid patch: a strategic merge patch must be a JSON object');
  return strategicObject(isObject(target) ? (target as JsonObject) : {}, patch, '', strategies);
}

/** One RFC 6902 operation. */
interface JsonPatchOp {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/'))
    throw unprocessable(
      `the server rejected our request due to an error in our request: JSON pointer ${JSON.stringify(path)} does not start with /`,
    );
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Pointer steps follow own properties only, so `/__proto__/…` or `/constructor/…` cannot reach shared prototypes. */
function walk(doc: Json, steps: string[], path: string): Json {
  let cur = doc;
  for (const p of steps) {
    const next = Array.isArray(cur)
      ? cur[Number(p)]
      : isObject(cur) && Object.hasOwn(cur, p)
        ? cur[p]
        : undefined;
    if (next === undefined)
      throw unprocessable(
        `the server rejected our request due to an error in our request: doc is missing path: "${path}"`,
      );
    cur = next;
  }
  return cur;
}

function parentOf(doc: Json, parts: string[], path: string): { parent: Json; last: string } {
  return { parent: walk(doc, parts.slice(0, -1), path), last: parts[parts.length - 1]! };
}

function getAt(doc: Json, path: string): Json {
  return walk(doc, pointer(path), path);
}

function removeAt(doc: Json, path: string): Json {
  const parts = pointer(path);
  const { parent, last } = parentOf(doc, parts, path);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length)
      throw unprocessable(
        `the server rejected our request due to an error in our request: Unable to remove nonexistent key: ${last}: missing value`,
      );
    return parent.splice(i, 1)[0]!;
  }
  if (!isObject(parent) || !Object.hasOwn(parent, last))
    throw unprocessable(
      `the server rejected our request due to an error in our request: Unable to remove nonexistent key: ${last}: missing value`,
    );
  const v = parent[last]!;
  delete parent[last];
  return v;
}

function addAt(doc: Json, path: string, value: Json, replace: boolean): Json {
  const parts = pointer(path);
  if (parts.length === 0) return value;
  const { parent, last } = parentOf(doc, parts, path);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length - (replace ? 1 : 0))
      throw unprocessable(
        `the server rejected our request due to an error in our request: Unable to access invalid index: ${last}: invalid index referenced`,
      );
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, last))
      throw unprocessable(
        `the server rejected our request due to an error in our request: replace operation does not apply: doc is missing key: ${path}: missing value`,
      );
    parent[last] = value;
  } else
    throw unprocessable(
      `the server rejected our request due to an error in our request: doc is missing path: "${path}"`,
    );
  return doc;
}

/** RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`); applied to a copy, all or nothing. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = structuredClone(target) as Json;
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string')
      throw badRequest(
        'the server rejected our request due to an error in our request: invalid JSON patch operation',
      );
    const value = structuredClone(raw.value) as Json;
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, raw.path, value, false);
        break;
      case 'remove':
        removeAt(doc, raw.path);
        break;
      case 'replace':
        doc = addAt(doc, raw.path, value, true);
        break;
      case 'move': {
        const v = removeAt(doc, String(raw.from));
        doc = addAt(doc, raw.path, v, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, raw.path, structuredClone(getAt(doc, String(raw.from))), false);
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, raw.path)) !== JSON.stringify(value))
          throw unprocessable(
            `the server rejected our request due to an error in our request: testing value ${raw.path} failed: test failed`,
          );
        break;
      default:
        throw badRequest(
          `the server rejected our request due to an error in our request: Unexpected kind: ${raw.op}`,
        );
    }
  }
  return doc;
}
