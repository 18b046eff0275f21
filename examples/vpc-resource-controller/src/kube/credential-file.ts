/**
 * A credential file the Kubernetes client needs again and again (the ServiceAccount token the kubelet rotates, the
 * cluster CA, a kubeconfig's client certificate and key), read by the controller rather than by the client.
 * `@kubernetes/client-node` 1.4 reads these with a plain `readFileSync` on the event loop (the token every 60 s,
 * the CA and client certificate at every request), so a FIFO swapped in after start froze the whole process:
 * probes, Lease renewals and webhooks. Here each read is `readRegularFile` (an `open` that never waits, then
 * `fstat`), and a re-read that finds no regular file keeps the content read before (ADR 0041).
 */
import { isRegularFileError, readRegularFile } from '@vpc-cni-kit/regular-file';

/** What a credential file is to the client; also the `file` label of the refusal counter. */
export type CredentialFileRole = 'token' | 'certificate-authority' | 'client-certificate' | 'client-key';

/**
 * What a re-read came to when it was not simply a new (or the same) content: `kept` (the file is missing, not a
 * regular file, or unreadable; the content read before stays in use; `first` is true for the first re-read that
 * found this `problem`, false while it persists), or `recovered` (the file reads well again after `kept`).
 */
export type CredentialFileEvent =
  | {
      readonly kind: 'kept';
      readonly role: CredentialFileRole;
      readonly path: string;
      /** One line naming the path and what is wrong (`… is a FIFO, not a regular file`). */
      readonly problem: string;
      readonly first: boolean;
    }
  | { readonly kind: 'recovered'; readonly role: CredentialFileRole; readonly path: string };

/** How credential files are re-read. */
export interface CredentialRefresh {
  /**
   * How long a content read is used before its file is read again. The default is the period client-node and
   * client-go re-read a token file at: a projected ServiceAccount token is rewritten by the kubelet well before it
   * expires, so a minute late is never too late. @defaultValue 60000
   */
  readonly refreshMs?: number | undefined;
  /** Told of every re-read whose content was not used, and of a file that reads well again. */
  readonly onEvent?: ((event: CredentialFileEvent) => void) | undefined;
  /** The clock, in milliseconds. @defaultValue `Date.now` */
  readonly now?: (() => number) | undefined;
}

/** The default of {@link CredentialRefresh.refreshMs}. */
export const CREDENTIAL_REFRESH_MS = 60_000;

/** Why a credential file could not be read at all (nothing read before to fall back on). */
export interface CredentialFileFailure {
  /** What the file is to the client. */
  readonly role: CredentialFileRole;
  /** The path. */
  readonly path: string;
  /** `Missing`, or the reader's code: `NotRegularFile` (see `fileType`) or `ReadFailed` (see `errno`). */
  readonly code: 'Missing' | 'NotRegularFile' | 'ReadFailed';
  /** `NotRegularFile`: what is there (`FIFO`, `directory`, …). */
  readonly fileType?: string | undefined;
  /** `ReadFailed`: the errno code (`EACCES`, …). */
  readonly errno?: string | undefined;
  /** One line naming the path. */
  readonly message: string;
}

/**
 * Reads `path` once, only a regular file: its content, or why not. Never waits on what is at the path.
 */
export function readCredential(role: CredentialFileRole, path: string): Buffer | CredentialFileFailure {
  try {
    const content = readRegularFile(path);
    if (content !== undefined) return content;
    return { role, path, code: 'Missing', message: `${path} is missing` };
  } catch (e) {
    if (!isRegularFileError(e)) throw e;
    return {
      role,
      path,
      code: e.code === 'NotRegularFile' ? 'NotRegularFile' : 'ReadFailed',
      fileType: e.fileType,
      errno: e.errno,
      message: e.message,
    };
  }
}

/**
 * One credential file and the last content read from it well. {@link CredentialFile.content} re-reads the file
 * when the content is older than `refreshMs` (so a rotated token or CA is picked up within that period); a re-read
 * that finds the file missing, not regular or unreadable keeps the content in hand and is reported (`kept`), then
 * tried again after another `refreshMs`, never sooner: a file that stays bad costs one `open` and one report a
 * period.
 */
export class CredentialFile {
  /** What the file is to the client. */
  readonly role: CredentialFileRole;
  /** Where it is. */
  readonly path: string;
  readonly #refresh: CredentialRefresh;
  #content: Buffer;
  #base64: string | undefined;
  #readAt: number;
  #problem: string | undefined;

  /**
   * @param first - the content read at start (by {@link readCredential})
   */
  constructor(role: CredentialFileRole, path: string, first: Buffer, refresh: CredentialRefresh = {}) {
    this.role = role;
    this.path = path;
    this.#refresh = refresh;
    this.#content = first;
    this.#readAt = this.#now();
  }

  #now(): number {
    return (this.#refresh.now ?? Date.now)();
  }

  /** The content to use now: the file's, re-read when the last read is older than `refreshMs`. */
  content(): Buffer {
    const now = this.#now();
    if (now - this.#readAt < (this.#refresh.refreshMs ?? CREDENTIAL_REFRESH_MS)) return this.#content;
    this.#readAt = now;
    const read = readCredential(this.role, this.path);
    if (Buffer.isBuffer(read)) {
      if (!read.equals(this.#content)) {
        this.#content = read;
        this.#base64 = undefined;
      }
      if (this.#problem !== undefined) {
        this.#problem = undefined;
        this.#refresh.onEvent?.({ kind: 'recovered', role: this.role, path: this.path });
      }
    } else {
      const first = this.#problem !== read.message;
      this.#problem = read.message;
      this.#refresh.onEvent?.({
        kind: 'kept',
        role: this.role,
        path: this.path,
        problem: read.message,
        first,
      });
    }
    return this.#content;
  }

  /** {@link CredentialFile.content} in base64 (the client's `caData`, `certData`, `keyData`). */
  base64(): string {
    const content = this.content();
    this.#base64 ??= content.toString('base64');
    return this.#base64;
  }

  /** {@link CredentialFile.content} as text without surrounding white space (a bearer token, as client-go reads it). */
  text(): string {
    return this.content().toString('utf8').trim();
  }
}
