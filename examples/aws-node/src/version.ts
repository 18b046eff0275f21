/** Replaced at build time with the package version; `0.0.0-dev` when running from source. */
declare const __AWS_NODE_VERSION__: string | undefined;

/** This build's version: what the daemon and plugin compare, and what `awscni_build_info` reports. */
export const VERSION: string = typeof __AWS_NODE_VERSION__ === 'string' ? __AWS_NODE_VERSION__ : '0.0.0-dev';
