import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

// The AWS SDK's generated schema modules (`dist-es/**/schemas_0.js`) declare every shape of a service as an
// array literal and name traits with computed keys, e.g. `{ [_xN]: _TSa }`, where `_xN` is a module constant
// holding "xmlName". esbuild cannot prove a computed key free of side effects (it would call `toString` on an
// object), so it keeps every shape that has one, with everything those reach: for EC2 that is 2,245 of 3,404
// shapes, about 1 MB of the 1.3 MB file, although the daemon's twelve commands reach a few hundred.
//
// This plugin writes those keys as the string literals they are (`{ "xmlName": _TSa }`), which is the same
// object, and lets tree-shaking drop the unreachable shapes. Only keys naming a module-level `const _x = "…"`
// are rewritten; `__proto__` is left computed (as a literal key it would set the prototype instead).

const SCHEMA_FILE = /[\\/]node_modules[\\/]@aws-sdk[\\/].+[\\/]dist-es[\\/](?:.+[\\/])?schemas_\d+\.js$/;
const STRING_CONST = /^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm;
const COMPUTED_KEY = /([{,]\s*)\[(_\w+)\]:/g;

/** Rewrites `source` (an SDK schema module), returning it and how many keys it rewrote. */
export function literalSchemaKeys(source: string): { code: string; rewritten: number } {
  const constants = new Map<string, string>();
  for (const m of source.matchAll(STRING_CONST)) constants.set(m[1] as string, m[2] as string);
  let rewritten = 0;
  const code = source.replace(COMPUTED_KEY, (whole, before: string, name: string) => {
    const literal = constants.get(name);
    if (literal === undefined || literal === '"__proto__"') return whole;
    rewritten++;
    return `${before}${literal}:`;
  });
  return { code, rewritten };
}

/** The esbuild plugin: applies {@link literalSchemaKeys} to the SDK's ESM schema modules as they load. */
export const literalSchemaKeysPlugin: Plugin = {
  name: 'aws-sdk-literal-schema-keys',
  setup(build) {
    build.onLoad({ filter: SCHEMA_FILE }, async ({ path }) => ({
      contents: literalSchemaKeys(await readFile(path, 'utf8')).code,
      loader: 'js',
    }));
  },
};
