/** Replaced at build time with the package version; `0.0.0-dev` when running from source. */
declare const __VPC_RC_VERSION__: string | undefined;

/** This build's version (`--version`, the Lease holder's log line). */
export const VERSION: string = typeof __VPC_RC_VERSION__ === 'string' ? __VPC_RC_VERSION__ : '0.0.0-dev';
