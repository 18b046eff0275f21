import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import { decodeJsonObject, FieldReader, type JsonObject, join } from './internal/fields.js';
import { ipFamily, parseCidr } from './ip.js';
import type { Dns, Result, ResultInterface, ResultIp, ResultRoute } from './result.js';
import { type CniVersion, isSupportedVersion } from './versions.js';

/** Options for {@link parseResult}. */
export interface ParseResultOptions {
  /** The version to assume when the result has no `cniVersion` (libcni assumes the request's). */
  defaultVersion?: CniVersion;
  /** The CNI code to fail with on a malformed result. Default 6 (decode failure). */
  errorCode?: number;
  /** What to call the value in error messages. Default `result`. */
  what?: string;
}

/**
 * Reads a success result of any supported version (an object, JSON text or bytes) into the
 * version-independent {@link Result}, validating every field: addresses and route destinations must be
 * CIDRs, gateways addresses of the same family, interface indexes in range, 0.x `ips[].version` consistent
 * with the address. Unknown keys are ignored, as the Go decoders do.
 *
 * @throws {@link CniError} code 1 for an unsupported version, otherwise `errorCode` naming the field path.
 */
export function parseResult(input: unknown, options: ParseResultOptions = {}): Result {
  const code = options.errorCode ?? CniErrorCode.DecodeFailure;
  const what = options.what ?? 'result';
  const r: FieldReader = new FieldReader(code, what);
  const obj =
    typeof input === 'string' || input instanceof Uint8Array
      ? decodeJsonObject(input, what, code)
      : r.object(input, '(root)');

  const declared = obj['cniVersion'];
  let cniVersion: CniVersion;
  if (declared === undefined || declared === null || declared === '') {
    if (options.defaultVersion === undefined) r.fail('cniVersion', 'is required');
    cniVersion = options.defaultVersion;
  } else if (isSupportedVersion(declared)) {
    cniVersion = declared;
  } else {
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      `${what}: unsupported cniVersion ${JSON.stringify(declared)}`,
    );
  }

  const out: Result = { cniVersion };
  const interfaces = r.optArray(obj, 'interfaces', '');
  if (interfaces !== undefined)
    out.interfaces = interfaces.map((v, i) => readInterface(r, v, join('interfaces', i)));
  const ips = r.optArray(obj, 'ips', '');
  if (ips !== undefined) {
    out.ips = ips.map((v, i) => readIp(r, v, join('ips', i), out.interfaces?.length));
  }
  const routes = r.optArray(obj, 'routes', '');
  if (routes !== undefined) out.routes = routes.map((v, i) => readRoute(r, v, join('routes', i)));
  const dns = r.optObject(obj, 'dns', '');
  if (dns !== undefined) {
    const d = readDns(r, dns, 'dns');
    if (Object.keys(d).length > 0) out.dns = d;
  }
  return out;
}

function readInterface(r: FieldReader, v: unknown, path: string): ResultInterface {
  const o = r.object(v, path);
  const out: ResultInterface = { name: r.string(o, 'name', path, { nonEmpty: true }) };
  const mac = r.optString(o, 'mac', path);
  if (mac !== undefined && mac !== '') out.mac = mac;
  const mtu = r.optUint(o, 'mtu', path);
  if (mtu !== undefined && mtu !== 0) out.mtu = mtu;
  const sandbox = r.optString(o, 'sandbox', path);
  if (sandbox !== undefined && sandbox !== '') out.sandbox = sandbox;
  const socketPath = r.optString(o, 'socketPath', path);
  if (socketPath !== undefined && socketPath !== '') out.socketPath = socketPath;
  const pciID = r.optString(o, 'pciID', path);
  if (pciID !== undefined && pciID !== '') out.pciID = pciID;
  return out;
}

function readIp(r: FieldReader, v: unknown, path: string, interfaceCount: number | undefined): ResultIp {
  const o = r.object(v, path);
  const address = r.string(o, 'address', path);
  const cidr = parseCidr(address);
  if (cidr === undefined) r.fail(join(path, 'address'), 'must be an address with a prefix length', address);
  const out: ResultIp = { address };
  const gateway = r.optString(o, 'gateway', path);
  if (gateway !== undefined && gateway !== '') {
    if (ipFamily(gateway) !== cidr.family)
      r.fail(join(path, 'gateway'), `must be an IPv${cidr.family} address`, gateway);
    out.gateway = gateway;
  }
  const index = r.optUint(o, 'interface', path);
  if (index !== undefined) {
    if (interfaceCount === undefined || index >= interfaceCount) {
      r.fail(join(path, 'interface'), `must index interfaces (${interfaceCount ?? 0} given)`, index);
    }
    out.interface = index;
  }
  const version = o['version'];
  if (version !== undefined && version !== null && version !== '') {
    if (version !== '4' && version !== '6') r.fail(join(path, 'version'), 'must be "4" or "6"', version);
    if (Number(version) !== cidr.family)
      r.fail(join(path, 'version'), `does not match address ${address}`, version);
  }
  return out;
}

function readRoute(r: FieldReader, v: unknown, path: string): ResultRoute {
  const o = r.object(v, path);
  const dst = r.string(o, 'dst', path);
  const cidr = parseCidr(dst);
  if (cidr === undefined) r.fail(join(path, 'dst'), 'must be a CIDR', dst);
  const out: ResultRoute = { dst };
  const gw = r.optString(o, 'gw', path);
  if (gw !== undefined && gw !== '') {
    if (ipFamily(gw) !== cidr.family) r.fail(join(path, 'gw'), `must be an IPv${cidr.family} address`, gw);
    out.gw = gw;
  }
  for (const key of ['mtu', 'advmss', 'priority', 'table', 'scope'] as const) {
    const n = r.optUint(o, key, path, key === 'scope' ? 255 : 0xffffffff);
    if (n !== undefined) out[key] = n;
  }
  return out;
}

/** Reads a DNS object (shared by results and network configurations). */
export function readDns(r: FieldReader, o: JsonObject, path: string): Dns {
  const out: Dns = {};
  const nameservers = r.optStringArray(o, 'nameservers', path);
  if (nameservers !== undefined && nameservers.length > 0) out.nameservers = nameservers;
  const domain = r.optString(o, 'domain', path);
  if (domain !== undefined && domain !== '') out.domain = domain;
  const search = r.optStringArray(o, 'search', path);
  if (search !== undefined && search.length > 0) out.search = search;
  const options = r.optStringArray(o, 'options', path);
  if (options !== undefined && options.length > 0) out.options = options;
  return out;
}
