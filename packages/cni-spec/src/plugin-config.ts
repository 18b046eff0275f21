import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import { decodeJsonObject, FieldReader, identifierRe, type JsonObject, join } from './internal/fields.js';
import { parseResult, readDns } from './parse-result.js';
import type { Dns, Result } from './result.js';
import { parseRuntimeConfig, type RuntimeConfig } from './runtime-config.js';
import { type CniVersion, isSupportedVersion, SUPPORTED_VERSIONS } from './versions.js';

/** An attachment named in a GC request's `cni.dev/valid-attachments`. */
export interface Attachment {
  containerID: string;
  ifname: string;
}

/** The `ipam` section of a plugin configuration: a delegated plugin `type` plus its own keys. */
export interface IpamConfig extends JsonObject {
  type: string;
}

/** The configuration a plugin receives on stdin, validated. Plugin-specific keys stay in `raw`. */
export interface PluginConfig {
  cniVersion: CniVersion;
  name: string;
  type: string;
  capabilities?: Record<string, boolean>;
  runtimeConfig?: RuntimeConfig;
  args?: JsonObject;
  ipMasq?: boolean;
  ipam?: IpamConfig;
  dns?: Dns;
  /** The previous plugin's (ADD) or cached (CHECK, DEL) result, in its own declared version. */
  prevResult?: Result;
  /** GC only: `cni.dev/valid-attachments` (or the older `cni.dev/attachments`). */
  validAttachments?: Attachment[];
  /** The whole request object as received. */
  raw: JsonObject;
}

/** Options for {@link parsePluginConfig}. */
export interface ParsePluginConfigOptions {
  /** Versions the plugin accepts; default all of {@link SUPPORTED_VERSIONS}. */
  supportedVersions?: readonly CniVersion[];
}

/**
 * Parses and validates a plugin's stdin. Tolerates what real runtimes send: `capabilities` left in by libcni,
 * PascalCase `runtimeConfig` members from containerd, `null` annotations, unknown `cni.dev/*` keys.
 *
 * @throws {@link CniError} 6 for bytes that are not a JSON object, 1 for a version the plugin does not
 * support, 7 naming the field path of anything invalid.
 */
export function parsePluginConfig(
  input: string | Uint8Array | JsonObject,
  options: ParsePluginConfigOptions = {},
): PluginConfig {
  const raw =
    typeof input === 'string' || input instanceof Uint8Array
      ? decodeJsonObject(input, 'network config', CniErrorCode.DecodeFailure)
      : input;
  const r: FieldReader = new FieldReader(CniErrorCode.InvalidNetworkConfig, 'invalid network config');
  const supported = options.supportedVersions ?? SUPPORTED_VERSIONS;

  const version = raw['cniVersion'];
  if (typeof version !== 'string' || version === '') {
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      'incompatible CNI versions',
      'config has no cniVersion (0.1.0 is not supported)',
    );
  }
  if (!isSupportedVersion(version) || !supported.includes(version)) {
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      'incompatible CNI versions',
      `config is ${JSON.stringify(version)}, plugin supports ${JSON.stringify(supported)}`,
    );
  }
  const name = r.string(raw, 'name', '', { nonEmpty: true });
  if (!identifierRe.test(name)) r.fail('name', 'invalid characters found in network name', name);
  const type = r.string(raw, 'type', '', { nonEmpty: true });
  if (type.includes('/')) r.fail('type', 'must be a plugin name, not a path', type);

  const out: PluginConfig = { cniVersion: version, name, type, raw };
  const caps = r.optObject(raw, 'capabilities', '');
  if (caps !== undefined) out.capabilities = boolMap(r, caps, 'capabilities');
  if (raw['runtimeConfig'] !== undefined && raw['runtimeConfig'] !== null) {
    out.runtimeConfig = parseRuntimeConfig(raw['runtimeConfig']);
  }
  const args = r.optObject(raw, 'args', '');
  if (args !== undefined) out.args = args;
  const ipMasq = r.optBool(raw, 'ipMasq', '');
  if (ipMasq !== undefined) out.ipMasq = ipMasq;
  const ipam = r.optObject(raw, 'ipam', '');
  if (ipam !== undefined && Object.keys(ipam).length > 0) {
    const ipamType = r.string(ipam, 'type', 'ipam', { nonEmpty: true });
    if (ipamType.includes('/')) r.fail('ipam.type', 'must be a plugin name, not a path', ipamType);
    out.ipam = { ...ipam, type: ipamType };
  }
  const dns = r.optObject(raw, 'dns', '');
  if (dns !== undefined) {
    const d = readDns(r, dns, 'dns');
    if (Object.keys(d).length > 0) out.dns = d;
  }
  if (raw['prevResult'] !== undefined && raw['prevResult'] !== null) {
    out.prevResult = parseResult(raw['prevResult'], {
      defaultVersion: version,
      errorCode: CniErrorCode.InvalidNetworkConfig,
      what: 'invalid network config: prevResult',
    });
  }
  const attachments = raw['cni.dev/valid-attachments'] ?? raw['cni.dev/attachments'];
  if (attachments !== undefined && attachments !== null) {
    const key =
      raw['cni.dev/valid-attachments'] !== undefined ? 'cni.dev/valid-attachments' : 'cni.dev/attachments';
    if (!Array.isArray(attachments)) r.fail(key, 'must be an array', attachments);
    out.validAttachments = attachments.map((a, i) => {
      const o = r.object(a, join(key, i));
      return {
        containerID: r.string(o, 'containerID', join(key, i), { nonEmpty: true }),
        ifname: r.string(o, 'ifname', join(key, i), { nonEmpty: true }),
      };
    });
  }
  return out;
}

function boolMap(r: FieldReader, o: JsonObject, path: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'boolean') r.fail(join(path, k), 'must be a boolean', v);
    out[k] = v;
  }
  return out;
}
