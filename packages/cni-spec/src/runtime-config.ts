import { CniErrorCode } from './error-codes.js';
import { FieldReader, type JsonObject, join } from './internal/fields.js';

/** One `portMappings` entry (the `portMappings` capability). */
export interface PortMapping {
  hostPort: number;
  containerPort: number;
  /** Lower-case: `tcp`, `udp` or `sctp`. */
  protocol: string;
  hostIP?: string;
}

/** The `bandwidth` capability: rates in bits per second, bursts in bits. */
export interface BandwidthLimits {
  ingressRate?: number;
  ingressBurst?: number;
  egressRate?: number;
  egressBurst?: number;
}

/** The `dns` capability. */
export interface RuntimeDns {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

/**
 * `runtimeConfig` normalised. Keys are matched case-insensitively because containerd (go-cni) sends
 * `portMappings` and `bandwidth` members in PascalCase (`HostPort`, `IngressRate`) while the conventions
 * document camelCase.
 */
export interface RuntimeConfig {
  portMappings?: PortMapping[];
  bandwidth?: BandwidthLimits;
  ips?: string[];
  mac?: string;
  dns?: RuntimeDns;
  /** `io.kubernetes.cri.pod-annotations`; containerd sends `null` for a pod without annotations (→ `{}`). */
  podAnnotations?: Record<string, string>;
  /** Every key exactly as the runtime sent it, for capabilities not modelled here. */
  raw: JsonObject;
}

/** The capability key containerd uses for pod annotations. */
export const POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Looks a key up exactly, then case-insensitively. */
function pick(o: JsonObject, key: string): unknown {
  if (key in o) return o[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

/**
 * Validates and normalises a request's `runtimeConfig`.
 *
 * @throws {@link CniError} code 7 naming the path of a malformed member.
 */
export function parseRuntimeConfig(value: unknown, path = 'runtimeConfig'): RuntimeConfig {
  const r: FieldReader = new FieldReader(CniErrorCode.InvalidNetworkConfig, 'invalid network config');
  const o = r.object(value, path);
  const out: RuntimeConfig = { raw: o };

  const ports = pick(o, 'portMappings');
  if (ports !== undefined && ports !== null) {
    const p = join(path, 'portMappings');
    if (!Array.isArray(ports)) r.fail(p, 'must be an array', ports);
    out.portMappings = ports.map((entry, i) => readPortMapping(r, entry, join(p, i)));
  }
  const bw = pick(o, 'bandwidth');
  if (bw !== undefined && bw !== null) {
    const p = join(path, 'bandwidth');
    const b = r.object(bw, p);
    const limits: BandwidthLimits = {};
    for (const key of ['ingressRate', 'ingressBurst', 'egressRate', 'egressBurst'] as const) {
      const n = uint(r, pick(b, key), join(p, key));
      if (n !== undefined) limits[key] = n;
    }
    out.bandwidth = limits;
  }
  const ips = pick(o, 'ips');
  if (ips !== undefined && ips !== null) out.ips = stringArray(r, ips, join(path, 'ips'));
  const mac = pick(o, 'mac');
  if (mac !== undefined && mac !== null) {
    if (typeof mac !== 'string' || !/^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$/.test(mac)) {
      r.fail(join(path, 'mac'), 'must be a MAC address like c2:11:22:33:44:55', mac);
    }
    out.mac = mac.toLowerCase();
  }
  const dns = pick(o, 'dns');
  if (dns !== undefined && dns !== null) {
    const p = join(path, 'dns');
    const d = r.object(dns, p);
    const rd: RuntimeDns = {};
    for (const key of ['servers', 'searches', 'options'] as const) {
      const v = pick(d, key);
      if (v !== undefined && v !== null) rd[key] = stringArray(r, v, join(p, key));
    }
    out.dns = rd;
  }
  if (POD_ANNOTATIONS_CAPABILITY in o) {
    const a = o[POD_ANNOTATIONS_CAPABILITY];
    const p = join(path, POD_ANNOTATIONS_CAPABILITY);
    const annotations: Record<string, string> = {};
    if (a !== null && a !== undefined) {
      for (const [k, v] of Object.entries(r.object(a, p))) {
        if (typeof v !== 'string') r.fail(join(p, k), 'must be a string', v);
        annotations[k] = v;
      }
    }
    out.podAnnotations = annotations;
  }
  return out;
}

function readPortMapping(r: FieldReader, entry: unknown, path: string): PortMapping {
  const o = r.object(entry, path);
  const hostPort = uint(r, pick(o, 'hostPort'), join(path, 'hostPort'), 65535);
  const containerPort = uint(r, pick(o, 'containerPort'), join(path, 'containerPort'), 65535);
  if (hostPort === undefined) r.fail(join(path, 'hostPort'), 'is required');
  if (containerPort === undefined) r.fail(join(path, 'containerPort'), 'is required');
  const protocolRaw = pick(o, 'protocol');
  let protocol = 'tcp';
  if (protocolRaw !== undefined && protocolRaw !== null && protocolRaw !== '') {
    if (typeof protocolRaw !== 'string' || !/^(tcp|udp|sctp)$/i.test(protocolRaw)) {
      r.fail(join(path, 'protocol'), 'must be tcp, udp or sctp', protocolRaw);
    }
    protocol = protocolRaw.toLowerCase();
  }
  const out: PortMapping = { hostPort, containerPort, protocol };
  const hostIP = pick(o, 'hostIP');
  if (typeof hostIP === 'string' && hostIP !== '') out.hostIP = hostIP;
  else if (hostIP !== undefined && hostIP !== null && hostIP !== '')
    r.fail(join(path, 'hostIP'), 'must be a string', hostIP);
  return out;
}

function uint(r: FieldReader, v: unknown, path: string, max = MAX_SAFE): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    r.fail(path, `must be an integer from 0 to ${max}`, v);
  }
  return v;
}

function stringArray(r: FieldReader, v: unknown, path: string): string[] {
  if (!Array.isArray(v)) r.fail(path, 'must be an array of strings', v);
  return v.map((x, i) => {
    if (typeof x !== 'string') r.fail(join(path, i), 'must be a string', x);
    return x;
  });
}
