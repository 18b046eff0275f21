import type { Options } from 'tsup';

/**
 * The one tsup configuration every package builds with: ESM and CJS, declarations, source maps, and
 * dependencies left external (a library never bundles what its consumers install).
 */
export function packageBuild(entry: Record<string, string>, extra: Partial<Options> = {}): Options {
  return {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    treeshake: true,
    ...extra,
  };
}

/**
 * A program of an example's `dist/bin`: one CommonJS file for Node 20 starting with a `node` shebang, no
 * declarations, nothing cleaned (it shares `dist` with {@link packageBuild}); `options` add the entry and
 * whatever else the program needs (bundling, splitting, defines).
 */
export function programBuild(options: Options): Options {
  return {
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    dts: false,
    clean: false,
    splitting: false,
    banner: { js: '#!/usr/bin/env node' },
    ...options,
  };
}
