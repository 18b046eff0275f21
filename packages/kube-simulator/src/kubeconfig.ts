/** What a kubeconfig names. */
export interface KubeconfigSpec {
  /** API server URL. */
  readonly server: string;
  /** Bearer token. */
  readonly token: string;
  /** PEM CA certificate for https servers. */
  readonly caPem?: string;
  /** Plain http: marks the cluster `insecure-skip-tls-verify` (client-node refuses http otherwise). */
  readonly insecure?: boolean;
  /** Cluster, user and context name. */
  readonly name?: string;
  /** Default namespace of the context. */
  readonly namespace?: string;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** Renders a kubeconfig (YAML) that kubectl and @kubernetes/client-node read as they are. */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  const name = spec.name ?? 'kube-sim';
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${quote(name)}`,
    '  cluster:',
    `    server: ${quote(spec.server)}`,
  ];
  if (spec.caPem) lines.push(`    certificate-authority-data: ${Buffer.from(spec.caPem).toString('base64')}`);
  if (spec.insecure) lines.push('    insecure-skip-tls-verify: true');
  lines.push(
    'users:',
    `- name: ${quote(name)}`,
    '  user:',
    `    token: ${quote(spec.token)}`,
    'contexts:',
    `- name: ${quote(name)}`,
    '  context:',
    `    cluster: ${quote(name)}`,
    `    user: ${quote(name)}`,
  );
  if (spec.namespace) lines.push(`    namespace: ${quote(spec.namespace)}`);
  lines.push(`current-context: ${quote(name)}`, 'preferences: {}', '');
  return lines.join('\n');
}
