/** Replaced at build time with the package version; `0.0.0-dev` when running from source. */
declare const __AWS_NODE_VERSION__: string | undefined;

/** This build's version: what the daemon and plugin compare, and what `awscni_build_info` reports. */
export const VERSION: string = typeof __AWS_NODE_VERSION__ === 'string' ? __AWS_NODE_VERSION__ : '0.0.0-dev';

/**
 * The version the aws-node programs print for `--version`: `VPC_CNI_VERSION` from `env` when it is set and not
 * empty (the reference's image sets it, and the daemon compares it with the plugin's), else {@link VERSION}.
 */
export function programVersion(env: Readonly<Record<string, string | undefined>>): string {
  return env['VPC_CNI_VERSION'] || VERSION;
}
