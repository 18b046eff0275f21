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
