import { type Cluster, KubeConfig, type User } from '@kubernetes/client-node';
import { KubeConfigError } from './config-error.js';
import {
  CredentialFile,
  type CredentialFileFailure,
  type CredentialFileRole,
  type CredentialRefresh,
  readCredential,
} from './credential-file.js';

/** The token file of a user as client-node represents one (its `tokenFile` authenticator), if any. */
function tokenFileOf(user: User): string | undefined {
  const file = (user.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

/**
 * A client-node `KubeConfig` whose credential files are read by the controller, never by the client: the current
 * cluster's `caFile`, the current user's `certFile` and `keyFile`, and a `tokenFile` (the in-cluster ServiceAccount
 * token; a kubeconfig's `token-file` is read at load, see `loadKubeconfigFiles`). The client reads them on the
 * event loop with `readFileSync`, the CA and client certificate at every request and the token every 60 s, which a
 * FIFO at the path would hold for ever.
 *
 * Each file is read once by {@link FileSafeKubeConfig.readCredentialFiles} (at start: only regular files), then
 * held as a {@link CredentialFile} and re-read every `refreshMs`. Every request asks
 * {@link FileSafeKubeConfig.getCurrentCluster} and {@link FileSafeKubeConfig.getCurrentUser}, which answer with
 * the files' contents as data (`caData`, `certData`, `keyData`, `token`): a rotated file is used from the first
 * request after its re-read, and a file that turns into something else keeps the content read before.
 */
export class FileSafeKubeConfig extends KubeConfig {
  readonly #refresh: CredentialRefresh;
  readonly #files = new Map<string, CredentialFile>();

  /** @param refresh - how often the files are re-read and who hears of a re-read that was not used */
  constructor(refresh: CredentialRefresh = {}) {
    super();
    this.#refresh = refresh;
  }

  /** The credential files the current context names, in a fixed order: CA, client certificate, key, token. */
  #paths(): [CredentialFileRole, string][] {
    const cluster = super.getCurrentCluster();
    const user = super.getCurrentUser();
    const paths: [CredentialFileRole, string][] = [];
    if (cluster?.caFile) paths.push(['certificate-authority', cluster.caFile]);
    if (user?.certFile) paths.push(['client-certificate', user.certFile]);
    if (user?.keyFile) paths.push(['client-key', user.keyFile]);
    const token = user === null ? undefined : tokenFileOf(user);
    if (token !== undefined) paths.push(['token', token]);
    return paths;
  }

  /**
   * Reads every credential file the current context names that is not held yet, once, each only if it is a
   * regular file (an `open` that never waits, then `fstat`). Returns what could not be read, in the order CA,
   * client certificate, key, token (empty: all are held). Call it after loading and before the first request.
   */
  readCredentialFiles(): CredentialFileFailure[] {
    const failures: CredentialFileFailure[] = [];
    for (const [role, path] of this.#paths()) {
      if (this.#files.has(path)) continue;
      const read = readCredential(role, path);
      if (Buffer.isBuffer(read)) this.#files.set(path, new CredentialFile(role, path, read, this.#refresh));
      else failures.push(read);
    }
    return failures;
  }

  /** The held file at `path`; a context chosen after {@link FileSafeKubeConfig.readCredentialFiles} reads it now. */
  #file(role: CredentialFileRole, path: string): CredentialFile {
    const held = this.#files.get(path);
    if (held !== undefined) return held;
    const failure = this.readCredentialFiles().find((f) => f.path === path);
    const file = this.#files.get(path);
    if (file !== undefined) return file;
    throw new KubeConfigError('KubeconfigUnreadable', failure?.message ?? `${path}: no ${role} held`);
  }

  /** The current cluster, its `caFile` given as `caData`: the file's content as last read well. */
  override getCurrentCluster(): Cluster | null {
    const cluster = super.getCurrentCluster();
    if (!cluster?.caFile) return cluster;
    const { caFile, ...rest } = cluster;
    return { ...rest, caData: this.#file('certificate-authority', caFile).base64() };
  }

  /**
   * The current user, its `certFile`, `keyFile` and token file given as `certData`, `keyData` and `token`: each
   * file's content as last read well.
   */
  override getCurrentUser(): User | null {
    const user = super.getCurrentUser();
    if (user === null) return user;
    const tokenFile = tokenFileOf(user);
    if (!user.certFile && !user.keyFile && tokenFile === undefined) return user;
    const { certFile, keyFile, authProvider, ...rest } = user;
    return {
      ...rest,
      ...(certFile ? { certData: this.#file('client-certificate', certFile).base64() } : {}),
      ...(keyFile ? { keyData: this.#file('client-key', keyFile).base64() } : {}),
      ...(tokenFile === undefined ? { authProvider } : { token: this.#file('token', tokenFile).text() }),
    };
  }
}
