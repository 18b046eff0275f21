/**
 * Kubeconfig files the way kubectl reads them: `KUBECONFIG` is a list separated by the platform's path delimiter
 * (`:`; `;` on Windows) with empty entries ignored, and the files are merged so that the first file to name a
 * cluster, user or context wins, as does the first non-empty `current-context`. Unlike kubectl, a listed file
 * that does not exist is refused rather than skipped (ADR 0036): a controller that acts on a whole cluster must
 * not quietly run with the credentials of whichever file happened to be there.
 *
 * Each file is read by `@kubernetes/client-node`'s `KubeConfig` loader (its relative paths made absolute against
 * the file's directory, as `loadFromFile` does); only the merge is done here, because the client's
 * `loadFromDefault` reads `process.env` itself, lets a later file's `current-context` win and throws on a name
 * two files share, where kubectl keeps the first.
 */
import { delimiter, dirname, resolve } from 'node:path';
import { type Cluster, type Context, KubeConfig, type User } from '@kubernetes/client-node';
import { isRegularFileError, readRegularFile } from '@vpc-cni-kit/regular-file';
import { load as loadYaml } from 'js-yaml';
import { KubeConfigError } from './config-error.js';
import { type CredentialRefresh, readCredential } from './credential-file.js';
import { FileSafeKubeConfig } from './file-safe-kube-config.js';

/**
 * The files a `KUBECONFIG` value lists, in order: split at `separator` (default: the platform's path delimiter),
 * empty entries dropped. An empty list means none (the caller then falls back, as kubectl does).
 */
export function kubeconfigList(value: string | undefined, separator: string = delimiter): string[] {
  return (value ?? '').split(separator).filter((file) => file !== '');
}

/**
 * Loads and merges kubeconfig `files` (at least one) as kubectl does: per name, the first file's cluster, user
 * and context win; the first non-empty `current-context` wins. The credential files the current context names
 * (`certificate-authority`, `client-certificate`, `client-key`) are read here, only as regular files, and then
 * re-read every `credentials.refreshMs` by the returned {@link FileSafeKubeConfig}, never by the client; a
 * user's `token-file` is read once at load (as client-node reads it), also only as a regular file. Throws a
 * {@link KubeConfigError} (`KubeconfigUnreadable`) naming the first file that cannot be read or parsed, or, when
 * the merged current context names no cluster with a server or a credential file it names cannot be read,
 * naming the list. Contacts nothing.
 */
export function loadKubeconfigFiles(
  files: readonly string[],
  credentials: CredentialRefresh = {},
): FileSafeKubeConfig {
  if (files.length === 0) throw new RangeError('loadKubeconfigFiles: no file given');
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext = '';
  for (const file of files) {
    const one = loadOne(file);
    for (const c of one.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.users) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    if (currentContext === '' && one.currentContext) currentContext = one.currentContext;
  }
  const config = new FileSafeKubeConfig(credentials);
  config.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  // The credential files first: the server check reads the current cluster, and with it its CA.
  const [failure] = config.readCredentialFiles();
  if (failure !== undefined)
    throw new KubeConfigError(
      'KubeconfigUnreadable',
      `${files.join(delimiter)}: ${failure.role} ${failure.message}`,
    );
  if (!config.getCurrentCluster()?.server)
    throw new KubeConfigError(
      'KubeconfigUnreadable',
      `${files.join(delimiter)}: its current context names no cluster with a server`,
    );
  return config;
}

/**
 * One file: read, checked to be a YAML mapping (an empty file is an empty kubeconfig, as kubectl reads it), then
 * through the client's loader, its relative paths made absolute against the file's directory. Any failure is a
 * {@link KubeConfigError} naming the file.
 */
function loadOne(file: string): KubeConfig {
  const unreadable = (why: string) => new KubeConfigError('KubeconfigUnreadable', `${file}: ${why}`);
  let text: string | undefined;
  let doc: unknown;
  try {
    // Only a regular file: a FIFO given as a kubeconfig would otherwise hold the start for ever.
    text = readRegularFile(file, 'utf8');
    // The parser the client uses, so that both read the file alike.
    if (text !== undefined) doc = loadYaml(text);
  } catch (e) {
    throw unreadable(whyUnreadable(e));
  }
  if (text === undefined) throw unreadable('ENOENT');
  const config = new KubeConfig();
  if (doc === undefined || doc === null) return config;
  // The client would read a scalar or a list as a kubeconfig with nothing in it: a file in a list that only
  // seemed to hold credentials would then be passed over without a word.
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw unreadable('not a kubeconfig (no YAML mapping with clusters, users and contexts)');
  try {
    // The client reads a user's token-file itself while loading, with a readFileSync that a FIFO would hold.
    config.loadFromString(withTokenFilesRead(doc as KubeconfigDocument, dirname(file)) ?? text);
  } catch (e) {
    if (e instanceof KubeConfigError) throw unreadable(e.message);
    throw unreadable(whyUnreadable(e));
  }
  config.makePathsAbsolute(dirname(file));
  return config;
}

/** The parts of a kubeconfig document {@link withTokenFilesRead} looks at. */
interface KubeconfigDocument {
  readonly users?: unknown;
}

/**
 * The document again as text (JSON, which is YAML) with each user's `token-file` read, only as a regular file,
 * into its `token` (a relative path against the kubeconfig's directory, as kubectl reads it), or `undefined` when
 * no user has one. A user with a `token` keeps it and its `token-file` is not read, as the client does. Throws a
 * {@link KubeConfigError} naming a token file that cannot be read.
 */
function withTokenFilesRead(doc: KubeconfigDocument, dir: string): string | undefined {
  if (!Array.isArray(doc.users)) return undefined;
  let read = false;
  const users = doc.users.map((entry: unknown) => {
    const user = (entry as { user?: Record<string, unknown> } | null)?.user;
    const file = user?.['token-file'];
    if (user === undefined || user === null || typeof file !== 'string' || user['token']) return entry;
    const content = readCredential('token', resolve(dir, file));
    if (!Buffer.isBuffer(content))
      throw new KubeConfigError('KubeconfigUnreadable', `token-file ${content.message}`);
    read = true;
    const { 'token-file': _, ...rest } = user;
    return { ...(entry as object), user: { ...rest, token: content.toString('utf8').trim() } };
  });
  return read ? JSON.stringify({ ...doc, users }) : undefined;
}

/** Why a file did not load, in a few words: its errno code (`ENOENT`, `EACCES`, `EISDIR`), else the first line. */
function whyUnreadable(e: unknown): string {
  if (isRegularFileError(e))
    return e.fileType !== undefined ? `a ${e.fileType}, not a regular file` : (e.errno ?? e.message);
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string') return code;
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}
