import { defineConfig } from 'tsup';

/** `npm run demo`'s program: CommonJS, every package external (they resolve to the workspace's builds). */
export default defineConfig({
  entry: { demo: 'src/demo/demo.ts' },
  outDir: 'dist',
  format: ['cjs'],
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  dts: false,
  clean: true,
  splitting: false,
  // `import.meta.url` (awsNodeBinDir) in the CommonJS output.
  shims: true,
  banner: { js: '#!/usr/bin/env node' },
});
