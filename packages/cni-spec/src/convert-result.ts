import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import { ipFamily } from './ip.js';
import type { Result, ResultInterface, ResultRoute, WireResult } from './result.js';
import { type CniVersion, compareVersions, resultHasIpVersion } from './versions.js';

/** Options for {@link convertResult}. */
export interface ConvertOptions {
  /**
   * Fail (code 1) instead of dropping fields the target version cannot carry (the 1.1.0 interface and route
   * fields when writing 1.0.0 or older). Default false: they are informational and are dropped, as libcni does.
   */
  strict?: boolean;
}

const interfaceFields110 = ['mtu', 'socketPath', 'pciID'] as const;
const routeFields110 = ['mtu', 'advmss', 'priority', 'table', 'scope'] as const;

/**
 * Writes `result` in the wire form of version `to`: up or down between 0.3.0, 0.3.1, 0.4.0, 1.0.0 and 1.1.0.
 * Going below 1.0.0 adds `ips[].version`; going below 1.1.0 drops (or, with `strict`, refuses) the 1.1.0
 * fields. The input is not modified.
 *
 * @throws {@link CniError} code 1 in strict mode when the target cannot hold the data, naming the fields.
 */
export function convertResult(result: Result, to: CniVersion, options: ConvertOptions = {}): WireResult {
  const below110 = compareVersions(to, '1.1.0') < 0;
  const lost: string[] = [];
  const out: Record<string, unknown> = { cniVersion: to };

  if (result.interfaces !== undefined) {
    out['interfaces'] = result.interfaces.map((itf, i) => {
      const copy: ResultInterface = { ...itf };
      if (below110) {
        for (const f of interfaceFields110) {
          if (copy[f] !== undefined) {
            lost.push(`interfaces[${i}].${f}`);
            delete copy[f];
          }
        }
      }
      return copy;
    });
  }
  if (result.ips !== undefined) {
    const withVersion = resultHasIpVersion(to);
    out['ips'] = result.ips.map((ip) => {
      if (!withVersion) return { ...ip };
      const family = ipFamily(ip.address.slice(0, ip.address.indexOf('/')));
      return { version: family === 6 ? '6' : '4', ...ip };
    });
  }
  if (result.routes !== undefined) {
    out['routes'] = result.routes.map((route, i) => {
      const copy: ResultRoute = { ...route };
      if (below110) {
        for (const f of routeFields110) {
          if (copy[f] !== undefined) {
            lost.push(`routes[${i}].${f}`);
            delete copy[f];
          }
        }
      }
      return copy;
    });
  }
  if (result.dns !== undefined) out['dns'] = structuredClone(result.dns);

  if (options.strict && lost.length > 0) {
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      `cannot convert result from ${result.cniVersion} to ${to} without losing data`,
      `fields not defined in ${to}: ${lost.join(', ')}`,
    );
  }
  return out as unknown as WireResult;
}
