import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Bundled from their ES modules into the program (tree-shaken): our packages, the AWS SDK, the Kubernetes client. */
const BUNDLED = [/^@vpc-cni-kit\//, /^@aws-sdk\//, /^@smithy\//, /^@aws\//, /^@kubernetes\/client-node/];

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { clean: false }),
  // The controller: one CommonJS program for Node 20 with everything it needs bundled (ADR 0014), so the
  // container image needs only this file; `shims` supplies `import.meta.url` to the CommonJS output.
  {
    entry: { 'vpc-resource-controller': 'src/bin/vpc-resource-controller.ts' },
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    dts: false,
    clean: false,
    splitting: false,
    sourcemap: true,
    noExternal: BUNDLED,
    banner: { js: '#!/usr/bin/env node' },
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
    },
    shims: true,
    define: { __VPC_RC_VERSION__: JSON.stringify(version) },
  },
]);
