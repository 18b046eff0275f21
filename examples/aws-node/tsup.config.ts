import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';
import { literalSchemaKeysPlugin } from './build/literal-schema-keys.js';
import { bundlePluginProgram } from './build/plugin-program.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * @kubernetes/client-node is ESM-only and costs ~600 ms to load whole; it is bundled with the packages it
 * imports, in the chunk the daemon loads when it first connects to the API (src/kube/daemon-kube.ts).
 */
const KUBE_CLIENT_DEPS = [
  'form-data',
  'hpagent',
  'isomorphic-ws',
  'js-yaml',
  'jsonpath-plus',
  'node-fetch',
  'openid-client',
  'rfc4648',
  'socks-proxy-agent',
  'stream-buffers',
  'tar-fs',
  'ws',
].map((name) => new RegExp(`^${name}(/|$)`));

/** The aws-cni program, bundled first so the launcher entry below can embed it. */
const pluginProgram = await bundlePluginProgram({ version });

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { clean: false }),
  // The daemon: CommonJS, with the vpc-cni-kit packages and the AWS SDK bundled from their ES modules so
  // tree-shaking keeps only the EC2 commands eni-manager names, and split so the SDK still loads on the first
  // EC2 call, from dist/bin/aws-node-chunks (docs/adr/0003-bundled-daemon.md: VmRSS at 110 pods 151 -> 86 MiB).
  // gRPC, prom-client and koffi (native) stay external, installed as the package's dependencies. `shims`
  // supplies `import.meta.url` (named by netlink's ESM build) to the CommonJS output.
  {
    entry: { 'aws-node': 'src/bin/aws-node.ts' },
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    dts: false,
    clean: false,
    splitting: true,
    noExternal: [
      /^@vpc-cni-kit\//,
      /^@aws-sdk\//,
      /^@smithy\//,
      /^@aws\//,
      /^@kubernetes\//,
      ...KUBE_CLIENT_DEPS,
    ],
    external: ['@grpc/grpc-js', 'prom-client', 'koffi', 'bufferutil', 'utf-8-validate'],
    // The SDK's packages have no `exports` map: `module` is their ES build (tree-shakable), `main` the CJS one.
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
      // What the daemon loads lazily (the SDK, on its first EC2 call) and what those chunks share.
      options.chunkNames = 'aws-node-chunks/[name]-[hash]';
    },
    esbuildPlugins: [literalSchemaKeysPlugin],
    shims: true,
    define: { __AWS_NODE_VERSION__: JSON.stringify(version) },
    banner: { js: '#!/usr/bin/env node' },
  },
  // The init step: CommonJS, dependencies external.
  {
    entry: {
      'aws-vpc-cni-init': 'src/bin/aws-vpc-cni-init.ts',
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
  // The CNI plugin: one executable file. The program (src/plugin/main.ts: everything bundled and minified except
  // koffi's native module, which only the daemon-down DEL and CHECK paths load, from `node_modules` beside the
  // binary where aws-vpc-cni-init puts it) is embedded as a string in a small launcher that compiles it with a
  // V8 code cache (src/plugin/launcher.ts).
  {
    entry: { 'aws-cni': 'src/plugin/launcher.ts' },
    outDir: 'dist/bin',
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    minify: true,
    sourcemap: false,
    dts: false,
    clean: false,
    splitting: false,
    define: pluginProgram.defines,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
