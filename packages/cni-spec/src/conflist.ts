import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';
import { decodeJsonObject, FieldReader, identifierRe, type JsonObject, join } from './internal/fields.js';
import { type CniVersion, compareVersions, isSupportedVersion } from './versions.js';

/** One plugin entry of a network configuration list. */
export interface ConfListPlugin {
  type: string;
  capabilities?: Record<string, boolean>;
  /** The whole plugin object as written. */
  raw: JsonObject;
}

/** A network configuration list (`.conflist`), validated. */
export interface NetworkConfigList {
  /** The version requests are made in: the highest supported of `cniVersion` and `cniVersions`. */
  cniVersion: CniVersion;
  /** `cniVersions` (1.1.0) as written. */
  cniVersions?: string[];
  name: string;
  disableCheck: boolean;
  disableGC: boolean;
  loadOnlyInlinedPlugins: boolean;
  plugins: ConfListPlugin[];
  raw: JsonObject;
}

/** Options for {@link parseConfList}. */
export interface ParseConfListOptions {
  /** Accept a single-plugin configuration (a `.conf`) and lift it into a one-plugin list, as libcni does. */
  allowSingle?: boolean;
}

/**
 * Parses and validates a conflist. Booleans accept `"true"`/`"false"` strings as libcni does.
 *
 * @throws {@link CniError} 6 for bytes that are not a JSON object, 1 when no listed version is supported,
 * 7 naming the field path of anything invalid.
 */
export function parseConfList(
  input: string | Uint8Array | JsonObject,
  options: ParseConfListOptions = {},
): NetworkConfigList {
  let raw =
    typeof input === 'string' || input instanceof Uint8Array
      ? decodeJsonObject(input, 'network config list', CniErrorCode.DecodeFailure)
      : input;
  const r: FieldReader = new FieldReader(CniErrorCode.InvalidNetworkConfig, 'invalid network config list');

  if (raw['plugins'] === undefined && options.allowSingle && typeof raw['type'] === 'string') {
    const { cniVersion, name, ...plugin } = raw;
    raw = { cniVersion, name, plugins: [plugin] };
  }

  const declared: string[] = [];
  const v = r.optString(raw, 'cniVersion', '');
  if (v !== undefined && v !== '') declared.push(v);
  const many = r.optStringArray(raw, 'cniVersions', '');
  if (many !== undefined) declared.push(...many);
  const usable = declared.filter(isSupportedVersion).sort(compareVersions);
  const cniVersion = usable.at(-1);
  if (cniVersion === undefined) {
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      'incompatible CNI versions',
      declared.length === 0
        ? 'the list declares no cniVersion'
        : `no supported version among ${JSON.stringify(declared)}`,
    );
  }
  const name = r.string(raw, 'name', '', { nonEmpty: true });
  if (!identifierRe.test(name)) r.fail('name', 'invalid characters found in network name', name);

  const plugins = r.optArray(raw, 'plugins', '');
  if (plugins === undefined || plugins.length === 0) r.fail('plugins', 'must list at least one plugin');
  const out: NetworkConfigList = {
    cniVersion,
    name,
    disableCheck: r.optBool(raw, 'disableCheck', '', true) ?? false,
    disableGC: r.optBool(raw, 'disableGC', '', true) ?? false,
    loadOnlyInlinedPlugins: r.optBool(raw, 'loadOnlyInlinedPlugins', '', true) ?? false,
    plugins: plugins.map((p, i) => {
      const path = join('plugins', i);
      const o = r.object(p, path);
      const type = r.string(o, 'type', path, { nonEmpty: true });
      if (type.includes('/')) r.fail(join(path, 'type'), 'must be a plugin name, not a path', type);
      const entry: ConfListPlugin = { type, raw: o };
      const caps = r.optObject(o, 'capabilities', path);
      if (caps !== undefined) {
        const map: Record<string, boolean> = {};
        for (const [k, b] of Object.entries(caps)) {
          if (typeof b !== 'boolean') r.fail(join(join(path, 'capabilities'), k), 'must be a boolean', b);
          map[k] = b;
        }
        entry.capabilities = map;
      }
      return entry;
    }),
    raw,
  };
  if (many !== undefined) out.cniVersions = many;
  return out;
}
