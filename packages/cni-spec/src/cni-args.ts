import { CniError } from './cni-error.js';
import { CniErrorCode } from './error-codes.js';

/** `CNI_ARGS` parsed. Kubernetes runtimes send the `K8S_POD_*` keys (in varying order). */
export interface CniArgs {
  /** `IgnoreUnknown=1|true`: the plugin should ignore keys it does not know. */
  ignoreUnknown: boolean;
  /** `K8S_POD_NAME` */
  podName?: string;
  /** `K8S_POD_NAMESPACE` */
  podNamespace?: string;
  /** `K8S_POD_INFRA_CONTAINER_ID` (the sandbox id) */
  podInfraContainerId?: string;
  /** `K8S_POD_UID` */
  podUid?: string;
  /** `IP`: a requested address, `ip[/prefix]`. */
  ip?: string;
  /** Every pair as given, in order. */
  values: Record<string, string>;
}

/** The keys {@link parseCniArgs} understands; a plugin may accept more through `known`. */
export const WELL_KNOWN_CNI_ARGS = [
  'IgnoreUnknown',
  'K8S_POD_NAME',
  'K8S_POD_NAMESPACE',
  'K8S_POD_INFRA_CONTAINER_ID',
  'K8S_POD_UID',
  'IP',
] as const;

/** Options for {@link parseCniArgs}. */
export interface ParseCniArgsOptions {
  /**
   * Extra keys the plugin accepts besides {@link WELL_KNOWN_CNI_ARGS}. When given, an unknown key is an
   * error unless `IgnoreUnknown` is set, as with the Go library's `LoadArgs`. When omitted, any key is kept.
   */
  known?: readonly string[];
}

/**
 * Parses `K1=V1;K2=V2`. An empty or missing string yields no values. A pair without exactly one `=` or with
 * an empty key is rejected, and so is a key given twice with different values (the Go library keeps the last;
 * which pod was meant cannot be told).
 *
 * @throws {@link CniError} code 4 (invalid environment) naming the offending pair or key.
 */
export function parseCniArgs(input: string | undefined, options: ParseCniArgsOptions = {}): CniArgs {
  const values: Record<string, string> = {};
  if (input !== undefined && input !== '') {
    for (const pair of input.split(';')) {
      if (pair === '') continue;
      const kv = pair.split('=');
      if (kv.length !== 2 || kv[0] === '') {
        throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_ARGS: invalid pair ${JSON.stringify(pair)}`);
      }
      const [key, value] = kv as [string, string];
      // The same pair twice is harmless; two values for one key leave the pod ambiguous.
      if (Object.hasOwn(values, key) && values[key] !== value) {
        throw new CniError(
          CniErrorCode.InvalidEnvironment,
          `CNI_ARGS: ${JSON.stringify(key)} given twice with different values`,
        );
      }
      values[key] = value;
    }
  }
  const ignore = values['IgnoreUnknown'];
  let ignoreUnknown = false;
  if (ignore !== undefined) {
    const v = ignore.toLowerCase();
    if (v === '1' || v === 'true') ignoreUnknown = true;
    else if (v !== '0' && v !== 'false') {
      throw new CniError(
        CniErrorCode.InvalidEnvironment,
        `CNI_ARGS: IgnoreUnknown must be 1, 0, true or false`,
        ignore,
      );
    }
  }
  if (options.known !== undefined && !ignoreUnknown) {
    const allowed = new Set<string>([...WELL_KNOWN_CNI_ARGS, ...options.known]);
    for (const key of Object.keys(values)) {
      if (!allowed.has(key)) {
        throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_ARGS: unknown key ${JSON.stringify(key)}`);
      }
    }
  }
  const out: CniArgs = { ignoreUnknown, values };
  if (values['K8S_POD_NAME']) out.podName = values['K8S_POD_NAME'];
  if (values['K8S_POD_NAMESPACE']) out.podNamespace = values['K8S_POD_NAMESPACE'];
  if (values['K8S_POD_INFRA_CONTAINER_ID']) out.podInfraContainerId = values['K8S_POD_INFRA_CONTAINER_ID'];
  if (values['K8S_POD_UID']) out.podUid = values['K8S_POD_UID'];
  if (values['IP']) out.ip = values['IP'];
  return out;
}

/** Formats values back into `CNI_ARGS` form (`K=V;K=V`), rejecting keys or values that would not round-trip. */
export function formatCniArgs(values: Readonly<Record<string, string>>): string {
  return Object.entries(values)
    .map(([k, v]) => {
      if (k === '' || /[;=]/.test(k) || /[;=]/.test(v)) {
        throw new CniError(
          CniErrorCode.InvalidEnvironment,
          `CNI_ARGS: cannot encode ${JSON.stringify(`${k}=${v}`)}`,
        );
      }
      return `${k}=${v}`;
    })
    .join(';');
}
