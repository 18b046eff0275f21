import { createHash } from 'node:crypto';
import { build, type Metafile, type Plugin } from 'esbuild';

/** Resolves `koffi` to a module that loads it from `node_modules` beside the running executable. */
const koffiBesideExecutable: Plugin = {
  name: 'koffi-beside-executable',
  setup(b) {
    b.onResolve({ filter: /^koffi$/ }, () => ({ path: 'koffi', namespace: 'koffi-beside-executable' }));
    b.onLoad({ filter: /.*/, namespace: 'koffi-beside-executable' }, () => ({
      contents: "module.exports = require('node:module').createRequire(process.execPath)('koffi');",
      loader: 'js',
    }));
  },
};

/** A plugin program (aws-cni or egress-cni), bundled for embedding in the launcher (src/plugin/launcher.ts). */
export interface PluginProgram {
  /** The program: its entry and everything it imports except koffi, minified CommonJS. */
  readonly source: string;
  /** The `define` entries the launcher is built with: the program and its digest. */
  readonly defines: Record<string, string>;
  /** What went into the program (esbuild's metafile), for the third-party notices. */
  readonly metafile: Metafile;
}

/**
 * Bundles the plugin program. `conditions` lets tests build from the workspace's TypeScript sources
 * (`@vpc-cni-kit/source`); the package build resolves the sibling packages' built `dist`.
 */
export async function bundlePluginProgram(options: {
  version: string;
  /** The program's entry, relative to the package. @defaultValue `'src/plugin/main.ts'` (aws-cni) */
  entry?: string;
  conditions?: string[];
  /**
   * How the program reaches koffi (only the daemon-down DEL and CHECK load it): `require` from beside the
   * program file (`external`, the default: the launcher), or from `node_modules` beside the executable
   * (`beside-executable`: a single executable application, whose own `require` loads only Node's built-in
   * modules).
   */
  koffi?: 'external' | 'beside-executable';
}): Promise<PluginProgram> {
  const result = await build({
    entryPoints: [new URL(`../${options.entry ?? 'src/plugin/main.ts'}`, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    external: ['koffi'],
    plugins: options.koffi === 'beside-executable' ? [koffiBesideExecutable] : [],
    conditions: options.conditions ?? [],
    // `import()` of Node's modules (cni-spec's plugin invoker loads child_process lazily) becomes `require`:
    // neither the launcher's `vm.Script` nor a single executable has a dynamic-import callback.
    supported: { 'dynamic-import': false },
    define: { __AWS_CNI_VERSION__: JSON.stringify(options.version) },
    logLevel: 'warning',
    metafile: true,
  });
  const [output] = result.outputFiles;
  if (output === undefined)
    throw new Error(`the ${options.entry ?? 'aws-cni'} program build produced no output`);
  const source = output.text;
  return {
    source,
    metafile: result.metafile,
    defines: {
      __AWS_CNI_PROGRAM__: JSON.stringify(source),
      __AWS_CNI_PROGRAM_ID__: JSON.stringify(createHash('sha256').update(source).digest('hex').slice(0, 32)),
    },
  };
}
