import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { thirdPartyNotices } from '../../third-party-notices.js';
import { packageBuild, programBuild } from '../../tsup.base.js';
import { literalSchemaKeysPlugin } from './build/literal-schema-keys.js';
import { bundlePluginProgram } from './build/plugin-program.js';
import { buildSingleExecutable } from './build/single-executable.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** The aws-cni program, bundled first so the launcher entry below can embed it. */
const pluginProgram = await bundlePluginProgram({ version });
/** The same program for the single executable application, which finds koffi beside itself. */
const seaProgram = await bundlePluginProgram({ version, koffi: 'beside-executable' });
/** egress-cni, the chained egress plugin, built the same two ways. */
const egressEntry = 'src/egress/main.ts';
const egressProgram = await bundlePluginProgram({ version, entry: egressEntry });
const egressSeaProgram = await bundlePluginProgram({
  version,
  entry: egressEntry,
  koffi: 'beside-executable',
});

/**
 * THIRD_PARTY_NOTICES: every third-party package the programs below bundle, with its licence texts, written by
 * the builds as they finish (the plugin programs' metafiles are added here, the tsup builds' by the plugin).
 */
const notices = thirdPartyNotices({
  packageDir: fileURLToPath(new URL('.', import.meta.url)),
  owner: `@vpc-cni-kit/aws-node ${version}`,
});
for (const program of [pluginProgram, seaProgram, egressProgram, egressSeaProgram])
  notices.add(program.metafile);

/** The vpc-cni-kit packages and the AWS SDK bundled from their ES modules, so tree-shaking applies. */
const BUNDLED = [/^@vpc-cni-kit\//, /^@aws-sdk\//, /^@smithy\//, /^@aws\//];

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { clean: false }),
  // The daemon: the vpc-cni-kit packages and the AWS SDK bundled from their ES modules so tree-shaking keeps
  // only the EC2 commands eni-manager names, and split so the SDK still loads on the first EC2 call, from
  // dist/bin/aws-node-chunks (docs/adr/0003-bundled-daemon.md: VmRSS at 110 pods 151 -> 86 MiB). gRPC,
  // prom-client and koffi (native) stay external, installed as the package's dependencies. `shims` supplies
  // `import.meta.url` (named by netlink's ESM build) to the CommonJS output.
  programBuild({
    entry: { 'aws-node': 'src/bin/aws-node.ts' },
    sourcemap: true,
    splitting: true,
    noExternal: BUNDLED,
    external: ['@grpc/grpc-js', 'prom-client', 'koffi'],
    // The SDK's packages have no `exports` map: `module` is their ES build (tree-shakable), `main` the CJS one.
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
      // What the daemon loads lazily (the SDK, on its first EC2 call) and what those chunks share.
      options.chunkNames = 'aws-node-chunks/[name]-[hash]';
    },
    esbuildPlugins: [literalSchemaKeysPlugin, notices.plugin],
    shims: true,
    define: { __AWS_NODE_VERSION__: JSON.stringify(version) },
  }),
  // The init step: bundled like the daemon (so the container image needs only the daemon's three external
  // dependencies), koffi external.
  programBuild({
    entry: { 'aws-vpc-cni-init': 'src/bin/aws-vpc-cni-init.ts' },
    sourcemap: true,
    esbuildPlugins: [notices.plugin],
    noExternal: BUNDLED,
    external: ['koffi'],
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
    },
    shims: true,
    define: { __AWS_NODE_VERSION__: JSON.stringify(version) },
  }),
  // The health probe (grpc-health-probe's command line): one small file, the plugin's HTTP/2 client and nothing
  // else, so a kubelet probe costs about a Node start.
  programBuild({
    entry: { 'grpc-health-probe': 'src/bin/grpc-health-probe.ts' },
    // Our packages bundled in (the image carries only the daemon's three external dependencies).
    noExternal: [/^@vpc-cni-kit\//],
    minify: true,
    esbuildPlugins: [notices.plugin],
    define: { __AWS_NODE_VERSION__: JSON.stringify(version) },
  }),
  // The CNI plugin: one executable file. The program (src/plugin/main.ts: everything bundled and minified except
  // koffi's native module, which only the daemon-down DEL and CHECK paths load, from `node_modules` beside the
  // binary where aws-vpc-cni-init puts it) is embedded as a string in a small launcher that compiles it with a
  // V8 code cache (src/plugin/launcher.ts).
  programBuild({
    entry: { 'aws-cni': 'src/plugin/launcher.ts' },
    minify: true,
    esbuildPlugins: [notices.plugin],
    define: pluginProgram.defines,
    // And `aws-cni` as a single executable application: the program with its V8 code cache inside a copy of
    // this Node binary, needing no Node on the host (docs/adr/0010-self-contained-plugin.md). What
    // aws-vpc-cni-init installs when it exists.
    async onSuccess() {
      const sea = await buildSingleExecutable(seaProgram.source, 'dist/bin/aws-cni');
      if (!sea.built) console.warn(`aws-cni single executable not built: ${sea.reason}`);
    },
  }),
  // egress-cni (the reference's chained plugin for IPv4 egress of IPv6 pods and IPv6 egress of IPv4 pods):
  // the same launcher around its own program, and its own single executable. Unlike aws-cni it loads koffi on
  // every enabled ADD and DEL (it plumbs the egress veth itself), from `node_modules` beside the executable.
  programBuild({
    entry: { 'egress-cni': 'src/plugin/launcher.ts' },
    minify: true,
    esbuildPlugins: [notices.plugin],
    define: egressProgram.defines,
    async onSuccess() {
      const sea = await buildSingleExecutable(egressSeaProgram.source, 'dist/bin/egress-cni');
      if (!sea.built) console.warn(`egress-cni single executable not built: ${sea.reason}`);
    },
  }),
]);
