import { badRequest } from './status.js';

/**
 * How deep an object may nest. The API server's decoder stops at 10000; a JavaScript stack does not carry an
 * object that deep through clone and serialization (one was stored, then failed every list of its resource with
 * a 500), so the simulator stops at 1000, far beyond any real object.
 */
export const MAX_DEPTH = 1000;

/** Throws a 400 when `value` nests arrays and objects deeper than {@link MAX_DEPTH}; walks without recursion. */
export function refuseTooDeep(value: unknown): void {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_DEPTH) throw badRequest(`json: exceeded max depth of ${MAX_DEPTH}`);
    for (const child of Array.isArray(v) ? v : Object.values(v)) pending.push([child, depth + 1]);
  }
}
