import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { isRegularFileError, readRegularFile } from '@vpc-cni-kit/regular-file';
import type { KubeSettings } from '../config/kube-settings.js';

/** The API server and the credentials to use, read from the ServiceAccount directory. */
export interface InClusterTarget {
  /** API server URL. */
  readonly server: string;
  /** Path of the bearer token file (re-read by the client: projected tokens rotate). */
  readonly tokenFile: string;
  /** PEM CA bundle that signs the API server's certificate. */
  readonly caPem: string;
}

/** Why the Kubernetes API cannot be used at all. */
export type NotInCluster = { readonly reason: string };

/**
 * Resolves the in-cluster target the way the reference's REST config does: `CLUSTER_ENDPOINT` or the
 * `KUBERNETES_SERVICE_*` address, the ServiceAccount token file and `ca.crt` (which must hold PEM certificates
 * that parse). Missing or unusable files are a reason, never an exception: the daemon then runs without its
 * Kubernetes features, and refuses to start when a setting needs them (naming the reason). Only regular files
 * are read: a FIFO (or a device, a socket, a directory) in place of either is named as what it is, at once,
 * where a plain read of a FIFO would wait for a writer and hold the start for ever.
 */
export async function resolveInCluster(s: KubeSettings): Promise<InClusterTarget | NotInCluster> {
  if (s.apiServer === undefined)
    return { reason: 'not in a cluster (KUBERNETES_SERVICE_HOST and CLUSTER_ENDPOINT unset)' };
  const tokenFile = join(s.serviceAccountDir, 'token');
  const caFile = join(s.serviceAccountDir, 'ca.crt');
  let caPem: string | undefined;
  try {
    if (readRegularFile(tokenFile) !== undefined) caPem = readRegularFile(caFile, 'utf8');
  } catch (e) {
    if (isRegularFileError(e) && e.fileType !== undefined)
      return { reason: `ServiceAccount ${e.path} is a ${e.fileType}, not a regular file` };
    return { reason: `ServiceAccount credentials unreadable in ${s.serviceAccountDir}: ${whyUnreadable(e)}` };
  }
  if (caPem === undefined)
    return { reason: `ServiceAccount credentials unreadable in ${s.serviceAccountDir}: ENOENT` };
  const caProblem = pemCertificatesProblem(caPem);
  if (caProblem !== undefined)
    return { reason: `ServiceAccount ca.crt in ${s.serviceAccountDir} ${caProblem}` };
  return { server: s.apiServer, tokenFile, caPem };
}

/**
 * Why a ServiceAccount file could not be read, as the end of a sentence: the errno (`EACCES`), or what is there
 * when it is not a regular file (`a FIFO, not a regular file`).
 */
export function whyUnreadable(error: unknown): string {
  if (!isRegularFileError(error)) return String(error);
  if (error.fileType !== undefined) return `a ${error.fileType}, not a regular file`;
  return error.errno ?? error.message;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Why `text` is not a bundle of PEM certificates (at least one, each one parsing), or `undefined` when it is: a
 * CA file that is not would fail every TLS handshake later, for a reason much further from its cause.
 */
export function pemCertificatesProblem(text: string): string | undefined {
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (e) {
      return `holds a certificate that does not parse (number ${i + 1}: ${e instanceof Error ? e.message : String(e)})`;
    }
  }
  return undefined;
}
