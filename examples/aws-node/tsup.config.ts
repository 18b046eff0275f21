import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { clean: false }),
  // The daemon and the init step: CommonJS (the AWS SDK loads faster from CJS), dependencies external.
  {
    entry: {
      'aws-node': 'src/bin/aws-node.ts',
      'aws-vpc-cni-init': 'src/bin/aws-vpc-cni-init.ts',
      demo: 'src/demo/demo.ts',
    },
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    dts: false,
    clean: false,
    splitting: false,
    define: { __AWS_NODE_VERSION__: JSON.stringify(version) },
    banner: { js: '#!/usr/bin/env node' },
  },
  // The CNI plugin: one CommonJS file, everything bundled except koffi's native module, which only the
  // daemon-down DEL and CHECK paths load (from `node_modules` beside the binary; aws-vpc-cni-init puts it there).
  {
    entry: { 'aws-cni': 'src/plugin/main.ts' },
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    bundle: true,
    minify: true,
    sourcemap: false,
    dts: false,
    clean: false,
    splitting: false,
    noExternal: [/^(?!koffi$).*/],
    external: ['koffi'],
    define: { __AWS_CNI_VERSION__: JSON.stringify(version) },
    banner: { js: '#!/usr/bin/env node' },
  },
]);
