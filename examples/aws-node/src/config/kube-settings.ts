import { isIPv4, isIPv6 } from '@vpc-cni-kit/cni-spec';
import type { EnvReader } from './env-reader.js';
import { dnsSubdomainProblem } from './kube-names.js';

/** Where the Kubernetes API is and who this daemon is in it (the reference's in-cluster configuration). */
export interface KubeSettings {
  /**
   * API server URL: `CLUSTER_ENDPOINT` when set, else `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`;
   * undefined when neither is set (not in a cluster: the Kubernetes features stay off).
   */
  apiServer: string | undefined;
  /** Directory with the ServiceAccount `token` and `ca.crt` (`AWS_NODE_SERVICE_ACCOUNT_DIR`, this daemon's own). */
  serviceAccountDir: string;
  /** `MY_NODE_NAME` (the downward API's spec.nodeName). */
  nodeName: string;
  /** `MY_POD_NAME` (the daemon's own pod, which Events are about). */
  podName: string;
  /** `MY_POD_NAMESPACE` (default kube-system, where the reference runs). */
  podNamespace: string;
  /** `ANNOTATE_POD_IP`: write `vpc.amazonaws.com/pod-ips` on each pod after ADD. */
  annotatePodIp: boolean;
}

/** The ServiceAccount directory every pod gets. */
export const IN_CLUSTER_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Reads the Kubernetes settings; problems go to `r` (so every invalid variable is named at once). */
export function readKubeSettings(r: EnvReader): KubeSettings {
  const endpoint = r.raw('CLUSTER_ENDPOINT');
  const host = r.raw('KUBERNETES_SERVICE_HOST');
  const port = r.raw('KUBERNETES_SERVICE_PORT') ?? '443';
  let apiServer: string | undefined;
  if (endpoint !== undefined && endpoint !== '') {
    if (!/^https:\/\/[^\s/]+(\/.*)?$/.test(endpoint)) r.problem('CLUSTER_ENDPOINT', 'must be an https URL');
    apiServer = endpoint.replace(/\/+$/, '');
  } else if (host !== undefined && host !== '') {
    if (!isIPv4(host) && !isIPv6(host) && dnsSubdomainProblem(host.toLowerCase()) !== undefined)
      r.problem('KUBERNETES_SERVICE_HOST', 'must be an IPv4 address, an IPv6 address or a DNS name');
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
      r.problem('KUBERNETES_SERVICE_PORT', 'must be a port number');
    apiServer = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
  const nodeName = r.string('MY_NODE_NAME', '');
  const annotatePodIp = r.bool('ANNOTATE_POD_IP', false);
  if (annotatePodIp && apiServer === undefined)
    r.problem('ANNOTATE_POD_IP', 'needs the Kubernetes API (KUBERNETES_SERVICE_HOST or CLUSTER_ENDPOINT)');
  if (apiServer !== undefined && nodeName === '')
    r.problem(
      'MY_NODE_NAME',
      'must name this node when the Kubernetes API is configured (fieldRef spec.nodeName)',
    );
  return {
    apiServer,
    serviceAccountDir: r.string('AWS_NODE_SERVICE_ACCOUNT_DIR', IN_CLUSTER_SERVICE_ACCOUNT_DIR),
    nodeName,
    podName: r.string('MY_POD_NAME', ''),
    podNamespace: r.string('MY_POD_NAMESPACE', 'kube-system'),
    annotatePodIp,
  };
}
