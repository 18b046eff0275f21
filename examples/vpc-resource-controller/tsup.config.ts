import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { thirdPartyNotices } from '../../third-party-notices.js';
import { packageBuild, programBuild } from '../../tsup.base.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * Bundled from their ES modules into the program (tree-shaken): our packages, the AWS SDK, the Kubernetes client
 * and the YAML parser it shares with the kubeconfig check. The image carries the program and nothing else.
 */
const BUNDLED = [
  /^@vpc-cni-kit\//,
  /^@aws-sdk\//,
  /^@smithy\//,
  /^@aws\//,
  /^@kubernetes\/client-node/,
  /^js-yaml$/,
  /^prom-client/,
];

/** THIRD_PARTY_NOTICES: every third-party package the program bundles, with its licence texts. */
const notices = thirdPartyNotices({
  packageDir: fileURLToPath(new URL('.', import.meta.url)),
  owner: `@vpc-cni-kit/vpc-resource-controller ${version}`,
});

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { clean: false }),
  // The controller: one CommonJS program for Node 20 with everything it needs bundled (ADR 0014), so the
  // container image needs only this file; `shims` supplies `import.meta.url` to the CommonJS output.
  programBuild({
    entry: { 'vpc-resource-controller': 'src/bin/vpc-resource-controller.ts' },
    // Split as aws-node's daemon is (ADR 0003): the tree-shaken SDK loads on the first EC2 call, from a chunk.
    splitting: true,
    sourcemap: true,
    noExternal: BUNDLED,
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
      options.chunkNames = 'vpc-resource-controller-chunks/[name]-[hash]';
    },
    esbuildPlugins: [notices.plugin],
    shims: true,
    define: { __VPC_RC_VERSION__: JSON.stringify(version) },
  }),
]);
