/**
 * Kubernetes' name rules the daemon's settings must meet: a label or annotation key (`ENI_CONFIG_LABEL_DEF`,
 * `ENI_CONFIG_ANNOTATION_DEF`) and a host name (`KUBERNETES_SERVICE_HOST`). A key the API server would never
 * store can never match, so a typo there would leave custom networking without an ENIConfig, silently.
 */

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Why `name` is not a lowercase RFC 1123 subdomain (dot-separated labels of `a-z`, `0-9` and `-`, each 1–63
 * characters starting and ending alphanumeric, 253 characters in all), or `undefined` when it is.
 */
export function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 253) return 'must be 1–253 characters';
  for (const label of name.split('.'))
    if (label.length > 63 || !LABEL.test(label))
      return `${JSON.stringify(label)} is not a DNS label (a-z, 0-9 and -, starting and ending alphanumeric, at most 63)`;
  return undefined;
}

/**
 * Why `key` is not a Kubernetes label or annotation key (`[prefix/]name`: the prefix a DNS subdomain, the name
 * 1–63 characters of alphanumerics, `-`, `_` and `.` starting and ending alphanumeric), or `undefined` when it is.
 */
export function qualifiedKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'must be [prefix/]name with at most one /';
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = dnsSubdomainProblem(parts[0]!);
    if (prefix !== undefined) return `prefix ${prefix}`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name))
    return `name part ${JSON.stringify(name)} must be 1–63 characters of A-Z, a-z, 0-9, -, _ and ., starting and ending alphanumeric`;
  return undefined;
}
