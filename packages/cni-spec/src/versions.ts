/** Every CNI specification version this package reads and writes, oldest first. */
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;

/** A CNI specification version this package supports. */
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];

/** The newest supported version; what a plugin reports as its own in a VERSION answer. */
export const LATEST_VERSION: CniVersion = '1.1.0';

/** Whether `v` is one of {@link SUPPORTED_VERSIONS}. */
export function isSupportedVersion(v: unknown): v is CniVersion {
  return typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/**
 * Compares two dotted version strings numerically (`"0.10.0" > "0.4.0"`). Returns a negative number, zero or a
 * positive number. Missing components count as zero.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = Number(pa[i] ?? 0) - Number(pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether results of version `v` carry `ips[].version` (spec 0.3.x and 0.4.0; removed in 1.0.0). */
export function resultHasIpVersion(v: CniVersion): boolean {
  return compareVersions(v, '1.0.0') < 0;
}

/** The CNI commands, as given in `CNI_COMMAND`. */
export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS' | 'VERSION';

/** The oldest spec version that defines each command (VERSION exists in every supported version). */
export const COMMAND_SINCE: Readonly<Record<CniCommand, CniVersion>> = {
  ADD: '0.3.0',
  DEL: '0.3.0',
  VERSION: '0.3.0',
  CHECK: '0.4.0',
  GC: '1.1.0',
  STATUS: '1.1.0',
};

/** Whether `command` exists in spec version `version` (CHECK from 0.4.0, GC and STATUS from 1.1.0). */
export function commandSupported(command: CniCommand, version: CniVersion): boolean {
  return compareVersions(version, COMMAND_SINCE[command]) >= 0;
}
